"""Is this message an answer to "shall I go ahead?": yes, no, or neither.

Deliberately strict: only a short answer counts (lexicon in `data/confirmation.json`) - the
whole message, or its parts split at punctuation when every part is an answer of the same kind,
courtesy words aside ("no, leave it", "yes, go ahead, thanks"). "yes, and where is my other
order?" is not taken as consent for a consequential write; the assistant asks again instead.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Literal

Answer = Literal["yes", "no"]
_TRIM = re.compile(r"^[\s.!,;:。！，？?]+|[\s.!,;:。！，？?]+$")
_PARTS = re.compile(r"[.!,;:。！，；?？]+")


@cache
def _lexicon() -> dict[str, frozenset[str]]:
    raw = json.loads(resources.files("csagent.nlp").joinpath("data", "confirmation.json").read_text("utf-8"))
    keys = ("yes", "no", "courtesy", "yes_words", "no_words", "filler_words", "action_words",
            "zh_yes", "zh_no", "zh_neutral", "neutral")
    return {key: frozenset(v.lower() for v in raw[key]) for key in keys}


_WORDS = re.compile(r"[a-z']+")


def _answer_of_words(normalised: str) -> Answer | None:
    """Every word an answer word, a courtesy or an action word (or one slip from one: "confrim"),
    and answer words of one kind only ("yes, that's right, please go ahead", "sure, do it", "nah
    leave it"). "not"/"don't" with a
    yes word ("no, don't", "yes, don't wait") is a no only when no yes word is there."""
    lexicon = _lexicon()
    words = _WORDS.findall(normalised.replace("’", "'"))
    if not words or len(words) > 14:
        return None
    known = lexicon["yes_words"] | lexicon["no_words"] | lexicon["filler_words"] | lexicon["action_words"]
    words = [w if w in known else _slip_of(w, known) or w for w in words]  # "confrim", "proceeed"
    if any(w not in known for w in words):
        return None
    yes = any(w in lexicon["yes_words"] for w in words)
    no = any(w in lexicon["no_words"] for w in words)
    if yes and not no:
        return "yes"
    if no and not yes:
        return "no"
    return None


#: A word this long or longer that is one slip from a known answer word ("confrim") reads as it.
SLIP_MIN_LENGTH = 6
SLIP_MIN_RATIO = 0.85


def _slip_of(word: str, known: frozenset[str]) -> str | None:
    """The known word `word` is a slip of (a swapped, missing or doubled letter), or None."""
    from difflib import SequenceMatcher

    if len(word) < SLIP_MIN_LENGTH:
        return None
    close = [k for k in known
             if len(k) >= SLIP_MIN_LENGTH and SequenceMatcher(None, word, k).ratio() >= SLIP_MIN_RATIO]
    return close[0] if len(close) == 1 else None


def _normalise(text: str) -> str:
    return " ".join(_TRIM.sub("", text.lower()).split())


def _meaningful_parts(normalised: str) -> list[str]:
    """The punctuation-separated parts of a message, courtesy parts aside."""
    lexicon = _lexicon()
    parts = [p for p in (" ".join(x.split()) for x in _PARTS.split(normalised)) if p]
    return [p for p in parts if p not in lexicon["courtesy"]]


def _answer_of_parts(normalised: str) -> Answer | None:
    """The answer every punctuation-separated part gives (courtesy parts aside), if they agree."""
    lexicon = _lexicon()
    meaningful = _meaningful_parts(normalised)
    for answer in ("yes", "no"):
        if meaningful and all(p in lexicon[answer] for p in meaningful):
            return answer  # type: ignore[return-value]
    return None


def contradicts(text: str) -> bool:
    """Every part of the message a bare answer, and answers of both kinds ("yes, no", "ok. no.
    wait"): it says nothing a reader, or a model, could take as either."""
    lexicon = _lexicon()
    meaningful = _meaningful_parts(_normalise(text))
    kinds = {a for p in meaningful for a in ("yes", "no") if p in lexicon[a]}
    return len(kinds) == 2 and all(p in lexicon["yes"] | lexicon["no"] for p in meaningful)


def lean(text: str) -> Answer | None:
    """Which way a longer message leans when a proposal is waiting: "yes, that's what I said",
    "ugh. ok yes", "no. forget it, I'll sort it out myself". Any yes word and no no word (or the
    reverse), whatever else the message says; Chinese by its own answer words, where the action
    verb ("确认取消") is no refusal. Only an answer when the message asks for nothing new, which
    the caller decides (`understanding.consent_to_pending`)."""
    lexicon = _lexicon()
    lowered = text.lower().replace("’", "'")
    for phrase in lexicon["neutral"]:  # "I no longer need it" is a reason, not a no
        lowered = re.sub(rf"\b{re.escape(phrase)}\b", " ", lowered)
    for word in lexicon["zh_neutral"]:  # "不锈钢的那个" (the stainless steel one) is no "不"
        lowered = lowered.replace(word, " ")
    words = set(_WORDS.findall(lowered))
    yes = bool(words & lexicon["yes_words"]) or any(w in lowered for w in lexicon["zh_yes"])
    no = bool(words & lexicon["no_words"]) or any(w in lowered for w in lexicon["zh_no"])
    if yes != no:
        return "yes" if yes else "no"
    return None


def classify_confirmation(text: str) -> Answer | None:
    """'yes' / 'no' when the message is only an answer (see the module's docstring), else None."""
    normalised = _normalise(text)
    for answer in ("yes", "no"):
        if normalised in _lexicon()[answer]:
            return answer  # type: ignore[return-value]
    return _answer_of_parts(normalised) or _answer_of_words(normalised)
