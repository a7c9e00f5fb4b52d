"""Clause splitting: one customer message → the separate requests it holds.

"where is order #W2611340, what is the warranty on those headphones, and ship it to my new
address: 12 Main St, Springfield, IL 62704" → three clauses, each classified and planned on its
own.

Rules, in order:
1. Protected spans are never split: postal addresses, e-mails, order ids, decimals, and
   abbreviations such as "St." or "e.g.".
2. Hard boundaries: sentence ends (. ? ! 。 ？ ！), semicolons and line breaks.
3. Soft boundaries — a comma (, ，), " + ", "and", "and also", "also", "plus", 另外, 还有 … —
   split only when both sides are requests: the right side must open with a
   request word ("what", "ship", "can", "I", 我, 帮, 请 …) and the left side must be a request of
   its own, once a preamble that announces the requests ("Two things: …") is set aside; the
   preamble stays with the first request. So "a red and blue
   shirt" and "the shirt, the hat and the bottle" stay whole, while "cancel it and refund me" splits.
   A right side whose verb carries a question ("… and also know how long refunds take") opens a
   request too.
4. Order-anchored boundaries: a soft boundary between two sides that each name their own order id
   also splits when the right side says something of its own about its order ("an update on order
   #W1, as well as a list of the items in order #W2"). A bare list of ids ("#W1 and #W2 for me")
   stays one clause: the planner gives each of its ids a task.

5. A sentence that only narrows the one before it ("Not the card I pay with.") stays with it.

Lossless by construction: `segment` returns clauses whose `raw` slices concatenate to the input;
`text` is the raw slice without the connector, surrounding punctuation and spaces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from csagent.nlp.entities.addresses import address_pattern
from csagent.nlp.entities.identifiers import EMAIL_RE, ORDER_ID_RE
from csagent.nlp.entities.words import terms
from csagent.nlp.speech_acts import asks_for_change


@dataclass(frozen=True, slots=True)
class Clause:
    """One request in a message: `text` is cleaned, `raw` is the exact slice at `start:end`."""

    text: str
    raw: str
    start: int
    end: int


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# A piece that is only this ("..., please?") is part of the request beside it.
# thanks stay a clause of their own; "请问一下，..." ("may I ask, ...") opens the question after it
_COURTESY = frozenset({"please", "pls", "plz", "请", "请问", "请问一下", "问一下", "麻烦问一下", "打扰一下"})
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# A request that names nothing of its own ("could you check for me?", "can u look into it pls", "Fix it.",
# "Could you change that for me, please?").
_BARE_REQUEST = re.compile(
    r"(?:(?:and|so|but)\s+)?(?:please\s+|pls\s+)?(?:(?:could|can|would|will)\s+(?:you|u)\s+(?:please\s+|pls\s+)?)?"
    r"(?:check|look|look into|find out|see|confirm|help|sort it out|sort that out|fix|handle|take care of"
    r"|deal with|change|update|do)"
    r"(?:\s+(?:it|that|this|for me|on that|on it|into it|into that|please|pls|quickly|asap|again|or not"
    r"|already|now|right now|today|then))*\W*",
    re.IGNORECASE)
# A sentence that only narrows the one before it, with no verb of its own ("If I return something,
# the money can go to my other card? Not the card I pay with."): part of that sentence's request.
_NARROWING = re.compile(r"(?:but\s+|and\s+)?not\s+(?:the|a|an|my|this|that|on|to|in|into|from|for|with)\s+"
                        r"[^,;:]*$", re.IGNORECASE)
_DECIMAL = re.compile(r"\d\.\d")
# A short announcement before the requests (four words at most): "Two things, please:", "quick one -".
# (a colon may end a longer one: "Two quick questions about my robot vacuum: could you ...")
_PREAMBLE = re.compile(r"^\s*((?:[\w'’]+[\s,]*){1,8}?)\s*:\s*|^\s*((?:[\w'’]+[\s,]*){1,4}?)\s*\s[-–—]\s\s*")
# Sentence ends: punctuation, and in chat an emoji between two sentences ("hasn't arrived yet but
# I like to be prepared 😊 how long is the warranty on it"). (Pictographs, dingbats and symbols.) So is
# a typed smiley: "hiii how r u today :) quick q, can i take the earbuds swimming?"
_HARD = re.compile(r"[?!？！。；;\n]+|\.+(?=\s|$)|[\u2600-\u27bf\U0001f300-\U0001faff][\ufe0f\u200d"
                   r"\u2600-\u27bf\U0001f300-\U0001faff\U0001f3fb-\U0001f3ff]*(?=\s)"
                   r"|(?<=\s)(?:[:;=]-?[)(DPp3]+|<3+|xD+|XD+)(?=\s|$)")
_EDGE_PUNCT = " \t\r\n,，;；:：.。!！、-–—"
# Words that open a question inside a clause ("… and also know how long refunds take").
EMBEDDED_QUESTION_WORDS = frozenset({"how", "what", "when", "where", "why", "whether", "if"})


def _connector_alternatives() -> tuple[str, str]:
    """Regex alternations of the English and Chinese connectors, longest first."""
    t = terms()
    en = sorted(t["connectors_en"], key=len, reverse=True)
    zh = sorted(t["connectors_zh"], key=len, reverse=True)
    return ("|".join(re.escape(c).replace(r"\ ", r"\s+") for c in en), "|".join(re.escape(c) for c in zh))


@lru_cache(maxsize=1)
def _soft() -> re.Pattern[str]:
    """A soft boundary: comma and/or connector ("and also", "plus", 另外 …)."""
    en, zh = _connector_alternatives()
    # Group 1: what the clause boundary consumes (comma and/or connector).
    # A plus or ampersand only between spaces ("the warranty + when does it ship").
    marks = r"(?:[,，、]|\s[+&](?=\s))"
    return re.compile(
        rf"(\s*{marks}\s*(?:(?:{en})\b\s*|(?:{zh})\s*)?|\s+(?:{en})\b\s*|\s*(?:{zh})\s*)",
        re.IGNORECASE,
    )


@lru_cache(maxsize=1)
def _leading_connector() -> re.Pattern[str]:
    """Punctuation and one connector at the start of a clause ("and also", ", plus", 另外)."""
    en, zh = _connector_alternatives()
    return re.compile(rf"^[\s,，、;；:：.。!！+&]*(?:(?:{en})\b|(?:{zh}))?[\s,，、:：]*", re.IGNORECASE)


@lru_cache(maxsize=1)
def _abbreviation() -> re.Pattern[str]:
    abbr = "|".join(re.escape(a) for a in sorted(terms()["abbreviations"], key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z])(?:{abbr})\.", re.IGNORECASE)


def _protected(text: str) -> list[bool]:
    """Per character: True where no boundary may start (addresses, e-mails, ids, decimals,
    abbreviations)."""
    mask = [False] * len(text)

    def protect(a: int, b: int) -> None:
        for i in range(max(a, 0), min(b, len(text))):
            mask[i] = True

    for m in address_pattern().finditer(text):
        protect(m.start(), m.end())
    for pattern in (EMAIL_RE, ORDER_ID_RE):
        for m in pattern.finditer(text):
            protect(m.start(), m.end())
    for m in _DECIMAL.finditer(text):
        protect(m.start(), m.end())
    for m in _abbreviation().finditer(text):
        protect(m.start(), m.end())
    return mask


def _first_word(text: str) -> str:
    m = _WORD.search(text)
    return m.group(0).lower().replace("’", "'") if m else ""


def _word_count(text: str) -> int:
    return len(_WORD.findall(text))


def _is_cjk(text: str) -> bool:
    cjk = len(_CJK.findall(text))
    return cjk > 0 and cjk * 2 >= _word_count(text)


def _starts_request(text: str) -> bool:
    """Does this side open like a request ("what…", "ship…", "I…", 我…, 帮…)?"""
    t = terms()
    stripped = text.strip(_EDGE_PUNCT)
    if _is_cjk(stripped):
        return any(stripped.startswith(s) for s in t["zh_request_starters"])
    first = _first_word(stripped)
    if first in _SOFTENERS:  # "..., just send it to 57 Lakeshore Blvd": the verb after it opens
        first = _first_word(stripped[stripped.lower().index(first) + len(first):])
    return first in t["request_starters"] or first in t["standalone_words"]


# Words a request may open with before its verb.
_SOFTENERS = frozenset({"just", "simply", "instead"})


def _opens_embedded_question(text: str) -> bool:
    """Does this side open with a verb that carries a question ("know how long refunds take",
    "find out when it ships")? The verb is not a request word of its own, the question word is."""
    stripped = text.strip(_EDGE_PUNCT)
    if _is_cjk(stripped):
        return False
    words = [w.lower() for w in _WORD.findall(stripped)[:3]]
    if len(words) < 3 or words[0] in terms()["request_starters"]:
        return False
    return words[1] in EMBEDDED_QUESTION_WORDS or (words[1] == "out" and words[2] in EMBEDDED_QUESTION_WORDS)


# A subordinate clause: a condition, or a time clause ("when a refund goes to a card", "once it
# ships"); "when" followed by an auxiliary asks a question of its own ("when will it ship, and ...").
_AUXILIARY = r"(?:will|would|do|does|did|is|are|was|were|can|could|should|shall|might|may|has|have|had|am)"
_CONDITION = re.compile(
    r"^\W*(?:if|unless|in case|suppose|supposing|assuming|provided|once|whenever"
    rf"|when(?!\s+{_AUXILIARY}\b|['’]s\b))\b[^,，;]*$"
    r"|^\W*(?:如果|要是|假如|假设|万一)[^,，;；。？?]*$",  # "如果我把那副太阳镜的订单取消，能退回多少钱？"
    re.IGNORECASE)


def _is_condition(text: str) -> bool:
    """Is this side nothing but a condition or a time clause ("if I cancel order #W1", "in case it's
    lost", "when I cancel an order paid with PayPal")? It belongs to what follows it, never a request
    of its own."""
    return bool(_CONDITION.match(text.strip()))


# A fronted topic: "For the vacuum cleaner I received in #W1, how often …", "About my refund, …".
_TOPIC_PREPOSITIONS = frozenset({"for", "about", "regarding", "concerning", "re"})
# Request starters that are no verb of a request: who asks, and the words a question opens with.
_NOT_VERBS = frozenset({"i", "i'd", "i'm", "im", "i've", "i'll", "we", "we'd", "we're", "my", "any", "also",
                        "then", "what", "what's", "whats", "where", "where's", "wheres", "when", "when's",
                        "which", "who", "whose", "why", "how", "how's", *_AUXILIARY[3:-1].split("|")})


def _is_topic_frame(text: str) -> bool:
    """Is this side only a fronted topic, a preposition and what it names ("For the vacuum cleaner I
    received in #W1", "about my refund")? It says what the next side asks about, and asks nothing
    itself: none of its words is a request verb ("for #W1 I want a refund" asks)."""
    words = [w.lower().replace("’", "'") for w in _WORD.findall(text.strip(_EDGE_PUNCT))]
    if len(words) < 2 or words[0] not in _TOPIC_PREPOSITIONS:
        return False
    return not (set(terms()["request_starters"]) - _NOT_VERBS) & set(words[1:])


def _is_request(text: str) -> bool:
    """Is this whole side a request (or a greeting/thanks that stands alone)?"""
    t = terms()
    stripped = text.strip(_EDGE_PUNCT)
    if not stripped:
        return False
    if _is_cjk(stripped):
        cjk = len(_CJK.findall(stripped))
        return cjk >= 2 and (any(stripped.startswith(s) for s in t["zh_request_starters"])
                             or any(q in stripped for q in t["zh_question_markers"]))
    words = [w.lower() for w in _WORD.findall(stripped)]
    social = set(t["standalone_words"]) | {"you", "so", "much", "there", "all"}
    if words and all(w in social for w in words):
        return True
    while len(words) > 2 and words[0] in t["standalone_words"]:
        words = words[1:]  # "hello i need help": the greeting opens a request
    return len(words) >= 2 and (words[0] in t["request_starters"] or bool(ORDER_ID_RE.search(stripped)))


def _ends_with_verb(text: str) -> bool:
    """"return and refund the shirt": coordinated verbs share the object, so no split."""
    words = _WORD.findall(text)
    if not words:
        return False
    last = words[-1].lower()
    verbs = set(terms()["request_starters"]) - {"i", "i'd", "i'm", "im", "i've", "i'll", "we", "my", "please"}
    return last in verbs


# A thing named alone after a connector ("... and my tablet", "and the blue mug too"): no verb of its own.
_BARE_THING = re.compile(r"(?:my|the|a|an|those|these|that|this|both|your)\s+"
                         r"(?!(?:is|are|was|were|has|have|did|does|do|can|will|should)\b)[\w-]+"
                         r"(?:\s+(?!(?:is|are|was|were|has|have|had|did|does|do|can|will|should|please|pls)\b)"
                         r"[\w-]+){0,3}(?:\s+(?:too|as well|also))?", re.IGNORECASE)
# A modal or auxiliary ending the left side, its subject after it or not: a connector after it is
# inside one verb phrase ("would also change", "can also send", "could I also send back").
_AUXILIARY_AT_END = re.compile(r"\b(?:would|will|could|can|should|might|may|must|does|did)"
                               r"(?:\s+(?:i|you|u|we|they|he|she|it|ya))?\s*$", re.IGNORECASE)
_COURTESY_AFTER = re.compile(r"\s+(?:please|pls|plz|too|as well|also)\W*$", re.IGNORECASE)


def _names_only_an_order(text: str) -> bool:
    """ "my bookshelf order", "我那个装书架的订单": a side that only names an order (it ends with an
    order noun and holds no question or request word) is the topic of the request after it."""
    t = terms()
    stripped = text.strip(_EDGE_PUNCT)
    if _is_cjk(stripped):
        return stripped.endswith(tuple(t["reference"]["zh_order_nouns"])) and not any(
            q in stripped for q in t["zh_question_markers"])
    words = [w.lower() for w in _WORD.findall(stripped)]
    asking = set(t["request_starters"]) - {"my", "the"}
    if ORDER_ID_RE.fullmatch(_LEADING_FILLERS.sub("", stripped)):
        return True  # "ok and W9728773, how many puzzles are in that one": the order, then its question
    return 0 < len(words) <= 6 and words[-1] in t["reference"]["order_nouns"] and not asking & set(words)


# Words before an order id that leave it naming only the order ("ok and #W1", "also W2").
_LEADING_FILLERS = re.compile(r"^(?:(?:ok|okay|and|so|also|then|now|oh|k)\W+)*", re.IGNORECASE)


def _own_order_request(left: str, right: str) -> bool:
    """Do both sides name their own order id, the right one with words of its own beyond the id?

    Two words of its own ("the items in order #W2"), or one that opens the side before its id,
    the way the left side's request did ("refund status for #W1, tracking for #W2"). A word after
    a bare id ("#W1 and #W2 asap") is no request of its own.
    """
    right_id = ORDER_ID_RE.search(right)
    if not (ORDER_ID_RE.search(left) and right_id):
        return False
    fillers = set(terms()["order_list_fillers"])
    words = [w.lower() for w in _WORD.findall(ORDER_ID_RE.sub(" ", right))]
    own = [w for w in words if w not in fillers]
    opening = [w for w in _WORD.findall(right[:right_id.start()].lower()) if w not in fillers]
    if not opening and own and own[0] in _COMPLEMENT_OPENERS:
        return False  # "send #W1 and #W2 to my sister's place": the ids share one request
    return len(own) >= 2 or bool(opening)


# Words that continue the request before a bare id rather than open one of its own.
_COMPLEMENT_OPENERS = frozenset({"to", "for", "from", "at", "into", "onto", "with", "instead", "both", "as",
                                 "too", "back", "over"})


def _only_courtesy(cleaned: str) -> bool:
    """Is a cleaned piece only a courtesy word (", please?", "请问一下，")?"""
    return cleaned.lower().strip(" ?!.") in _COURTESY


def _clean(raw: str) -> str:
    """Drop surrounding spaces/punctuation and a leading connector; keep a final '?'."""
    text = raw.strip()
    m = _leading_connector().match(text)
    if m and m.end() < len(text):
        text = text[m.end():]
    while text != (trimmed := text.strip(_EDGE_PUNCT).strip()):  # also other spaces (no-break, em)
        text = trimmed
    return text


def _hard_pieces(text: str, mask: list[bool]) -> list[tuple[int, int]]:
    pieces: list[tuple[int, int]] = []
    start = 0
    for m in _HARD.finditer(text):
        if any(mask[m.start():m.end()]):
            continue
        pieces.append((start, m.end()))
        start = m.end()
    pieces.append((start, len(text)))
    return [(a, b) for a, b in pieces if a < b]


def _after_preamble(text: str) -> str:
    """ "Two things, please: where is my order": what follows a colon (or dash) that ends the
    preamble; the text itself when there is none."""
    m = _PREAMBLE.match(text)
    return text[m.end():] if m and not _is_request(m.group(1) or m.group(2)) else text


def _soft_cuts(text: str, a: int, b: int, mask: list[bool]) -> list[int]:
    """Positions inside text[a:b] where a new clause starts (at the connector)."""
    piece = text[a:b]
    cuts: list[int] = []
    last = a
    matches = [m for m in _soft().finditer(piece) if m.start() > 0 and not mask[a + m.start()]]
    for idx, m in enumerate(matches):
        cut = a + m.start()
        left = text[last:cut]
        nxt = a + matches[idx + 1].start() if idx + 1 < len(matches) else b
        right = text[a + m.end():b]
        right_local = text[a + m.end():nxt]
        connector = m.group(1).strip(" ,，、").lower()
        after_comma = bool(re.search(r"[,，、]", m.group(1)))
        if connector in terms()["connectors_zh_need_comma"] and not after_comma:
            continue  # bare 还有 is also "still" (我的订单还有多久到)
        if not right.strip(_EDGE_PUNCT) or not left.strip(_EDGE_PUNCT):
            continue
        if _is_condition(left) or _is_topic_frame(left):
            continue  # "If I cancel order #W1, how much would I get back?": one question
        if not after_comma and _AUXILIARY_AT_END.search(left):
            continue  # "whether updating my address would also change where #W1 goes": one verb phrase
        opens = _starts_request(right_local or right) or _opens_embedded_question(right_local or right)
        asks = opens and (_is_request(left) or _is_request(_after_preamble(left)))
        if not asks and not _own_order_request(left, right_local or right):
            continue
        if _names_only_an_order(text[last:cut]):
            continue
        if connector in {"and", "or"} and _names_only_an_order(_COURTESY_AFTER.sub("", re.split(
                r"[,;，；]", right_local or right)[0])):
            continue  # "cancel my yoga mat order and my makeup kit order please": one verb for both
        if connector in {"and", "or", "plus", "&"} and asks_for_change(left) \
                and _BARE_THING.fullmatch((right_local or right).strip(_EDGE_PUNCT)):
            continue  # "please send back my pet bed and my tablet": one verb for both things
        if _BARE_REQUEST.fullmatch((right_local or right).strip(_EDGE_PUNCT)):
            continue  # "no idea how much is left on it, could you check for me?": what it asks is the left
        if connector == "and" and _ends_with_verb(left) \
                and _first_word((right_local or right).strip(_EDGE_PUNCT)) not in EMBEDDED_QUESTION_WORDS:
            continue  # (a question word after it opens a question: "what size it is, and whether ...")
        cjk_connector = bool(_CJK.search(connector))
        if (cjk_connector or _is_cjk(right)) and len(_CJK.findall(right)) < 2 and _word_count(right) < 2:
            continue
        cuts.append(cut)
        last = cut
    return cuts


def segment(text: str) -> list[Clause]:
    """Split a message into clauses (see the module docstring for the rules).

    Lossless: "".join(c.raw for c in clauses) == text whenever text has a non-space character.
    Never returns an empty clause: a piece with nothing but punctuation or a connector is merged
    into its neighbour. Whitespace-only input gives [].
    """
    if not text or not text.strip():
        return []
    mask = _protected(text)
    bounds: list[int] = [0]
    for a, b in _hard_pieces(text, mask):
        if a:
            bounds.append(a)
        bounds.extend(_soft_cuts(text, a, b, mask))
    bounds = sorted(set(bounds)) + [len(text)]
    spans = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1) if bounds[i] < bounds[i + 1]]

    # Merge pieces that hold no words (only punctuation, connectors or courtesy: ", please?")
    # into a neighbour.
    merged: list[list[int]] = []
    for s, e in spans:
        cleaned = _clean(text[s:e])
        has_content = bool(_WORD.search(cleaned)) and not _only_courtesy(cleaned)
        before = _clean(text[merged[-1][0]:merged[-1][1]]) if merged else ""
        # (a piece before that is only courtesy, "请问一下，", opens this one)
        previous_empty = bool(merged) and (not _WORD.search(before) or _only_courtesy(before))
        narrows = bool(merged) and bool(_NARROWING.fullmatch(cleaned.strip(" .!?")))
        # ("... the address is right there on my account. Fix it.": what it asks is the one before)
        bare = bool(merged) and bool(_BARE_REQUEST.fullmatch(cleaned.strip(" .!?")))
        if merged and (not has_content or previous_empty or narrows or bare):
            merged[-1][1] = e
        else:
            merged.append([s, e])
    clauses: list[Clause] = []
    for s, e in merged:
        raw = text[s:e]
        cleaned = _clean(raw) or raw.strip()
        clauses.append(Clause(cleaned, raw, s, e))
    return clauses


def split_clauses(text: str) -> list[str]:
    """The cleaned clause texts of a message, in order (never empty strings)."""
    return [c.text for c in segment(text)]
