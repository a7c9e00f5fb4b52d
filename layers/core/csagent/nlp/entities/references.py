"""References the caller must resolve ("those headphones", "that order", "my last order", "it",
"这个订单"), and the resolution of a product reference against the products of the customer's
orders."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from csagent.nlp.entities.products import catalogue_entries, name_similarity
from csagent.nlp.entities.words import TOKEN_RE, alternation, singular, terms


@dataclass(frozen=True, slots=True)
class Reference:
    """An anaphoric mention the caller must resolve ("those headphones", "that order", "it").

    `hint` is the product words ("headphones") or None for generic references; `latest` is set
    for "my last order"-style references.
    """

    kind: Literal["product", "order"]
    hint: str | None = None
    surface: str = ""
    span: tuple[int, int] = (0, 0)
    latest: bool = False


_STOP = frozenset({"is", "are", "was", "were", "to", "for", "on", "in", "at", "of", "with", "and", "or",
                   "i", "you", "it", "please", "be", "been", "has", "have", "had", "under", "still",
                   "from", "by", "about", "that", "this", "those", "these", "there", "here", "a", "an",
                   "the", "so", "but", "if", "do", "does", "did", "can", "could", "will", "would",
                   "what", "when", "where", "how", "why", "which", "who", "not", "no", "yes", "just",
                   "me", "my", "your", "we", "they", "them", "he", "she", "its", "am", "arrive",
                   "arrived", "came", "come", "broke", "broken", "work", "works", "ship", "shipped"})
_NON_PRODUCT = frozenset({"address", "account", "refund", "money", "card", "email", "name", "payment",
                          "profile", "question", "problem", "issue", "time", "day", "week", "month",
                          "year", "way", "case", "policy", "reply", "answer", "message", "chat",
                          "number", "tracking", "status", "one's", "information", "info", "help"})


def _ref_terms() -> dict[str, Any]:
    return terms()["reference"]


def find_references(text: str, catalogue: Sequence[Mapping[str, Any]] | None = None) -> list[Reference]:
    """Anaphoric product and order references, in order of appearance.

    English: a demonstrative ("that", "those", "my" …) followed by up to three words ending in a
    noun: an order noun → order reference ("that order", "my last order" with `latest=True`);
    a generic noun → product reference without hint ("that item"); any other noun (or a
    catalogue product) → product reference with that noun as hint ("those headphones").
    Pronouns "it"/"them" are product references unless an order verb governs them ("ship it").
    Chinese: 这个/那个 + 订单 → order, + 商品/东西 → product; 它 → product.
    """
    rt = _ref_terms()
    refs: list[Reference] = []
    lowered = text.lower()
    toks = [(m.group(0).lower().replace("’", "'"), m.start(), m.end()) for m in TOKEN_RE.finditer(text)]
    demonstratives = {d for d in rt["demonstratives"] if " " not in d}
    generic = set(rt["generic_product_nouns"])
    order_nouns = set(rt["order_nouns"])
    latest_words = {w for w in rt["latest_words"] if " " not in w}
    product_words: set[str] = set()
    for entry in catalogue_entries(catalogue or []):
        product_words.update(entry.tokens)
    covered: list[tuple[int, int]] = []

    for i, (tok, _, _) in enumerate(toks):
        if tok not in demonstratives:
            continue
        ref = _reference_after(text, toks, i, generic=generic, order_nouns=order_nouns,
                               latest_words=latest_words, product_words=product_words)
        if ref is not None:
            refs.append(ref)
            covered.append(ref.span)

    # Pronouns: "it" / "them", kind decided by the verb just before ("ship it" is an order).
    order_verbs = set(rt["order_verbs"])
    pronouns = set(rt["pronouns"]) - {"they"}
    for i, (tok, start, end) in enumerate(toks):
        if tok not in pronouns or any(a <= start < b for a, b in covered):
            continue
        if tok == "it" and _IDIOMATIC_IT.match(lowered[end:end + 16]):
            continue  # "it's been a week", "it takes", "is it possible": not a thing
        before = [t for t, _, _ in toks[max(0, i - 3):i]]
        kind: Literal["product", "order"] = "order" if any(v in order_verbs for v in before) else "product"
        refs.append(Reference(kind, None, text[start:end], (start, end)))

    refs.extend(_zh_references(text))
    refs.sort(key=lambda r: r.span[0])
    return refs


_IDIOMATIC_IT = re.compile(r"(?:\s*(?:'s|’s|\s+is|\s+has))?\s+(?:been|possible|okay|ok|fine|true|time)\b"
                           r"|\s+(?:takes?|seems?|says?|means?|costs?|depends)\b")


def _reference_after(text: str, toks: Sequence[tuple[str, int, int]], i: int, *, generic: set[str],
                     order_nouns: set[str], latest_words: set[str],
                     product_words: set[str]) -> Reference | None:
    """The reference opened by the demonstrative at toks[i], if the words after it make one."""
    demonstrative, start = toks[i][0], toks[i][1]
    phrase: list[str] = []
    latest = False
    end = toks[i][2]
    for j in range(i + 1, min(i + 5, len(toks))):
        word, w_start, w_end = toks[j]
        if text[toks[j - 1][2]:w_start].strip():
            break  # punctuation ends the noun phrase
        if word in latest_words or word in {"most", "same", "very", "exact", "exactly", "identical"}:
            latest = latest or word in latest_words
            end = w_end
            continue
        if word in order_nouns:
            if re.match(r"\s*(?:number|id|no\.?)?\s*#?[Ww]\d{7}", text[w_end:w_end + 16]):
                return None  # "the order #W…" names the order explicitly
            return Reference("order", None, text[start:w_end], (start, w_end), latest)
        if word in generic:
            return Reference("product", " ".join(phrase) or None, text[start:w_end], (start, w_end), latest)
        if word in _STOP or word in _NON_PRODUCT or word.isdigit():
            break
        phrase.append(word)
        end = w_end
    if not phrase:
        return None
    mentions_product = any(singular(w) in product_words for w in phrase)
    if product_words and not mentions_product:
        return None  # with a catalogue, "that blue thing I like" needs a product word
    if demonstrative == "my" and not mentions_product:
        return None  # "my wife", "my new place": after "my" only catalogue words count
    return Reference("product", " ".join(phrase), text[start:end], (start, end), latest)


def _zh_references(text: str) -> list[Reference]:
    rt = _ref_terms()
    dem = alternation(rt["zh_demonstratives"])
    out: list[Reference] = []
    for m in re.finditer(rf"(?:{dem})(?:个|些|款|件|双|副)?(?:{alternation(rt['zh_order_nouns'])})", text):
        out.append(Reference("order", None, m.group(0), m.span()))
    for m in re.finditer(rf"(?:{dem})(?:个|些|款|件|双|副)?(?:{alternation(rt['zh_product_nouns'])})", text):
        out.append(Reference("product", None, m.group(0), m.span()))
    for m in re.finditer(r"它们?", text):
        out.append(Reference("product", None, m.group(0), m.span()))
    return out


def rank_product_candidates(hint: str | None, candidates: Sequence[Mapping[str, Any]]
                            ) -> list[tuple[float, dict[str, Any]]]:
    """Candidates (deduplicated by product id, first occurrence kept) with their similarity to
    the hint, best first. Without a hint every candidate scores 0."""
    seen: dict[str, dict[str, Any]] = {}
    for c in candidates:
        seen.setdefault(str(c.get("product_id") or c.get("name")), dict(c))
    scored = [(name_similarity(hint, c["name"]) if hint else 0.0, c) for c in seen.values()]
    return sorted(scored, key=lambda sc: -sc[0])


def resolve_product_reference(reference: Reference | None, candidates: Sequence[Mapping[str, Any]], *,
                              min_score: float = 0.6, margin: float = 0.1) -> dict[str, Any] | None:
    """The candidate product a reference points to, or None when it cannot be decided.

    `candidates` are products from the customer's orders: `{product_id, name, order_id}`.
    With a hint ("headphones"), the best name match wins if it scores at least `min_score` and
    beats the next product by `margin`; a hint that fits nothing resolves to None even with a
    single candidate (better to ask than to act on the wrong item). Without a hint, a single
    distinct product is the answer; several are ambiguous (None: the caller asks which).
    """
    ranked = rank_product_candidates(reference.hint if reference else None, candidates)
    if not ranked:
        return None
    if reference is None or not reference.hint:
        return ranked[0][1] if len(ranked) == 1 else None
    best_score, best = ranked[0]
    if best_score < min_score:
        return None
    if len(ranked) > 1 and best_score - ranked[1][0] < margin:
        return None
    return best
