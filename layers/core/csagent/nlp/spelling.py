"""Misspelt store words put right before a clause is read: "cancle my espreso machine order"
is "cancel my espresso machine order", "trackin numbr for my cffee machine" the tracking number.

Data, not rules: a word is left as it is when it is an English word (symspellpy's frequency
dictionary of 82,765 words, with its contractions also spelt without the apostrophe), one of the
store's own words or a word kept as written (`data/spelling.json`: informal spellings, everyday
words the dictionary lacks). A short form customers write for a store word (`aliases` there: "addy",
"acct", "diff") is that word. Any other word is replaced by
the closest of the store's words (SymSpell over the English words of the intent examples, the
store's pages, the everyday product and option names and the catalogue): one edit for a word of up to six
letters, two for a longer one. Among equally close words the same letters in another order come
first ("cancle" is "cancel", not "candle"), then a longer word (a dropped letter is the commonest
slip: "orderd" is "ordered", not "order"), then the word the store uses most. A word ending in
"in" whose "-ing" form is English is that form ("waitin"). Capitalised words inside a sentence
(names, streets), words touching digits, "@", "." or "#" (ids, emails, addresses) and Chinese text
are never changed.

The word lists load on first use, never at import: from arrays `make vectors` wrote with the
layer (`csagent.nlp.fixed_vectors`, keyed by a SHA-256 of the dictionary and of every text the
store's words come from: a stale array is never used), so a fresh process reads two arrays instead
of splitting a 1.3 MB dictionary and every intent example and store page (about 0.15 s). The
store's words are indexed only when a message has a word none of the lists know.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

# A word of letters (with one inner apostrophe: "hasn't", "day's") standing alone: not part of an
# id, an email, a URL or a hyphenated token.
_TOKEN = re.compile(r"(?<![\w@.#/'-])[A-Za-z]+(?:'[A-Za-z]+)?(?![\w@/'-]|\.\w)")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|\n)\s*$")
MIN_LENGTH = 4
LONG_WORD = 7  # from this length two edits are allowed


class SpellingCorrector:
    """`known`: words never changed; `vocabulary`: the store's words with how often it uses them."""

    def __init__(self, known: Iterable[str], vocabulary: Counter[str],
                 aliases: Mapping[str, str] | None = None) -> None:
        self._aliases = dict(aliases or {})
        self._known = frozenset(known) | frozenset(vocabulary)
        self._counts = vocabulary
        self._index: Any = None

    def _lookup(self, word: str, distance: int) -> list[Any]:
        from symspellpy import SymSpell, Verbosity

        if self._index is None:
            index = SymSpell(max_dictionary_edit_distance=2, prefix_length=7)
            for known, count in self._counts.items():
                if len(known) >= 3 and "'" not in known:
                    index.create_dictionary_entry(known, count)
            self._index = index
        return list(self._index.lookup(word, Verbosity.CLOSEST, max_edit_distance=distance))

    def corrections(self, text: str) -> list[tuple[str, str]]:
        """Each misspelt word of `text` with the store's word it stands for, in order."""
        return [(m.group(0), fixed) for m, fixed in self._fixes(text)]

    def correct(self, text: str) -> str:
        """`text` with its misspelt words replaced (lower-case, as the store spells them)."""
        out, last = [], 0
        for match, fixed in self._fixes(text):
            out += [text[last:match.start()], fixed]
            last = match.end()
        return "".join(out) + text[last:] if out else text

    def _fixes(self, text: str) -> list[tuple[re.Match[str], str]]:
        fixes = []
        for match in _TOKEN.finditer(text):
            word = match.group(0)
            fixed = self._fix(word.lower())
            if fixed is None:
                continue
            if word[0].isupper() and not _SENTENCE_START.search(text[: match.start()]):
                continue  # a name: "Lakeshore Blvd", "Ms Okafor"
            fixes.append((match, fixed))
        return fixes

    def _fix(self, word: str) -> str | None:
        if word in self._aliases:
            return self._aliases[word]  # "main addy", "diff back to my card": a short form of the word
        if len(word) < MIN_LENGTH or word in self._known:
            return None
        base, _, suffix = word.partition("'")
        if suffix and base in self._known:  # "building's", "tablet's"
            return None
        if word.endswith("in") and f"{word}g" in self._known:  # "waitin", "trackin"
            return f"{word}g"
        distance = 2 if len(word) >= LONG_WORD else 1
        candidates = self._lookup(word, distance)
        if not candidates:
            return None
        letters = sorted(word)
        best = max(candidates, key=lambda s: (sorted(s.term) == letters, len(s.term) > len(word), s.count))
        return str(best.term)


