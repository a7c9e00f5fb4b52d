"""The shape of a question: does a text open like one, does it ask about the store in general
rather than about the customer's own things, does it speak of the catalogue itself."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from csagent.nlp.entities.identifiers import ORDER_ID_RE
from csagent.nlp.entities.words import TOKEN_RE, singular, terms
from csagent.nlp.script import has_ideographs


def opens_question(text: str) -> bool:
    """Does the text open like a question ("do …", "how long …", "which …")?"""
    m = TOKEN_RE.search(text)
    return m is not None and m.group(0).lower().replace("’", "'") in terms()["general_question"]["openers"]


def is_general_question(text: str) -> bool:
    """Is this a question about the store in general rather than about the customer's own things?

    "do you deliver to PO boxes?", "how long does a gift card refund take?", "can a pending order
    be cancelled?", "can I exchange an item for a different size?", "if I return something, can the
    money go to my other card?" and "u guys price match?" are; "where is my order?", "can I get the
    tracking number?" and "what's the status of this order?" are not. Why: an order question that
    names no order and points at none is answered by the store's policies, while one that points at
    the customer's order needs that order (so the agent asks for it). The word lists are
    `general_question` in `data/entity_terms.json`; Chinese, which has no opening word to read, is
    general with one of `zh_general` ("一般", "通常") and none of `zh_personal` ("我的", "这单").
    """
    g = terms()["general_question"]
    if has_ideographs(text):  # "退款一般多久能到账？": a general word and nothing of the customer's
        return any(w in text for w in g["zh_general"]) and not any(w in text for w in g["zh_personal"]) \
            and not ORDER_ID_RE.search(text)
    if ORDER_ID_RE.search(text):
        return False
    words = [m.group(0).lower().replace("’", "'") for m in TOKEN_RE.finditer(text)]
    main = _main_clause(text, g)
    put_as_question = main is not text and _first_sentence(main).endswith(("?", "？"))
    if not opens_question(main) and not _asks_the_store(main, g) and not put_as_question:
        return False  # ("if I return something, the money can go to another card?" is put as one)
    deictic = set(g["deictic"])
    # ("is there any way to swap it", "any chance": an indefinite before a way of doing something
    # is no thing a later "it" could point back at)
    indefinite = [i for i, word in enumerate(words) if word in g["indefinite"]
                  and (i + 1 >= len(words) or words[i + 1] not in g["not_referents"])]
    in_general = bool(indefinite)
    for i, word in enumerate(words):
        if word in deictic and not any(j < i for j in indefinite):
            return False  # "can I return it?" (but "if I cancel an order, is it refunded?" asks in general)
        owned = set(words[i + 1:i + 3]) & set(g["owned_not_bought"])
        if word in g["possessive"] and not (in_general and owned):
            return False  # "my order", "when will my account show the refund?" (but "if I return
            # something, can the money go to my other card?" asks in general)
    return not set(words) & set(g["first_person"]) or in_general


def _main_clause(text: str, g: Mapping[str, Any]) -> str:
    """The question after a leading condition ("if I return something, can ..." -> "can ...")."""
    first = TOKEN_RE.search(text)
    if first is None or first.group(0).lower() not in g["conditions"] or "," not in text:
        return text
    return text.split(",", 1)[1]


def _first_sentence(text: str) -> str:
    found = re.search(r"[^.!?？！]*[.!?？！]*", text.strip())
    return found.group(0).strip() if found else ""


def _asks_the_store(text: str, g: Mapping[str, Any]) -> bool:
    """ "u guys price match?", "you ship to Canada?": the store as the subject of a question."""
    sentence = _first_sentence(text)
    lowered = " ".join(m.group(0).lower() for m in TOKEN_RE.finditer(sentence))
    return sentence.endswith(("?", "？")) and any(
        lowered == s or lowered.startswith(s + " ") for s in g["store_subjects"])


def mentions_catalogue(text: str) -> bool:
    """Does the text speak of the catalogue itself ("how many products do you sell in Electronics?")?"""
    words = {singular(m.group(0)) for m in TOKEN_RE.finditer(text)}
    return bool(words & set(terms()["general_question"]["catalogue_words"]))
