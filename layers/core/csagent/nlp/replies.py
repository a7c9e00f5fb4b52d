"""Templated replies for the local tier: friendly, deterministic, in English and Chinese.

Why templates: with no generative model the wording must still be warm and consistent, and
the text a customer reads must be reviewable outside the code. Templates live in
`templates/replies_<lang>.json`, keyed by name, with `str.format` fields. A name missing in a
language falls back to English; an unknown name or a missing field is a programming error and
raises (a customer must never see a raw "{carrier}").
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

DEFAULT_LANG = "en"
SUPPORTED_LANGS: tuple[str, ...] = ("en", "zh")
_LIST_SEPARATOR = {"en": ", ", "zh": "、"}


class MissingTemplateFieldError(KeyError):
    """A template was rendered without one of its fields."""


def normalise_lang(lang: str | None) -> str:
    """"zh-CN", "zh_Hans", "ZH" → "zh"; unknown or empty → "en"."""
    base = (lang or DEFAULT_LANG).replace("_", "-").split("-")[0].lower()
    return base if base in SUPPORTED_LANGS else DEFAULT_LANG


@lru_cache(maxsize=len(SUPPORTED_LANGS))
def load_templates(lang: str) -> dict[str, str]:
    """The templates of one language from `templates/replies_<lang>.json` (cached)."""
    path = resources.files("csagent.nlp").joinpath("templates", f"replies_{lang}.json")
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {k: v for k, v in raw.items() if not k.startswith("_")}


def template_fields(template: str) -> set[str]:
    """The field names a template needs ("{order_id} is {status}" → {"order_id", "status"})."""
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(template) if name}


class ReplyBook:
    """Renders named templates; `templates` maps lang → name → template (defaults: the files)."""

    def __init__(self, templates: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self._templates = templates

    def _table(self, lang: str) -> Mapping[str, str]:
        if self._templates is not None:
            return self._templates.get(lang, {})
        return load_templates(lang)

    def template(self, name: str, lang: str = DEFAULT_LANG) -> tuple[str, str]:
        """(template, language actually used): the requested language, else English."""
        code = normalise_lang(lang)
        for candidate in dict.fromkeys((code, DEFAULT_LANG)):
            table = self._table(candidate)
            if name in table:
                return table[name], candidate
        raise KeyError(f"no reply template named {name!r}")

    def has(self, name: str, lang: str = DEFAULT_LANG) -> bool:
        """True when `name` exists in `lang` itself (without the English fallback)."""
        return name in self._table(normalise_lang(lang))

    def render(self, name: str, lang: str = DEFAULT_LANG, /, **fields: Any) -> str:
        """Fill template `name` in `lang` (falling back to English) with `fields`.

        Lists and tuples are joined (", " in English, "、" in Chinese); other values go through
        `str()` (so an `Address` prints as one line). `name` and `lang` are positional-only, so
        templates may use fields called `name` or `lang`. Raises `MissingTemplateFieldError` when a
        field is absent or None, and `KeyError` for an unknown template name.
        """
        template, used = self.template(name, lang)
        needed = template_fields(template)
        missing = sorted(f for f in needed if fields.get(f) is None)
        if missing:
            raise MissingTemplateFieldError(f"template {name!r} needs {', '.join(missing)}")
        values = {k: _display(v, used) for k, v in fields.items() if k in needed}
        return template.format(**values).strip()


def _display(value: Any, lang: str) -> Any:
    if isinstance(value, (list, tuple)):
        return _LIST_SEPARATOR.get(lang, ", ").join(str(v) for v in value)
    if isinstance(value, float):
        return f"{value:.2f}"
    return value


@lru_cache(maxsize=1)
def get_reply_book() -> ReplyBook:
    """The process-wide reply book over the template files."""
    return ReplyBook()


def render(name: str, lang: str = DEFAULT_LANG, /, **fields: Any) -> str:
    """Render a reply template by name (see `ReplyBook.render`)."""
    return get_reply_book().render(name, lang, **fields)


def render_order_status(lang: str = DEFAULT_LANG, *, order_id: str, status: str,
                        tracking_number: str | None = None, carrier: str | None = None,
                        estimate: str | None = None, delivered_on: str | None = None) -> str:
    """An order-status reply that picks the variant the known facts allow.

    Delivered and cancelled orders get their own wording; a shipped order with tracking gets
    carrier, tracking number and estimate; anything else says there is no tracking yet.
    """
    state = status.lower()
    if state == "delivered":
        suffix = ""
        if delivered_on:
            suffix = f" on {delivered_on}" if normalise_lang(lang) == "en" else f"（{delivered_on}）"
        return render("order_status_delivered", lang, order_id=order_id, delivered_on=suffix)
    if state == "cancelled":
        return render("order_status_cancelled", lang, order_id=order_id)
    if tracking_number and carrier:
        return render("order_status", lang, order_id=order_id, status=status, carrier=carrier,
                      tracking_number=tracking_number, estimate=estimate or _unknown_estimate(lang))
    return render("order_status_no_tracking", lang, order_id=order_id, status=status)


def _unknown_estimate(lang: str) -> str:
    return "the date shown on the carrier's page" if normalise_lang(lang) == "en" else "承运商页面显示的日期"


# -- phrases: what to say, kept apart from the language it is said in ---------------------------------
#: How the parts of a `joined` phrase are put together, by language ("and" is `join_items`'s, "list"
#: the list separator's): alternatives, alternatives that hold lists of their own (which "或" alone
#: would run into), parts that hold lists of their own, and whole sentences.
_JOINERS: dict[str, dict[str, str]] = {
    "en": {"choices": " or ", "groups": "; ", "sentences": " "},
    "zh": {"choices": "，或 ", "groups": "；", "sentences": ""},
}


def phrase(template: str, /, **fields: Any) -> dict[str, Any]:
    """Words kept as what to say, not as text: a template's name and its fields, each a value, a
    list of values, or a phrase of its own (or `joined` phrases). Plain JSON, so it can be stored
    where the words are needed later (a clause's entities, a checkpoint) and said then in the
    customer's language (`render_phrase`): one template decides the words in every language."""
    return {"template": template, "fields": fields}


def joined(parts: Sequence[Any], how: str) -> dict[str, Any]:
    """Phrases (or values) said one after another: `how` is "and" ("a, b and c"), "or" ("a, b or
    c"), "choices" ("or" between parts that hold lists), "list" ("a, b"), "groups" ("a; b", parts
    that hold lists of their own) or "sentences"."""
    return {"join": how, "parts": list(parts)}


def render_phrase(value: Any, lang: str = DEFAULT_LANG) -> str:
    """A `phrase` (or `joined` phrases, or a plain value) said in `lang` (see `ReplyBook.render`)."""
    said = _said(value, normalise_lang(lang))
    return _display(said, normalise_lang(lang)) if isinstance(said, list) else str(said)


def _said(value: Any, lang: str) -> Any:
    """A phrase's words; a list stays a list (its template joins it), anything else is as given."""
    if isinstance(value, Mapping) and "template" in value:
        fields = {k: _said(v, lang) for k, v in (value.get("fields") or {}).items()}
        return render(str(value["template"]), lang, **fields)
    if isinstance(value, Mapping) and "join" in value:
        parts = [render_phrase(p, lang) for p in value.get("parts") or []]
        how = str(value["join"])
        if how in ("and", "or"):
            return join_items(parts, lang, how)
        if how == "list":
            return _display(parts, lang)
        return _JOINERS.get(lang, _JOINERS[DEFAULT_LANG])[how].join(parts)
    if isinstance(value, (list, tuple)):
        return [render_phrase(v, lang) for v in value]
    return value


def join_items(items: Sequence[str], lang: str = DEFAULT_LANG, how: str = "and") -> str:
    """"a, b and c" in English, "a、b和c" in Chinese (for lists inside a sentence); with `how`
    "or", "a, b or c" and "a、b或c"."""
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    if normalise_lang(lang) == "zh":
        return "、".join(items[:-1]) + ("或" if how == "or" else "和") + items[-1]
    return ", ".join(items[:-1]) + (" or " if how == "or" else " and ") + items[-1]