def _data(name: str) -> str:
    return resources.files("csagent.nlp").joinpath("data", name).read_text(encoding="utf-8")


def _words_array(words: Iterable[str]) -> Any:
    """Words as one uint8 array (UTF-8, newline-separated): a fraction of a fixed-width str array."""
    import numpy as np

    return np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8)


def _array_words(array: Any) -> list[str]:
    text = array.tobytes().decode("utf-8")
    return text.split("\n") if text else []


def _symspell_file(name: str) -> Path:
    """A data file of the symspellpy package, found without importing it (`resources.files`
    would): SymSpell is needed only to index the store's words, for a message with a word no list
    knows."""
    import importlib.util

    spec = importlib.util.find_spec("symspellpy")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("symspellpy")
    return Path(next(iter(spec.submodule_search_locations))) / name


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """symspellpy's English frequency dictionary, contractions also without their apostrophe."""
    from csagent.nlp.fixed_vectors import cached_arrays, content_key

    text = _symspell_file("frequency_dictionary_en_82_765.txt").read_text("utf-8")

    def compute() -> dict[str, Any]:
        words = {line.split(" ", 1)[0] for line in text.splitlines() if line}
        return {"words": _words_array(sorted(words | {w.replace("'", "") for w in words if "'" in w}))}

    return frozenset(_array_words(cached_arrays("spelling_english", content_key("english/1", text),
                                                compute)["words"]))


def store_vocabulary(extra: Iterable[str] = ()) -> Counter[str]:
    """The store's words: intent examples, the store's pages, the grounding data's words (everyday
    product and option names among them), and `extra` (the catalogue's product names and option
    values)."""
    counts = Counter(_fixed_vocabulary())
    for phrase in extra:
        counts.update(_WORD.findall(str(phrase).lower()))
    return counts


@lru_cache(maxsize=1)
def _fixed_vocabulary() -> Counter[str]:
    """The English words of the intent examples and every word of the store's pages and of the
    grounding data files (synonyms, return conditions, status words, comparatives), counted."""
    import numpy as np

    from csagent.nlp.fixed_vectors import cached_arrays, content_key
    from csagent.nlp.intents import load_examples

    # The files as text, through the csagent package (already imported): naming the subpackages
    # would import csagent.knowledge just to find its folder.
    package = resources.files("csagent")
    docs = package.joinpath("knowledge", "docs")
    pages = [page.read_text(encoding="utf-8") for page in sorted(docs.iterdir(), key=lambda p: p.name)
             if page.name.endswith(".md")]
    # (every word grounding reads is one of the store's: "I swatched it once" is never "scratched")
    synonyms = [package.joinpath("grounding", "data", name).read_text(encoding="utf-8")
                for name in ("product_synonyms.json", "option_synonyms.json", "return_conditions.json",
                             "status_words.json", "comparatives.json")]
    examples_file = package.joinpath("nlp", "data", "intents.jsonl").read_text(encoding="utf-8")

    def compute() -> dict[str, Any]:
        counts: Counter[str] = Counter()
        # The examples are written as customers write, misspellings included ("cancle my order"):
        # only their English words are the store's; its own terms come from its pages and names.
        english = english_words()
        for example in load_examples("intents.jsonl"):
            counts.update(w for w in _WORD.findall(example.text.lower()) if w in english)
        for text in [*pages, *(_values_text(json.loads(raw)) for raw in synonyms)]:
            counts.update(_WORD.findall(text.lower()))
        words = sorted(counts)
        return {"words": _words_array(words), "counts": np.array([counts[w] for w in words], dtype=np.int64)}

    key = content_key("store-words/3", _WORD.pattern, examples_file, pages, synonyms)
    arrays = cached_arrays("spelling_store_words", key, compute)
    return Counter(dict(zip(_array_words(arrays["words"]), arrays["counts"].tolist(), strict=True)))


def _values_text(data: Any) -> str:
    """Every key and value of a data file except its `_about` notes, as one text."""
    if isinstance(data, dict):
        return " ".join(f"{k} {_values_text(v)}" for k, v in data.items() if not str(k).startswith("_"))
    if isinstance(data, list):
        return " ".join(_values_text(v) for v in data)
    return str(data)


@lru_cache(maxsize=4)
def corrector(extra: frozenset[str] = frozenset()) -> SpellingCorrector:
    """The store's corrector; `extra`: the catalogue's own words (product names, option values)."""
    data = json.loads(_data("spelling.json"))
    return SpellingCorrector(english_words() | set(data["keep"]), store_vocabulary(extra), data["aliases"])


def warm_up() -> None:
    """Load the word lists now (SnapStart's before-snapshot hook), not on the first message."""
    english_words()
    _fixed_vocabulary()
