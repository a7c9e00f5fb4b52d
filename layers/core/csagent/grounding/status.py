"""Which order statuses a customer's words describe: "which haven't shipped" is the pending ones,
"the one that's on its way" the processed one, "hasn't arrived yet" pending or processed. The
words are data (`data/status_words.json`, Chinese phrases too); negation is read structurally (a
negation word up to three words before the status phrase), so "shipped" and "hasn't shipped"
never mean the same."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

#: The statuses an order moves through; the actions add suffixes ("pending (item modified)").
STORE_STATUSES: tuple[str, ...] = ("pending", "processed", "delivered", "cancelled")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


@cache
def _data() -> dict[str, Any]:
    raw = json.loads(
        resources.files("csagent.grounding").joinpath("data", "status_words.json").read_text("utf-8")
    )
    phrases = {tuple(k.split()): v for k, v in raw["phrases"].items()}
    return {"negation": [tuple(n.split()) for n in raw["negation"]], "phrases": phrases, "zh": raw["zh"]}


def _words(text: str) -> list[str]:
    words: list[str] = []
    for word in _WORD.findall(text.lower().replace("’", "'")):
        if word.endswith("n't"):
            words += [word[:-3], "n't"]  # "hasn't" -> "has", "n't"
        else:
            words.append(word.replace("'", ""))
    return words


def _negated(words: list[str], start: int, negations: list[tuple[str, ...]]) -> bool:
    before = words[max(0, start - 3) : start]
    # (a determiner between them makes the status a word of the order's name, not what is denied:
    # "I won't need my pending order anymore")
    return any(
        tuple(before[i : i + len(n)]) == n and not set(before[i + len(n):]) & _DETERMINERS
        for n in negations for i in range(len(before) - len(n) + 1)
    ) or tuple(before[-2:]) in _NOT_THE \
        or bool(_NONE_OF_THEM.search(" ".join(words[max(0, start - 8) : start]))) \
        or bool(_NOT_THOSE.search(" ".join(words[max(0, start - 6) : start]))) \
        or _negated_question(words[max(0, start - 10) : start])


_DETERMINERS = frozenset({"my", "the", "your", "our", "this", "that", "these", "those", "a", "an", "his",
                          "her"})
# "not" right before the determiner of the orders the status names, no verb between them: those
# orders ruled out ("only the ones that went thru, not the canceled ones").
_NOT_THE = frozenset({("not", "the"), ("not", "those"), ("not", "these"), ("not", "my"), ("not", "any")})


# An auxiliary with its "not" before the subject of a question: "why hasn't a SINGLE one of my open
# orders shipped yet", "how come my lamp and my mug haven't ... ", "hasn't the kettle arrived?".
_AUXILIARIES = frozenset({"has", "have", "did", "does", "do", "is", "are", "was", "were"})
_CLAUSE_JOINS = frozenset({"and", "but", "or", "so", "then", "because", "while", "though"})


def _negated_question(before: list[str]) -> bool:
    """Do the words before a status phrase end with a negated auxiliary and then its subject (no
    other status phrase, no clause joined in between)?"""
    single = {phrase[0] for phrase in _data()["phrases"] if len(phrase) == 1}
    for i in range(len(before) - 2, -1, -1):
        if before[i] in _AUXILIARIES and before[i + 1] in ("n't", "not"):
            between = before[i + 2:]
            return len(between) > 0 and not set(between) & (_CLAUSE_JOINS | single)
    return False


# A subject that counts nothing, then its verb: "NOT ONE of them has shipped", "none of my orders
# have arrived", "neither of the packages was delivered".
# "the hiking boots i already got (not the ones still coming)": the orders the status names ruled out
# (a determiner after "not" names them: "not the ones", "not those").
_NOT_THOSE = re.compile(r"\bnot (?:the|those|these) (?:ones?|orders?|pairs?|items?)(?: \w+){0,2}$")
_NONE_OF_THEM = re.compile(r"\b(?:none|neither|not one|not a single|not any)(?: of)?(?: \w+){0,3}"
                           r" (?:has|have|had|is|are|was|were|did)(?: been| even| yet| actually| ever)*$")


def _described(text: str) -> list[tuple[str, ...]]:
    """What each status phrase of the text describes, in the order they come."""
    data = _data()
    found: list[tuple[int, tuple[str, ...]]] = []
    for phrase, statuses in sorted(data["zh"].items(), key=lambda kv: -len(kv[0])):
        at = text.find(phrase)
        if at >= 0 and not any(at <= p < at + len(phrase) for p, _ in found):
            found.append((at, tuple(statuses)))
    words = _words(_WHERE_IT_WILL_GO.sub(" to", _AMOUNT_CAME_TO.sub(" ", text)))
    start = 0
    while start < len(words):
        for phrase, meaning in sorted(data["phrases"].items(), key=lambda kv: -len(kv[0])):
            if tuple(words[start : start + len(phrase)]) != phrase:
                continue
            statuses = meaning["negated"] if _negated(words, start, data["negation"]) else meaning["is"]
            if statuses:
                found.append((len(text) + start, tuple(statuses)))
            start += len(phrase) - 1
            break
        start += 1
    return [statuses for _, statuses in sorted(found)]


def without_status_words(text: str) -> str:
    """The words with the status phrases left out ("total on my pending order?" -> "total on my
    order?"): what is asked of an order the status words only picked out."""
    zh, english = _status_phrases()
    for phrase in zh:
        text = text.replace(phrase, " ")
    return " ".join(english.sub(" ", text).split())


@cache
def _status_phrases() -> tuple[list[str], re.Pattern[str]]:
    """The Chinese status phrases, longest first, and one pattern for the English ones (built once)."""
    data = _data()
    english = sorted((" ".join(p) for p in data["phrases"]), key=len, reverse=True)
    pattern = r"\b(?:" + "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in english) + r")\b"
    return sorted(data["zh"], key=len, reverse=True), re.compile(pattern, re.IGNORECASE)


