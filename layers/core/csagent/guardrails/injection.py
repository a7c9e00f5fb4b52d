"""Prompt-injection screening for customer messages, before anything reaches the planner.

Two layers, both explainable (every block names its reasons):

1. **Patterns** (`data/injection_patterns.yaml`): instruction overrides, system-prompt extraction,
   role-play jailbreaks, "developer mode", other customers' data, Cypher / SQL typed as code,
   chat-template role tags, and their Chinese forms. The patterns are also run on a de-leeted
   copy ("1gn0r3" → "ignore") and on the reversed text, and any base64 / hex blob that decodes to
   readable text is flagged and screened too.
2. **Similarity to known attacks, relative to normal traffic**: the message (entities masked;
   the whole text and each sentence) is embedded with MiniLM. Its score is the cosine similarity
   to the nearest training attack of `data/attacks.jsonl` MINUS the similarity to the nearest
   normal customer message (the English examples of `csagent.nlp`'s `intents.jsonl` plus the
   training lines of `data/benign.jsonl`). Raw similarity to attacks alone does not separate:
   "I want to cancel all my pending orders" is as close to "list every customer's orders" as
   many attacks are; the margin asks "is it more like an attack than like a customer?". At or
   above the threshold the message is blocked. The threshold is calibrated on the training lines
   (leave-one-out) by `python -m csagent.guardrails.calibrate` into `data/calibration.json`,
   which also records precision / recall on the held-out lines of both files. MiniLM-L6 is
   English-only, so Chinese text gets the pattern layer only.

If the embedding model cannot be loaded the screen degrades to the patterns and says so in its
reasons instead of failing the turn: the hard boundary is elsewhere (every customer-data query
is bound to the authenticated customer, and the output guard withholds foreign identifiers), so
this screen's job is to stop the attempt early and explain why, not to be the last line.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # pragma: no cover - typing only
    from importlib.resources.abc import Traversable

    import numpy as np

    from csagent.ports import Embedder

logger = logging.getLogger(__name__)

#: Used when `data/calibration.json` has no injection threshold yet.
DEFAULT_THRESHOLD = 0.1
#: The calibration never goes below this: a message closer to a customer than to any attack
#: (margin < 0) is not blocked on similarity, whatever the training lines would reward.
MIN_THRESHOLD = 0.0
MAX_WINDOWS = 12

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_MIN_WINDOW_WORDS = 3
_BASE64_BLOB = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")
_HEX_BLOB = re.compile(r"(?:[0-9A-Fa-f]{2}\s?){16,}")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
_LEET_TOKEN = re.compile(r"\b(?=\w*[A-Za-z])(?=\w*[013457])\w{3,}\b")


@dataclass(frozen=True)
class ScreenResult:
    """The verdict on one message.

    `score` is the attack margin: similarity to the nearest known attack minus similarity to the
    nearest normal message, over the message's windows (0.0 when the semantic layer did not
    run; above 0 means "more like an attack than like a customer"). `reasons` name every
    pattern hit ("pattern:<id>"), "encoded_payload", the nearest attack category when the score
    reached the threshold ("similar_to_attack:<category>"), or "semantic_unavailable".
    """

    blocked: bool
    score: float
    reasons: tuple[str, ...] = ()

    @property
    def semantic_only(self) -> bool:
        """Blocked on similarity alone (no pattern, no encoded payload): the fuzzier verdict, which
        a caller may prefer to answer with a clarifying question rather than a refusal."""
        return self.blocked and all(r.startswith(("similar_to_attack:", "semantic_")) for r in self.reasons)


@dataclass(frozen=True)
class Pattern:
    id: str
    regex: re.Pattern[str]


@dataclass(frozen=True)
class LabelledText:
    """A line of `attacks.jsonl` / `benign.jsonl` / `out_of_scope.jsonl`."""

    text: str
    label: str
    split: str


# -- data files ------------------------------------------------------------------------------
def data_path(name: str) -> Traversable:
    """A file of `csagent/guardrails/data`."""
    return resources.files("csagent.guardrails").joinpath("data", name)


def data_text(name: str) -> str:
    """The text of a file from `csagent/guardrails/data`."""
    return data_path(name).read_text(encoding="utf-8")


def load_labelled(name: str, label_field: str) -> list[LabelledText]:
    """The lines of a JSONL data file as (text, label, split)."""
    rows = [json.loads(line) for line in data_text(name).splitlines() if line.strip()]
    return [LabelledText(r["text"], r[label_field], r.get("split", "train")) for r in rows]


@lru_cache(maxsize=1)
def load_patterns() -> tuple[Pattern, ...]:
    """The compiled patterns of `injection_patterns.yaml`."""
    from csagent import yamlio

    document = yamlio.load_file(data_path("injection_patterns.yaml"))
    return tuple(
        Pattern(p["id"], re.compile(p["pattern"], 0 if p.get("case") == "sensitive" else re.IGNORECASE))
        for p in document["patterns"]
    )


def load_calibrated_threshold() -> float:
    """The injection threshold from `data/calibration.json`, or `DEFAULT_THRESHOLD`."""
    try:
        return float(json.loads(data_text("calibration.json"))["injection"]["threshold"])
    except (FileNotFoundError, KeyError, ValueError):
        return DEFAULT_THRESHOLD


def embed_matrix(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Unit vectors of `texts` as a float32 matrix (MiniLM's array path when it has one)."""
    from csagent.nlp.fixed_vectors import embed_all

    return embed_all(embedder, texts)


