"""Reading the package's YAML data files: converted to JSON at build time, parsed by libyaml else.

`yaml.safe_load` parses in pure Python: the Cypher catalogue alone took about 0.3-0.7 s of a
fresh process's first reply. `CSafeLoader` builds the same objects (the same safe constructors
and resolvers, only the scanner and parser are C) several times faster; without the extension
(a PyYAML built without libyaml) it is the pure-Python `SafeLoader`, as before.

Faster still is not parsing YAML at run time at all: `python -m csagent.yamlio` (`make vectors`,
which `make setup` and `make build` run) writes each YAML file of the package as JSON under
`csagent/compiled/` (never committed, shipped in the core layer), with the SHA-256 of the YAML
text it was made from. `load_file` reads the YAML text (a file read and a hash: well under a
millisecond) and uses the JSON only when that hash is the text's: a file edited since the build
is parsed from its YAML, with a warning, never read stale. A file whose data JSON cannot hold
exactly (dates, keys that are not strings) is not converted, and is always parsed. Neither
PyYAML nor its parse is then on a cold start's path.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).resolve().parent
#: Where the build writes the JSON forms (`csagent/compiled/<the YAML's path>.json`).
COMPILED_DIR = PACKAGE_DIR / "compiled"
FORMAT = "csagent-yaml-json/1"


def safe_load(text: str) -> Any:
    """`yaml.safe_load(text)`, parsed by libyaml when PyYAML has it."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - a safe loader


def text_key(text: str) -> str:
    """SHA-256 (hex) of a YAML file's text: what its JSON form is checked against."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def compiled_path(source: Path, package_dir: Path = PACKAGE_DIR,
                  compiled_dir: Path = COMPILED_DIR) -> Path | None:
    """Where the JSON form of `source` lives, or None for a file outside the package."""
    try:
        relative = Path(os.path.realpath(source)).relative_to(package_dir)
    except ValueError:
        return None
    return compiled_dir / f"{relative}.json"


def load_file(source: Any, *, package_dir: Path = PACKAGE_DIR, compiled_dir: Path = COMPILED_DIR) -> Any:
    """The data of a YAML file (a path, or a package resource that is one): its JSON form when
    the build wrote one from this exact text, else the YAML parsed now."""
    path = Path(str(source))
    text = path.read_text(encoding="utf-8")
    target = compiled_path(path, package_dir, compiled_dir)
    if target is not None:
        try:
            document = json.loads(target.read_text(encoding="utf-8"))
        except FileNotFoundError:
            document = None
        except (OSError, ValueError) as exc:
            logger.warning("the JSON form of %s is unreadable (%s): parsing the YAML", path.name, exc)
            document = None
        if isinstance(document, dict) and document.get("format") == FORMAT:
            if document.get("sha256") == text_key(text):
                return document["data"]
            logger.warning("the JSON form of %s is stale (made from another text): parsing the YAML; "
                           "`make vectors` rebuilds it", path.name)
    return safe_load(text)


def build(package_dir: Path = PACKAGE_DIR, compiled_dir: Path = COMPILED_DIR) -> list[str]:
    """Write the JSON form of every YAML file under `package_dir` whose data JSON holds exactly;
    the package-relative paths written."""
    written = []
    for source in sorted(package_dir.rglob("*.yaml")):
        if compiled_dir in source.parents:
            continue
        text = source.read_text(encoding="utf-8")
        data = safe_load(text)
        try:
            exact = json.loads(json.dumps(data)) == data
        except (TypeError, ValueError):
            exact = False
        if not exact:  # dates, non-string keys: parsed at run time
            logger.warning("%s is not converted: JSON cannot hold its data exactly", source)
            continue
        target = compiled_path(source, package_dir, compiled_dir)
        assert target is not None
        relative = str(source.relative_to(package_dir))
        document = {"format": FORMAT, "source": relative, "sha256": text_key(text), "data": data}
        _write(target, json.dumps(document, ensure_ascii=False, separators=(",", ":")))
        written.append(relative)
    return written


def _write(path: Path, content: str) -> None:
    """Atomically (a reader never sees half a file), readable by Lambda's runtime user."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(content)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m csagent.yamlio`: the build step (`make vectors`)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m csagent.yamlio",
                                     description="Write the package's YAML files as JSON, keyed by text.")
    parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    written = build()
    print(f"JSON forms of {len(written)} YAML files in {COMPILED_DIR}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
