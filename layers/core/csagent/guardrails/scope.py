"""The scope check: is a message about the store's business, and which area?

Anchored on two written sources, not on free model judgement:

- **keywords** (`data/scope_anchors.yaml`) derived from the store graph schema (labels and
  properties turned into words: `TrackingEvent` → "tracking event", `tracking_id` → "tracking")
  plus the words customers use for the same things, and Chinese anchors;
- **the business-scope text** (`data/business_scope.md`): each `##` section is an area, each
  line a typical request; a message is embedded with MiniLM and compared with every line.

A message is in scope when its best similarity to a scope line reaches the calibrated threshold,
or when it names an anchor and its similarity reaches the lower, calibrated "anchored" threshold
(a keyword alone is not enough: "what is the price of bitcoin" names "price"). The area is the
section of the best line, or of the most keyword hits when the embedding is not decisive.
Chinese text (MiniLM-L6 is English-only) is judged by its anchors alone.
Thresholds: `python -m csagent.guardrails.calibrate` → `data/calibration.json`.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from csagent.guardrails.injection import data_path, data_text, default_embedder, embed_matrix

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

    from csagent.ports import Embedder

#: Used until `data/calibration.json` has scope thresholds.
DEFAULT_THRESHOLD = 0.45
DEFAULT_ANCHORED_THRESHOLD = 0.3

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_PROPERTY_SUFFIX = re.compile(r"(?:_(?:id|at|text|count))$|\d+$")


@dataclass(frozen=True)
class ScopeResult:
    """`area` is the business area (a section of `business_scope.md`) or None when out of scope;
    `score` the best similarity to a scope line; `anchors` the keywords found."""

    in_scope: bool
    area: str | None
    score: float
    anchors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Anchors:
    """Keyword anchors per area, as regexes over English words and Chinese substrings."""

    english: Mapping[str, tuple[str, ...]]
    chinese: Mapping[str, tuple[str, ...]]

    def hits(self, text: str) -> dict[str, list[str]]:
        """Area → anchors found in `text`."""
        lowered = text.lower()
        found: dict[str, list[str]] = {}
        for area, terms in self.english.items():
            # A term whose first word is not in the text cannot match: its regex is neither
            # compiled nor run (a fresh process compiled all of them on its first message).
            matched = [t for t in terms if _term_head(t) in lowered and _term_regex(t).search(lowered)]
            matched += [t for t in self.chinese.get(area, ()) if t in text]
            if matched:
                found[area] = matched
        return found


def label_words(label: str) -> str:
    """A graph label as words: "TrackingEvent" → "tracking event"."""
    return _CAMEL.sub(" ", label).lower()


def property_words(name: str) -> str:
    """A graph property as words: "tracking_id" → "tracking", "estimated_delivery" → "estimated delivery"."""
    return _PROPERTY_SUFFIX.sub("", name).replace("_", " ").strip()


@lru_cache(maxsize=512)
def _term_head(term: str) -> str:
    """The term's first word, lower-cased: literal text that every match of `_term_regex` holds."""
    return term.lower().split()[0]


@lru_cache(maxsize=512)
def _term_regex(term: str) -> re.Pattern[str]:
    """Whole words, last word with an optional plural / past / -ing ending."""
    *head, last = [re.escape(w) for w in term.lower().split()]
    return re.compile(r"\b" + r"\s+".join([*head, last + r"(?:s|es|ed|d|ing)?"]) + r"\b")


@lru_cache(maxsize=1)
def load_anchors() -> Anchors:
    """The anchors of `data/scope_anchors.yaml`, schema labels and properties turned into words."""
    from csagent import yamlio

    document = yamlio.load_file(data_path("scope_anchors.yaml"))
    english: dict[str, tuple[str, ...]] = {}
    chinese: dict[str, tuple[str, ...]] = {}
    for area, spec in document["areas"].items():
        words = [label_words(x) for x in spec.get("labels") or ()]
        words += [property_words(x) for x in spec.get("properties") or ()]
        words += [str(t).lower() for t in spec.get("terms") or ()]
        english[area] = tuple(dict.fromkeys(w for w in words if w))
        chinese[area] = tuple(spec.get("zh") or ())
    return Anchors(english, chinese)


def schema_anchor_names() -> tuple[set[str], set[str]]:
    """(labels, properties) named in the anchors file, for the test that checks them against the schema."""
    from csagent import yamlio

    areas = yamlio.load_file(data_path("scope_anchors.yaml"))["areas"].values()
    return ({x for a in areas for x in a.get("labels") or ()},
            {x for a in areas for x in a.get("properties") or ()})