# "what it came to in total", "how much did the order come to": an amount, not an arrival
_AMOUNT_CAME_TO = re.compile(
    r"\b(?:what|how much)\b(?:\s+\S+){0,3}?\s+(?:came|comes|come)\s+to\b"
    r"|\b(?:came|comes|come)\s+to\s+(?=in total|in all|altogether|\$|\d|about|around|roughly)", re.IGNORECASE)


# "which address is it being shipped to", "is my order going to be sent to Denver": where an order
# goes, not how far it has got
_WHERE_IT_WILL_GO = re.compile(
    r"\b(?:being|be|getting|get)\s+(?:shipped|sent|delivered|mailed|posted)\s+to\b", re.IGNORECASE)


def statuses_described(text: str) -> tuple[str, ...] | None:
    """The statuses the words describe, None when they name none. Several phrases narrow each
    other ("not cancelled and not delivered yet": pending or processed); phrases that cannot all
    hold ("on their way or not sent") leave the first one's reading, unless each is asked for in a
    question of its own ("which have shipped and which have arrived": both)."""
    described = _described(text)
    if not described:
        return None
    common = [s for s in described[0] if all(s in other for other in described[1:])]
    if not common and _ONE_QUESTION_FOR_EACH.search(text):
        # "which ones are still waiting to ship and which have already arrived?": each set asked for
        return tuple(s for s in STORE_STATUSES if any(s in statuses for statuses in described))
    return tuple(common) if common else described[0]


# A second question word joined to the first ("which ... and which ...", "what's shipped or what's
# still here"): the statuses of each are asked for, not narrowed by each other.
_ONE_QUESTION_FOR_EACH = re.compile(r"\b(?:and|or)\s+(?:which|what|whats|what's)\b", re.IGNORECASE)