def default_embedder() -> Embedder:
    """The process-wide MiniLM embedder (loaded on first embed)."""
    from csagent.nlp.embeddings import get_embedder

    return get_embedder()


# -- pattern layer ---------------------------------------------------------------------------
def pattern_hits(text: str, patterns: Sequence[Pattern] | None = None) -> list[str]:
    """Ids of the patterns that match `text`, its de-leeted copy, or its reversal."""
    patterns = patterns if patterns is not None else load_patterns()
    variants = [text, text[::-1]]
    if _LEET_TOKEN.search(text):
        variants.append(text.translate(_LEET))
    return [p.id for p in patterns if any(p.regex.search(v) for v in variants)]


def decoded_payloads(text: str) -> list[str]:
    """Readable text hidden in base64 or hex blobs of `text` (binary junk is ignored)."""
    found: list[str] = []
    for blob in _BASE64_BLOB.findall(text):
        try:
            raw = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True)
        except (binascii.Error, ValueError):
            continue
        found.extend(_readable(raw))
    for blob in _HEX_BLOB.findall(text):
        try:
            raw = bytes.fromhex(re.sub(r"\s", "", blob))
        except ValueError:
            continue
        found.extend(_readable(raw))
    return found


def _readable(raw: bytes) -> list[str]:
    """`[text]` when `raw` is mostly printable ASCII words (at least 12 bytes), else `[]`."""
    if len(raw) < 12:
        return []
    printable = sum(32 <= b < 127 for b in raw) / len(raw)
    text = raw.decode("ascii", errors="ignore")
    return [text] if printable >= 0.9 and re.search(r"[A-Za-z]{3,}\s+[A-Za-z]{2,}", text) else []


def windows(text: str) -> list[str]:
    """What the semantic layer embeds: the whole text, and each sentence of 3+ words when there
    are several (an attack appended to a long, harmless message still gets its own window).
    Sentences end at . ! ? or a line break, not at ":" - "new instructions for delivery:" is a
    fragment, not a request."""
    from csagent.nlp.intents import mask_entities

    masked = mask_entities(text)
    sentences = [s.strip() for s in _SENTENCE_SPLIT.split(masked) if len(s.split()) >= _MIN_WINDOW_WORDS]
    if len(sentences) <= 1:
        return [masked]
    return [masked, *sentences[: MAX_WINDOWS - 1]]


class Trimmed(NamedTuple):
    """A message without its flagged sentences (`rest`), and those sentences (`dropped`)."""

    rest: str
    dropped: str


def without_flagged_sentences(text: str, screen_text: Callable[[str], ScreenResult]) -> Trimmed | None:
    """The message without the sentences that alone look like an attack, when that is what
    flagged it: "I am so done with this store. Where is my camera?" loses only its opener. Each
    sentence of 3+ words is screened alone; a flagged one is dropped, and the rest must screen
    clean as a whole (its own windows included) to be used, so nothing flagged ever passes on.
    None when the message is one sentence, when no single sentence is flagged (the whole text
    is), when a sentence hits a pattern (a pattern is refused, never trimmed), or when nothing
    would remain."""
    sentences = [s.strip() for s in _SENTENCE_SPLIT.split(text) if s.strip()]
    if len(sentences) <= 1:
        return None
    kept: list[str] = []
    dropped: list[str] = []
    for sentence in sentences:
        verdict = screen_text(sentence) if len(sentence.split()) >= _MIN_WINDOW_WORDS else None
        if verdict is None or not verdict.blocked:
            kept.append(sentence)
        elif not verdict.semantic_only:
            return None
        else:
            dropped.append(sentence)
    if not kept or not dropped:
        return None
    rest = " ".join(kept)
    return None if screen_text(rest).blocked else Trimmed(rest, " ".join(dropped))


def only_the_whole_is_flagged(text: str, screen_text: Callable[[str], ScreenResult]) -> bool:
    """Is the message flagged only as a whole: two or more sentences of 3+ words, each of which
    screens clean alone ("Order #W1 is going to my house but I won't be home all week. Send it to
    my office instead: ...", whose words together come near an exfiltration attack)? A sentence
    that is an attack is flagged alone (`windows` screens each one), so this is the margin of the
    sentences' mixture, not an attack in them."""
    sentences = [s.strip() for s in _SENTENCE_SPLIT.split(text) if len(s.split()) >= _MIN_WINDOW_WORDS]
    return len(sentences) >= 2 and not any(screen_text(s).blocked for s in sentences)