@lru_cache(maxsize=1)
def load_scope_lines() -> tuple[tuple[str, str], ...]:
    """(area, line) for every line under a `##` section of `data/business_scope.md`."""
    lines: list[tuple[str, str]] = []
    area: str | None = None
    for raw in data_text("business_scope.md").splitlines():
        if raw.startswith("## "):
            area = raw[3:].strip()
        elif area and raw.strip():
            lines.append((area, raw.strip()))
    return tuple(lines)


def load_thresholds() -> tuple[float, float]:
    """(threshold, anchored threshold) from `data/calibration.json`, or the defaults."""
    try:
        scope = json.loads(data_text("calibration.json"))["scope"]
        return float(scope["threshold"]), float(scope["anchored_threshold"])
    except (FileNotFoundError, KeyError, ValueError):
        return DEFAULT_THRESHOLD, DEFAULT_ANCHORED_THRESHOLD


class ScopeChecker:
    """Keyword anchors + similarity to the business-scope lines; the lines' vectors are loaded once
    (the shipped lines' from the layer's arrays, `csagent.nlp.fixed_vectors`) or embedded once."""

    def __init__(self, embedder: Embedder | None = None, *, threshold: float | None = None,
                 anchored_threshold: float | None = None, anchors: Anchors | None = None,
                 lines: Sequence[tuple[str, str]] | None = None) -> None:
        calibrated = load_thresholds()
        self.threshold = calibrated[0] if threshold is None else threshold
        self.anchored_threshold = calibrated[1] if anchored_threshold is None else anchored_threshold
        self._embedder = embedder
        self._shipped_lines = lines is None  # their vectors ship with the layer
        self.anchors = anchors or load_anchors()
        self.lines = tuple(lines) if lines is not None else load_scope_lines()
        self._matrix: np.ndarray | None = None
        self._lock = threading.Lock()

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._embedder is None:
            self._embedder = default_embedder()
        return embed_matrix(self._embedder, texts)

    @property
    def embedder(self) -> Embedder | None:
        """The embedder in use (None until the first check)."""
        return self._embedder

    def _reference(self) -> np.ndarray:
        if self._matrix is None:
            with self._lock:
                if self._matrix is None:
                    texts = [line for _, line in self.lines]
                    if self._shipped_lines:
                        from csagent.nlp.fixed_vectors import fixed_vectors

                        if self._embedder is None:
                            self._embedder = default_embedder()
                        self._matrix = fixed_vectors("scope_lines", texts, self._embedder)
                    else:
                        self._matrix = self._embed(texts)
        return self._matrix

    def warm_up(self) -> None:
        """Load or embed the scope lines now (otherwise done on the first check)."""
        self._reference()

    def similarity(self, text: str) -> tuple[float, str]:
        """Best cosine similarity of `text` (entities masked) to a scope line, and that line's area."""
        from csagent.nlp.intents import mask_entities

        scores = self._embed([mask_entities(text)])[0] @ self._reference().T
        best = int(scores.argmax())
        return float(scores[best]), self.lines[best][0]

    def check(self, text: str) -> ScopeResult:
        """Judge one message."""
        from csagent.nlp.intents import detect_language

        hits = self.anchors.hits(text)
        found = tuple(dict.fromkeys(t for terms in hits.values() for t in terms))
        keyword_area = max(hits, key=lambda a: len(hits[a])) if hits else None
        if detect_language(text) != "en" or not text.strip():
            return ScopeResult(in_scope=keyword_area is not None, area=keyword_area, score=0.0, anchors=found)
        score, line_area = self.similarity(text)
        if score >= self.threshold:
            return ScopeResult(True, line_area, round(score, 4), found)
        if hits and score >= self.anchored_threshold:
            area = line_area if line_area in hits else keyword_area
            return ScopeResult(True, area, round(score, 4), found)
        return ScopeResult(False, None, round(score, 4), found)


@lru_cache(maxsize=1)
def get_scope_checker() -> ScopeChecker:
    """The process-wide scope checker (cached; the scope lines' vectors are loaded on first use)."""
    return ScopeChecker()


def check_scope(text: str) -> ScopeResult:
    """Judge `text` with the process-wide checker."""
    return get_scope_checker().check(text)