# A yes/no question about the thing itself ("has my dumbbell set shipped yet?", "did the lamp
# arrive?") asks for its status: the status words are the question, not a description of which
# order is meant. A status that describes an order ("is the skateboard in my pending order here?",
# "the one that's on its way") still does.
# The question may follow what it is about after a dash or a colon ("just wondering about the gray
# sneakers I ordered - have they been delivered yet?").
_YES_NO_OPENING = re.compile(r"(?:^|\s[-–—:]\s|,\s+)\W*"
                             r"(?:(?:so|and|but|hey|hi|ok|okay|um|hmm|anyway|also|well|oh|btw|actually)\W+){0,2}"
                             r"(?:has|have|had|did|does|do|is|are|was|were|will|would)\b", re.IGNORECASE)
_DESCRIBES_AN_ORDER = re.compile(r"\b(?:orders?|ones?|packages?|parcels?)\b(?:\s+(?:that|which)\b|'s\b)"
                                 r"|\b\w+(?:ed|ing)\s+(?:orders?|ones?|packages?|parcels?)\b"
                                 r"|\bpending\s+(?:orders?|ones?)\b", re.IGNORECASE)


# A statement turned into a question at its end ("that one's already out the door, right?").
# (after a comma or a dash: "what screen size is it?" asks no tag)
_TAG_QUESTION = re.compile(
    r"(?:,|\s[-–—])\s*(?:right|yeah|yes|correct|no|isn'?t it|hasn'?t it|has it|is it|innit)\s*\?+\W*$",
    re.IGNORECASE)


def ends_in_a_tag_question(text: str) -> bool:
    """Is the text a statement with a question tagged on ("..., right?", "..., yeah?")?"""
    return bool(_TAG_QUESTION.search(text))


def statuses_asked_about(text: str) -> bool:
    """Does `text` ask whether something has a status, rather than say which order it means? (a
    statement of it with a question tagged on asks: "the desk lamp, that one's already out the
    door, right?")"""
    return (bool(_YES_NO_OPENING.search(text)) and not _DESCRIBES_AN_ORDER.search(text)) \
        or bool(_TAG_QUESTION.search(text)) \
        or (bool(_ASKED_BY_YET.search(text)) and not _WHICH.search(text)
            and not _DESCRIBES_AN_ORDER.search(text))


# A yes-or-no question said without its verb ("shipped yet?", "delivered already?"); "which ones
# haven't shipped yet?" asks which orders have the status, and says which it means.
_ASKED_BY_YET = re.compile(r"\b(?:yet|already|by now)\s*\?+\W*$", re.IGNORECASE)
_WHICH = re.compile(r"\b(?:which|what|who|any)\b", re.IGNORECASE)


# "says delivered", "is showing delivered", "tracking say it is delivered", "marked as delivered".
_SAYS_DELIVERED = re.compile(
    r"\b(?:says?|said|shows?|showing|showed|marked|tracking|status)\b[^.!?]{0,40}?\bdelivered\b",
    re.IGNORECASE)
# ... and what the customer says of it after: it did not come, or is nowhere to be found.
_NOT_RECEIVED = re.compile(
    r"\b(?:never|not|haven'?t|hasn'?t|didn'?t|don'?t|doesn'?t|can'?t|cannot|couldn'?t|wasn'?t)\s+"
    r"(?:\w+\s+){0,2}?(?:got|get|gotten|receive|received|find|found|see|seen|arrive|arrived|come|came"
    r"|show(?:n|ed)? up|turn(?:ed)? up)\b"
    r"|\b(?:nothing|nowhere)\b|\bno (?:package|parcel|box|sign of)\b|\bnot (?:here|there)\b",
    re.IGNORECASE)


def told_delivered_but_not_received(text: str) -> bool:
    """Do the words say the order shows as delivered and, after that, that it did not come ("it says
    delivered but I never got it", "is showing delivered but I don't find the package anywhere",
    "says it was delivered this morning, but I've looked on the porch ... and nothing")? A parcel
    gone missing, not a question how far the order has got."""
    said = _SAYS_DELIVERED.search(text)
    return said is not None and bool(_NOT_RECEIVED.search(text, said.end()))
