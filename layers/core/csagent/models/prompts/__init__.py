"""Versioned prompt files and their loader.

Each prompt is a Markdown file `<name>.v<N>.md` beside this module:

    ---
    name: router
    version: 1
    role: router            # a `Role` value, or "any" for prompts every role uses (repair)
    variables: [message, clauses, intents]
    ---
    ## system
    ...text with {{message}} placeholders...
    ## user
    ...

`load_prompt(name)` returns the highest version (a given `version` pins one); the file is
checked when it is loaded (front matter, sections, placeholders exactly the declared variables),
so a broken prompt fails the first test that loads it, not a customer's turn.
`Prompt.render(**variables)` fills every placeholder and returns the chat messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from csagent.models.roles import Role

if TYPE_CHECKING:  # pragma: no cover - typing only
    from langchain_core.messages import BaseMessage

_FILE_RE = re.compile(r"(?P<name>[a-z][a-z0-9_]*)\.v(?P<version>\d+)\.md")
_FRONT_RE = re.compile(r"\A---\n(?P<front>.*?)\n---\n(?P<body>.*)\Z", re.DOTALL)
_SECTION_RE = re.compile(r"^## (system|user)[ \t]*$", re.MULTILINE)
_PLACEHOLDER_RE = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True)
class Prompt:
    """One version of one prompt: front matter plus a system and a user template."""

    name: str
    version: str
    role: Role | None
    variables: tuple[str, ...]
    system: str
    user: str

    def render_text(self, **variables: Any) -> tuple[str, str]:
        """The filled system and user text (every declared variable given, no other)."""
        unknown = sorted(set(variables) - set(self.variables))
        missing = [v for v in self.variables if v not in variables]
        if unknown or missing:
            raise KeyError(f"prompt {self.name}.v{self.version}: missing variables {missing}, "
                           f"unknown variables {unknown}")
        values = {k: "" if v is None else str(v) for k, v in variables.items()}

        def fill(text: str) -> str:
            return _PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], text)

        return fill(self.system), fill(self.user)

    def render(self, **variables: Any) -> list[BaseMessage]:
        """The chat messages: a system message (when the prompt has one) and the user message."""
        from langchain_core.messages import HumanMessage, SystemMessage

        system, user = self.render_text(**variables)
        messages: list[BaseMessage] = [SystemMessage(system)] if system else []
        return [*messages, HumanMessage(user)]


def _parse_front(front: str, source: str) -> dict[str, Any]:
    from csagent import yamlio

    data = yamlio.safe_load(front)
    if not isinstance(data, dict):
        raise ValueError(f"{source}: the front matter must be a mapping")
    for key in ("name", "version", "role", "variables"):
        if key not in data:
            raise ValueError(f"{source}: the front matter has no {key!r}")
    return data


def _sections(body: str, source: str) -> dict[str, str]:
    parts = _SECTION_RE.split(body)
    if parts[0].strip():
        raise ValueError(f"{source}: text before the first '## system' / '## user' heading")
    sections = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    if "user" not in sections:
        raise ValueError(f"{source}: no '## user' section")
    return sections


def parse_prompt(text: str, source: str = "<prompt>") -> Prompt:
    """A prompt from a file's text; raises ValueError saying exactly what is wrong."""
    match = _FRONT_RE.match(text.replace("\r\n", "\n"))
    if match is None:
        raise ValueError(f"{source}: a prompt file starts with '---' front matter")
    data = _parse_front(match.group("front"), source)
    sections = _sections(match.group("body"), source)
    variables = tuple(str(v) for v in data["variables"] or ())
    used = set(_PLACEHOLDER_RE.findall(sections.get("system", "") + "\n" + sections["user"]))
    if used != set(variables):
        raise ValueError(f"{source}: placeholders {sorted(used)} differ from the declared variables "
                         f"{sorted(variables)}")
    role = None if data["role"] in (None, "any") else Role(data["role"])
    return Prompt(name=str(data["name"]), version=str(data["version"]), role=role, variables=variables,
                  system=sections.get("system", ""), user=sections["user"])


def available() -> dict[str, list[str]]:
    """Every prompt name with its versions, lowest first."""
    found: dict[str, list[int]] = {}
    for entry in resources.files(__name__).iterdir():
        match = _FILE_RE.fullmatch(entry.name)
        if match:
            found.setdefault(match.group("name"), []).append(int(match.group("version")))
    return {name: [str(v) for v in sorted(versions)] for name, versions in sorted(found.items())}


@lru_cache(maxsize=64)
def load_prompt(name: str, version: str | None = None) -> Prompt:
    """The prompt `name` at `version` (the latest by default), checked."""
    versions = available().get(name)
    if not versions:
        raise KeyError(f"no prompt named {name!r} (have: {', '.join(available()) or 'none'})")
    chosen = versions[-1] if version is None else str(version).removeprefix("v")
    if chosen not in versions:
        raise KeyError(f"prompt {name!r} has no version {version!r} (have: {', '.join(versions)})")
    filename = f"{name}.v{chosen}.md"
    prompt = parse_prompt(resources.files(__name__).joinpath(filename).read_text(encoding="utf-8"), filename)
    if prompt.name != name or prompt.version != chosen:
        raise ValueError(f"{filename}: the front matter says {prompt.name} v{prompt.version}")
    return prompt


__all__ = ["Prompt", "available", "load_prompt", "parse_prompt"]