# -- the screen ------------------------------------------------------------------------------
def normal_messages() -> list[str]:
    """The contrast set: the English in-scope intent examples of `csagent.nlp` (its out-of-scope
    examples include attacks), the benign training lines, and ordinary customer traffic
    (`data/benign_traffic.jsonl`: 200 messages of the development set, written by people who never
    read the code; only ever contrast, never scored in calibration)."""
    from csagent.nlp.intents import OUT_OF_SCOPE, load_examples

    examples = [e.text for e in load_examples() if e.lang == "en" and e.intent != OUT_OF_SCOPE]
    benign = [b.text for b in load_labelled("benign.jsonl", "area") if b.split == "train"]
    traffic = [json.loads(line)["text"] for line in data_text("benign_traffic.jsonl").splitlines()
               if line.strip()]
    return list(dict.fromkeys(examples + benign + traffic))


class InjectionScreen:
    """Patterns + attack margin; thread-safe. The reference sets' vectors are loaded on first use
    (the shipped sets' from the layer's arrays, `csagent.nlp.fixed_vectors`) or embedded then."""

    def __init__(self, embedder: Embedder | None = None, *, threshold: float | None = None,
                 attacks: Sequence[LabelledText] | None = None, normal: Sequence[str] | None = None,
                 patterns: Sequence[Pattern] | None = None) -> None:
        self._embedder = embedder
        self._shipped_sets = attacks is None and normal is None  # their vectors ship with the layer
        self.threshold = load_calibrated_threshold() if threshold is None else threshold
        self.attacks = list(attacks) if attacks is not None else [
            a for a in load_labelled("attacks.jsonl", "category") if a.split == "train"]
        self.normal = list(normal) if normal is not None else normal_messages()
        self._patterns = tuple(patterns) if patterns is not None else load_patterns()
        self._references: tuple[np.ndarray, np.ndarray] | None = None
        self._lock = threading.Lock()

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._embedder is None:
            self._embedder = default_embedder()
        return embed_matrix(self._embedder, texts)

    def _embed_set(self, name: str, texts: Sequence[str]) -> np.ndarray:
        """A reference set's vectors: the layer's arrays for the shipped sets, else embedded now."""
        if not self._shipped_sets:
            return self._embed(texts)
        from csagent.nlp.fixed_vectors import fixed_vectors

        if self._embedder is None:
            self._embedder = default_embedder()
        return fixed_vectors(name, texts, self._embedder)

    def references(self) -> tuple[np.ndarray, np.ndarray]:
        """The embedded attack set and normal set (loaded or built once, on first use)."""
        if self._references is None:
            with self._lock:
                if self._references is None:
                    from csagent.nlp.intents import mask_entities

                    self._references = (
                        self._embed_set("injection_attacks", [mask_entities(a.text) for a in self.attacks]),
                        self._embed_set("injection_normal", [mask_entities(t) for t in self.normal]))
        return self._references

    def margin(self, text: str, *, exclude: str | None = None) -> tuple[float, str]:
        """(attack margin of `text`, category of the nearest attack). `exclude` leaves one
        reference line out (leave-one-out calibration: a line must not be its own neighbour)."""
        attacks, normal = self.references()
        vectors = self._embed(windows(text))
        to_attacks, to_normal = vectors @ attacks.T, vectors @ normal.T  # unit vectors: dot = cosine
        if exclude is not None:
            to_attacks[:, [i for i, a in enumerate(self.attacks) if a.text == exclude]] = -1.0
            to_normal[:, [i for i, t in enumerate(self.normal) if t == exclude]] = -1.0
        margins = to_attacks.max(axis=1) - to_normal.max(axis=1)
        window = int(margins.argmax())
        return float(margins[window]), self.attacks[int(to_attacks[window].argmax())].label

    def screen(self, text: str) -> ScreenResult:
        """Screen one customer message."""
        from csagent.nlp.intents import detect_language

        reasons = [f"pattern:{p}" for p in pattern_hits(text, self._patterns)]
        for payload in decoded_payloads(text):
            reasons.append("encoded_payload")
            reasons.extend(f"pattern:{p}" for p in pattern_hits(payload, self._patterns))
        score = 0.0
        if detect_language(text) == "en":
            try:
                score, category = self.margin(text)
            except Exception:  # noqa: BLE001 - a missing model degrades to the pattern layer
                logger.warning("injection screen: embedding unavailable, patterns only", exc_info=True)
                reasons.append("semantic_unavailable")
            else:
                if score >= self.threshold:
                    reasons.append(f"similar_to_attack:{category}")
        reasons = list(dict.fromkeys(reasons))
        blocked = any(r != "semantic_unavailable" for r in reasons)
        return ScreenResult(blocked=blocked, score=round(score, 4), reasons=tuple(reasons))


@lru_cache(maxsize=1)
def get_screen() -> InjectionScreen:
    """The process-wide screen (cached; the reference sets are loaded on the first `screen`)."""
    return InjectionScreen()


def screen(text: str) -> ScreenResult:
    """Screen `text` with the process-wide screen."""
    return get_screen().screen(text)
