"""Does a clause ask for a change, or ask about one? "Return the lamp, refund to PayPal" asks for
a return; "how much would I get back if I returned the lamp?", "can I return the perfume I opened?"
and "the lamp arrived broken" ask about one (or complain): they get the facts and the options the
policy allows, never a proposal nobody asked for. Word lists are data (`data/speech_acts.json`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from csagent.nlp.script import has_ideographs, has_question_mark

_WORD = re.compile(r"[a-z0-9']+")


@cache
def _lexicon() -> dict[str, Any]:
    raw = json.loads(resources.files("csagent.nlp").joinpath("data", "speech_acts.json").read_text("utf-8"))
    return {k: (list(v) if k.startswith("zh_") else [_words(p) for p in v])
            for k, v in raw.items() if not k.startswith("_")}


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'").replace("'", ""))


def _has(words: list[str], phrases: list[list[str]], denied: frozenset[str] = frozenset()) -> bool:
    """Does one of the phrases occur in the words, not right after a word of `denied`?"""
    if not denied:
        joined = " " + " ".join(words) + " "
        return any(" " + " ".join(p) + " " in joined for p in phrases if p)
    for phrase in phrases:
        n = len(phrase)
        for i in range(len(words) - n + 1):
            if phrase and words[i:i + n] == phrase and not (i > 0 and words[i - 1] in denied):
                return True
    return False


# Adverbs that may sit inside a request phrase ("I just want", "I really need", "I'd actually like").
_FILLERS = frozenset({"just", "really", "simply", "actually", "honestly", "kinda", "seriously", "literally",
                      "truly", "rly", "much", "definitely", "totally", "still", "also"})

# A wish denied is no request: "I don't want to lose it", "I do not want to wait".
_DENIED = frozenset({"dont", "not", "never", "doesnt", "didnt", "wont", "cant"})


# ... and a need that is not the customer's is none: "it need to be plug in the wall?" asks about the lamp.
_NOT_THE_CUSTOMER = frozenset({"it", "they", "that", "this", "which", "he", "she"})
# Words of a request phrase that sends a thing somewhere ("needs to go to", "should be shipped to").
_SENT_WORDS = frozenset({"go", "going", "sent", "shipped", "delivered"})
# Request phrases that, said with the store as their subject, tell what it did.
_TOLD_OF_THE_STORE = (["send", "me"], ["give", "me"])


# Endings of a change verb told in the past or of someone else ("cancelled", "switches"), never an
# imperative (a gerund may be one: "returning the lamp, refund to visa").
_TOLD_ENDINGS = ("s", "es", "ed", "d", "led")


def _verb(word: str, verbs: set[str], inflected: bool = False) -> bool:
    """A change verb in its plain form, allowing one slip in a long word ("retrun", "exhange");
    not the verb told ("which switches did I go for", "I cancelled it"), unless `inflected` forms
    count (a passive, after "be" or "get": "Could the parcel be redirected?", "can I get it
    exchanged"; or words that only name a change: "be redirected to my Denver address")."""
    from difflib import SequenceMatcher

    if word not in verbs and any(word == v + ending for v in verbs for ending in _TOLD_ENDINGS) \
            and not inflected:
        return False
    return word in verbs or (
        len(word) >= 5 and any(len(v) >= 5 and SequenceMatcher(None, word, v).ratio() >= 0.8 for v in verbs)
    )


# A condition up to where its clause ends ("if I want to return it, ...", "... if you can") or a
# request opens ("If it hasn't shipped yet can you cancel it?").
_CONDITION = re.compile(
    r"\bif\b(?:(?!\b(?:can|could|would|will) you\b|\bplease\b|\bpls\b)[^,;.?!])*", re.IGNORECASE)


# Modals opening a yes-or-no question ("can I still ...", "would I be able to ...").
_QUESTION_MODALS = (["can"], ["could"], ["would"], ["will"], ["may"])


def asks_for_change(text: str) -> bool:
    """True when the clause asks for the change it names (see the module docstring): a request
    phrase ("please", "I'd like", "can you"), or a change verb in a clause that neither asks about
    it ("can I", "how much would", "if I", "which address did I put"), nor ends as a question."""
    if has_ideographs(text):
        return _asks_for_change_zh(text)
    words = _words(text)
    if not words:
        return False
    lexicon = _lexicon()
    if _has(words, lexicon["info_requests"]) or asks_to_have_it_checked(text):
        return False  # "could you tell me which address it goes to?": information, not a change
    if _hedges(words):
        return False  # "I might send the fleece jacket back. What would the refund be?"
    if _has(words, lexicon["keeping"]) or declines_change(text) or _RATHER_NOT.search(text):
        # "Please don't cancel the order with my headphones, I still want it.", "please don't cancel
        # anything, I'm just weighing my options"
        return False
    start = words[1:] if words[0] in _OPENERS else words
    wished = _without_wishes_of_no_change(text)
    wished_words = _words(wished)
    wished_start = wished_words[1:] if wished_words and wished_words[0] in _OPENERS else wished_words
    # "please" inside a question only softens it ("how much would I get back, please?"); opening
    # one, it asks ("please cancel my kettle order?")
    question = text.rstrip().endswith("?") or bool(start and start[:1] in lexicon["wh_questions"])
    if question and start[:1] in _QUESTION_MODALS and start[1:2] in (["i"], ["we"], ["it"]) \
            and ("still" in start or "able" in start):
        return False  # "Would I still be able to send it back?": whether it can be, asked
    requests = [p for p in lexicon["request"] if not (question and p in _COURTESY and words[:1] != p)]
    # (an adverb inside a request phrase leaves it one: "I just want my money back"; a wish to do
    # something that changes nothing is none: "lowkey wanna wear my new earbuds at the pool")
    unconditional = [w for w in _words(_CONDITION.sub(" ", wished)) if w not in _FILLERS]
    # ("You send me wrong perfume?" tells what the store did: "send me" after "you" asks nothing, as
    # "can you send me" does by its "can you")
    told = [p for p in requests if p in _TOLD_OF_THE_STORE]
    # (where a thing is to go is asked with the thing as subject: "it needs to go to 12 Main St")
    sent = [p for p in requests if p[-1:] == ["to"] and _SENT_WORDS & set(p)]
    others = [p for p in requests if p not in told and p not in sent]
    if _has(unconditional, told, denied=_DENIED | _NOT_THE_CUSTOMER | {"you", "u"}) \
            or _has(unconditional, sent, denied=_DENIED) \
            or _has(unconditional, others, denied=_DENIED | _NOT_THE_CUSTOMER):
        return True  # "if I only want to send one back, is that allowed?": the wish is a condition
    # ("want my money back", "give me a refund": the wish, its subject left out; so after a dash or
    # a comma: "keyboard i ordered - want clicky switches instead of tactile")
    parts = [_words(part) for part in _PARTS.split(_CONDITION.sub(" ", wished))]
    opened = [wished_start] + ([] if question else parts[1:])
    if any(o[: len(p)] == p for o in opened for p in lexicon["request_openers"]):
        return True
    if question and _asks_leave_politely(start, words):
        return True  # "Could I move order #W1 from my gift card to PayPal, please?"
    if start[:1] in (["can"], ["could"], ["may"]) and start[1:2] in (["i"], ["we"]) \
            and start[2:3] in (["get"], ["have"]) and "instead" in words:
        return True  # "can i get the same one in a medium instead": another one asked for
    if (
        (start and start[:1] in lexicon["wh_questions"])
        or _opens_yes_no_question(start)  # "do you have the e-reader with cellular in stock"
        or _has(words, lexicon["asking_about"])
        or _has(words, lexicon["hypothetical"])
        or text.rstrip().endswith("?")
    ):
        return False
    verbs = {p[0] for p in lexicon["imperative_verbs"] if p}
    # (a verb right after a negation rules its change out: "don't cancel #W1348788"; one the customer
    # says they cannot do tells a rule, heard or met, not a request: "I cannot send back only the
    # sunglasses")
    negations = [n for n in lexicon["negation"] if n] + [["cannot"], ["cant"], ["can't"]]
    return "->" in text or "→" in text or any(
        _verb(w, verbs, inflected=i > 0 and words[i - 1] in _PASSIVE_AUXILIARIES)
        and not any(words[max(0, i - len(n)):i] == n for n in negations)
        and words[i:i + 2] != ["do", "not"] and not _after_a_modal(words, i)
        # (what the store or someone did is told: "you take money two times from my gift card"; a
        # plain form after "is" describes: "PayPal is correct")
        and not (i and words[i - 1] in _COPULAS)
        and not (i and words[i - 1] in _DETERMINERS)  # a noun: "For a return, I could either ..."
        and not (i and words[i - 1] in _SUBJECTS and (i < 2 or words[i - 2] not in _ASKING_MODALS))
        # (nor a verb of the customer's in a clause that says which thing: "There is one order I
        # send to Seattle, to my brother")
        and not (i > 1 and words[i - 1] == "i" and words[i - 2] in _RELATIVE_HEADS)
        # (nor what is planned for it: "order #W8327915 is set to ship to 229 Lakeview Drive")
        and not (i > 1 and words[i - 1] == "to" and words[i - 2] in _SCHEDULED)
        for i, w in enumerate(words))


# Words before "to" and a verb that tell what is planned, not wished: "is set to ship to ...".
_SCHEDULED = frozenset({"set", "scheduled", "due", "supposed", "meant", "planned"})


# Nouns a relative clause without "that" follows ("the order I send to Seattle", "the one I return").
_RELATIVE_HEADS = frozenset({"order", "orders", "one", "ones", "package", "parcel", "item", "items", "thing",
                             "things", "that", "which", "stuff"})


# A preference for nothing to change: "I'd rather not say", "I'd prefer to keep it".
_RATHER_NOT = re.compile(r"\b(?:rather|prefer)\s+(?:(?:to|if you)\s+)?(?:not|keep|leave|wait|hold)\b",
                         re.IGNORECASE)


# Before a subject, words that make its verb asked for: "can u nuke the coffee maker order".
_ASKING_MODALS = frozenset({"can", "could", "would", "will", "pls", "please", "plz"})


# Subjects whose verb tells what someone did ("you take money two times"), unless a modal asks it.
_SUBJECTS = frozenset({"you", "u", "they", "he", "she", "we", "it"})
# After these a change verb's plain form is a noun: "for a return", "my exchange", "the cancel".
_DETERMINERS = frozenset({"a", "an", "the", "my", "your", "our", "this", "that", "another", "any"})
# After these a verb's plain form is an adjective: "PayPal is correct", "that's fine".
_COPULAS = frozenset({"is", "are", "was", "were", "it's", "its", "that's", "thats", "looks", "seems"})


def _without_wishes_of_no_change(text: str) -> str:
    """`text` with every "want to <verb>" ("wanna", "need to", "I'd like to", "hoping to") whose verb
    names no change of an order (`imperative_verbs`, or "have" and "be": "I'd like to have it sent
    to ...") left out: "lowkey wanna wear my new earbuds at the pool", "I need to know ..." ask for
    nothing to be changed."""
    verbs = {p[0] for p in _lexicon()["imperative_verbs"] if p} | {"have", "be", "keep"}

    def masked(m: re.Match[str]) -> str:
        verb = m.group(1).lower()
        # (a verb with "back" names one: "I want to give back the notebook", "want to bring it back";
        # so does a thing's need to go somewhere: "it needs to go to 12 Main St ...", whose subject
        # is the order, not the customer going somewhere)
        phrasal = _BACK_AFTER.match(m.string, m.end()) is not None
        sent = verb == "go" and m.group(0).lower().startswith(("needs", "wants")) \
            and _TO_AFTER.match(m.string, m.end()) is not None
        return m.group(0) if _verb(verb, verbs) or phrasal or sent else f" {verb}"

    return _WISH_TO.sub(masked, text)


_BACK_AFTER = re.compile(r"(?:\s+[\w']+){0,3}?\s+back\b", re.IGNORECASE)
_TO_AFTER = re.compile(r"\s+to\b", re.IGNORECASE)
_WISH_TO = re.compile(
    r"\b(?:wanna|(?:want|wants|wanted|need|needs|like|love|wish|hoping|hope)\s+to)\s+([a-z]+)", re.IGNORECASE)


# Words after which a verb tells what someone would or will do, not what the customer asks for ("my
# partner would kill me", "tryna take it to the pool").
_MODALS = frozenset({"would", "will", "could", "might", "gonna", "tryna"})
# Words before a past participle that make it a request's passive ("be redirected", "get it exchanged").
_PASSIVE_AUXILIARIES = frozenset({"be", "get", "it", "them"})


def _after_a_modal(words: list[str], i: int) -> bool:
    """Is the verb at `i` one after a modal of anyone but "you" ("you will send it back" asks), or
    after "forget to"? An adverb may come between them ("I could either get the refund on my card
    or ...")."""
    if i > 1 and words[i - 1] in _BETWEEN_MODAL_AND_VERB:
        i -= 1
    if i > 1 and words[i - 1] == "to" and words[i - 2] in _FORGETTING:
        return True  # "I always forget to change that field": what they do, told
    return i > 0 and words[i - 1] in _MODALS and (i < 2 or words[i - 2] not in ("you", "u"))


_FORGETTING = frozenset({"forget", "forgot", "forgets", "forgotten", "forgetting"})


_BETWEEN_MODAL_AND_VERB = frozenset({"either", "also", "still", "maybe", "probably", "even", "always",
                                     "then"})


def asks_for_information(text: str) -> bool:
    """Does the clause ask to be told whether something is so, or to have it checked ("Would you
    tell me whether updating my address would also change where #W1 goes?")? Information about a
    change, whatever the change it names (`check_requests`, and "tell me"/"let me know" followed by
    "whether"/"if"; not "I was wondering whether I could return it ... If so, please refund it")."""
    return bool(_TOLD_WHETHER.search(text)) or asks_to_have_it_checked(text)


_TOLD_WHETHER = re.compile(r"\b(?:tell me|let me know|inform me)\s+(?:whether|if)\b", re.IGNORECASE)


def asks_to_have_it_checked(text: str) -> bool:
    """Does the clause ask to have something checked ("just want to double check it's going to Maple
    Drive and not to my apartment")? Information, whatever else it names (`check_requests`)."""
    return _has(_words(text), _lexicon()["check_requests"])


def _asks_leave_politely(start: list[str], words: list[str]) -> bool:
    """ "could I ..., please?", "can we ... pls?": asking leave for one's own change with a
    courtesy word is the polite form of the request (a question opened by a question word is not:
    "how much would I get back, please?")."""
    return start[:1] in (["can"], ["could"], ["may"]) and start[1:2] in (["i"], ["we"]) \
        and any(c[0] in words for c in _COURTESY)


def _opens_yes_no_question(words: list[str]) -> bool:
    """ "do you have ...", "is it ...", "did I ...": an auxiliary before its subject opens a
    question ("do it", "have it sent to my office" are requests)."""
    if not words:
        return False
    if words[0] in {"is", "are", "was", "were"}:
        return True
    if len(words) < 2:
        return False
    if words[0] == "do":  # "do you ...", never "do it", "do the exchange"
        # ("do the running shoes come in a 10": a thing, then a verb of what it is or does)
        return words[1] in _PERSONS or (
            words[1] in _THINGS_OPENING and any(w in _VERBS_OF_A_THING for w in words[3:]))
    return words[0] in {"does", "did"} and words[1] in _PERSONS | {"it", "my", "the", "this", "that"}


_PERSONS = frozenset({"you", "u", "ya", "i", "we", "they", "he", "she"})
_THINGS_OPENING = frozenset({"the", "my", "these", "those", "your", "ur", "all", "both", "any"})
# What a thing is asked to be or do ("come", "fit", "work"): a question, where "do the exchange for a
# 10" is a request.
_VERBS_OF_A_THING = frozenset({"come", "fit", "work", "have", "run", "support", "include", "last", "look",
                               "cost", "ship", "need", "weigh", "charge", "fold", "connect"})


def weighs_a_change(text: str) -> bool:
    """Does the text only weigh a change ("Before I decide, how much would I get back?", "在考虑要不要
    退")? Said in answer to a question about a request, it holds that request back: asked about, not
    for."""
    if has_ideographs(text):
        return bool(_ZH_WEIGHS.search(text))
    return _hedges(_words(text))


# A change weighed in Chinese: considering whether ("在考虑要不要退", "考虑一下"), not decided ("还没决定",
# "没想好"), hesitating ("犹豫"), only asking ("只是问问", "先问问").
_ZH_WEIGHS = re.compile(
    r"考虑(?:要不要|是否|一下|看看)|还在考虑|还没(?:有)?(?:决定|想好)|没想好|犹豫|只是问(?:问|一下)|先问(?:问|一下)|随便问问|就问(?:问|一下)")


def _hedges(words: list[str]) -> bool:
    """Does the clause only weigh a change ("I might send it back", "I'm thinking of cancelling")?
    Discourse markers that hedge nothing ("thinking about it, I'd like to return it") do not count."""
    lexicon = _lexicon()
    joined = " " + " ".join(words) + " "
    for marker in lexicon["hedge_markers"]:
        joined = joined.replace(" " + " ".join(marker) + " ", " ")
    return _has(joined.split(), lexicon["hedges"])


# "how often ... once" in Chinese (多久/多长时间/隔多久 ... 一次): how a product is looked after.
ZH_HOW_OFTEN = re.compile(r"(?:多久|多长时间|隔多久|几个月|几天)[^，。？！?]{0,8}一次")


def _asks_for_change_zh(text: str) -> bool:
    lexicon = _lexicon()
    if ZH_HOW_OFTEN.search(text):
        return False  # "HEPA滤网多久需要换一次？": how often the filter needs replacing, asked
    if _declines_change_zh(text):
        return False  # "不过先别取消，先告诉我那个订单一共多少钱": the cancellation ruled out
    if _supposes_own_change_zh(text) and any(m in text for m in lexicon["zh_asking"]):
        return False  # "如果我把那套化妆品退掉，能退给我多少钱？": what would follow, asked
    if any(m in text for m in lexicon["zh_request"]):
        return True
    if any(m in text for m in lexicon["zh_asking"]):
        return False
    return names_change_verb_zh(text)


# A Chinese negation of what follows ("先别取消", "不用退了", "暂时不要改"), a few characters before a
# change verb; "只" or "而是" after it asks for a narrower change instead ("不是全部取消，只取消耳机").
_ZH_NOT = re.compile(r"(?:别|不要|不用|不想|不必|无需|没必要|暂时不|暂不|先不)")
_ZH_NARROWER = re.compile(r"只|而是")


def _declines_change_zh(text: str) -> bool:
    """Does the Chinese clause name a change only to rule it out ("先别取消", "我不想退货")?"""
    if _ZH_NARROWER.search(text):
        return False
    return any(text.find(verb, m.end(), m.end() + 4) >= 0 for m in _ZH_NOT.finditer(text)
               for verb in _lexicon()["zh_verbs"])


# A condition whose subject is the customer ("如果我把…退掉", "要是我换成…"): a change supposed.
_ZH_SUPPOSED = re.compile(r"(?:如果|假如|要是|假设)(?:我|我们)([^，,。？?！!]*)")


def _supposes_own_change_zh(text: str) -> bool:
    """Does a Chinese condition suppose a change the customer makes ("如果我把那套化妆品退掉")? Not
    "如果可以的话" (if possible), which only softens a request."""
    return any(names_change_verb_zh(m.group(1)) for m in _ZH_SUPPOSED.finditer(text))


def names_change_verb_zh(text: str) -> bool:
    """A Chinese change verb ("换成", "退货", "改成") in the text."""
    return any(m in text for m in _lexicon()["zh_verbs"])


def is_hypothetical(text: str) -> bool:
    """ "if I returned it, how much would I get back?": about a change that may never be asked for
    ("would it be possible to switch it to my gift card?" is a request put politely)."""
    joined = " " + " ".join(_words(text)) + " "
    for phrase in _lexicon()["politeness"]:
        joined = joined.replace(" " + " ".join(phrase) + " ", " ")
    return _has(joined.split(), _lexicon()["hypothetical"])


_OPENING_CONNECTIVES = frozenset({"but", "and", "so"})


def declines_change(text: str) -> bool:
    """ "don't cancel it, just tell me where it is", "I'm not looking to cancel anything", "no
    cancelling", "don't touch my account address": the clause names a change only to rule it out
    (a negation before the change verb or its gerund, with at most four gap words such as "looking
    to" between them), and no contrast word turns it into a narrower request ("not the whole order,
    only the scarf"). A negation inside a condition is the condition's ("If the bicycle order is
    not send yet, please change the address"), so the condition is read out first."""
    if has_ideographs(text):
        return _declines_change_zh(text)
    words = _words(_CONDITION.sub(" ", text))
    lexicon = _lexicon()
    # (a "but" opening the clause sets it against the clause before, not against a narrower request
    # within it: "But please DON'T touch the order with the bike")
    within = words[1:] if words and words[0] in _OPENING_CONNECTIVES else words
    if not words or _has(within, lexicon["contrast"]):
        return False
    verbs = {p[0] for p in [*lexicon["imperative_verbs"], *lexicon["ruling_out_verbs"]] if p}
    gap = {p[0] for p in lexicon["negation_gap"] if p}
    for i, word in enumerate(words):
        if _participle_of(word, verbs) and _participle_unwanted(words, i):
            return True  # "I don't want any of my orders touched"
        gerund = _gerund_of(word, verbs)
        if word not in verbs and gerund is None:
            continue
        # (the negation may end where the gap words begin, or take some of them: "no need to change
        # anything")
        j = i
        negated = [n for n in lexicon["negation"] if n and words[max(0, j - len(n)):j] == n]
        while not negated and j > 0 and words[j - 1] in gap and i - j < 4:
            j -= 1
            negated = [n for n in lexicon["negation"] if n and words[max(0, j - len(n)):j] == n]
        if negated and _wanted_before(words[: j - len(negated[0])]):
            return False  # "I just want my money back on the boots, not a swap": asks for the other
        if negated and negated[0] == ["not"] and gerund is None and j - 1 > 0 \
                and words[j - 2] in _STATE_VERBS:
            # "tell me which of my orders are not send yet": what the orders are, not a change ruled out
            continue
        if negated and not (j - len(negated[0]) > 0 and words[j - len(negated[0]) - 1] == "if"):
            # (not "If not, please cancel": the negation is the condition's, "if not shipped"; nor
            # when another change is asked after it: "don't cancel my sunglasses order or anything,
            # just swap the headphones in it")
            return not _another_change_after(words, i, lexicon)
        if gerund is not None and j > 0 and words[j - 1] == "no":
            return True  # "no cancelling" (but "no, cancel it" asks for it)
        if [word] in lexicon["change_verbs"] and not _CONDITION.search(text):
            # the first change the clause names is asked for; one ruled out after it is another
            # thing left as it is ("can u cancel the one that hasnt shiped yet, dont touch the one
            # with the phone")
            return False
    return False


# Verbs before a negation that make what follows a state ("are not send yet", "has not shipped").
_STATE_VERBS = frozenset({"is", "are", "was", "were", "be", "been", "has", "have", "had", "its", "theyre"})
# Words that open a new thought, after which a wish said before no longer sets a negation against it.
_NEW_THOUGHT = frozenset({"so", "because", "but", "then", "and", "cause", "since"})
# A wish of the customer's own ("I just want my money back", "I'd rather have a new one").
_WISHES_OF_THEIR_OWN = [["i", "want"], ["i", "wanna"], ["i", "would", "like"], ["id", "like"], ["i", "need"],
                        ["i", "just", "want"], ["i", "only", "want"], ["i", "really", "want"],
                        ["i", "prefer"], ["id", "rather"], ["i", "would", "rather"]]


def _wanted_before(words: list[str]) -> bool:
    """Do the words just before a negation ask for something else ("I just want my money back on the
    boots, not a swap", "I want a replacement, not a refund")? A wish of the customer's own, not
    denied, among the ten words before it and not in a thought of its own ("I want to measure my head
    again before, so don't do it now")."""
    near = words[-10:]
    cut = max((k + 1 for k, w in enumerate(near) if w in _NEW_THOUGHT), default=0)
    return _has(near[cut:], _WISHES_OF_THEIR_OWN, _DENIED)


def _another_change_after(words: list[str], i: int, lexicon: Mapping[str, Any]) -> bool:
    """Is another change than the one at `i` asked for after it, narrowed ("..., just swap the
    headphones", "only return the lamp", "please exchange it instead")? ("dont cancel it, i will
    return it later" tells, and asks nothing.)"""
    return any([w] in lexicon["change_verbs"] and w != words[i]
               and (_NARROWING & set(words[max(0, k - 2):k]) or "instead" in words[k + 1:k + 6])
               for k, w in enumerate(words) if k > i)


_NARROWING = frozenset({"just", "only", "please", "pls", "simply"})


def _participle_unwanted(words: list[str], i: int) -> bool:
    """Does a participle at `i` follow "don't want" and what it is said of ("I don't want any of my
    orders touched", "dont want it cancelled")?"""
    return any(words[j] in ("want", "need") and j >= 1 and i - j >= 2
               and words[j - 1] in ("dont", "not", "never", "doesnt", "didnt")
               for j in range(max(0, i - 6), i))


def _participle_of(word: str, verbs: set[str]) -> str | None:
    """The change verb a past participle is of ("touched", "changed", "cancelled", "canceled")."""
    if not word.endswith("ed") or len(word) < 5:
        return None
    return _verb_of_stem(word[:-2], verbs)


def _verb_of_stem(stem: str, verbs: set[str]) -> str | None:
    """The verb an inflected form's stem is of: itself, with its "e" ("chang" -> "change"), or with
    its last consonant single ("cancell" -> "cancel")."""
    for verb in (stem, stem + "e", stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem):
        if verb in verbs:
            return verb
    return None


_KEEP_VERBS = frozenset({"keep", "leave"})


def keeps_as_is(text: str) -> bool:
    """ "keep the bookshelf order as is though", "but leave the lamp alone", "I still want that one":
    the clause tells what stays as it is (it opens with "keep" or "leave", or says it is kept,
    `keeping`), and asks for nothing of it."""
    words = _words(text)
    start = words
    # ("I keep getting charged twice" tells no keeping: only an imperative opens with the verb)
    while start and start[0] in _OPENERS | {"but", "just", "pls", "plz", "no", "nah", "nope", "actually",
                                             "wait", "oh", "hmm", "then"}:
        start = start[1:]
    return bool(start) and start[0] in _KEEP_VERBS or _has(words, _lexicon()["keeping"])


def names_address_change(text: str) -> bool:
    """ "send it to my home address instead", "chnage the shiping adress": words that ask to change
    where something goes (`address_change`); "which address is it shipping to?" has none."""
    words = _words(text)
    phrases = _lexicon()["address_change"]
    single = {p[0] for p in phrases if len(p) == 1}
    # a slip keeps the first letter: "place" is no "replace"
    return any(_verb(w, {v for v in single if v[0] == w[0]}, inflected=True) for w in words) \
        or _has(words, [p for p in phrases if len(p) > 1])


def _gerund_of(word: str, verbs: set[str]) -> str | None:
    """The change verb a gerund is of ("cancelling", "canceling", "returning", "changing")."""
    if not word.endswith("ing") or len(word) < 6:
        return None
    return _verb_of_stem(word[:-3], verbs)


_PARTS = re.compile(r"[,;:]\s+|\s+[-–—]+\s+")
_PARTS_KEPT = re.compile(f"({_PARTS.pattern})")  # (the same cuts, each kept between its parts)
_COURTESY = (["please"], ["pls"], ["plz"])
_RELATIVES = frozenset({"which", "where", "when", "who", "whom", "whose", "why"})
_OPENERS = frozenset({"so", "and", "also", "hi", "hey", "hello", "ok", "okay", "please"})


# ", ok?", ", alright??" closing a statement: a call for acknowledgement, not a question.
_ACKNOWLEDGEMENT_TAG = re.compile(r"(?<=\w)[\s,]+(?:ok|okay|alright|k)\s*\?+\s*$", re.IGNORECASE)


def asks_something(text: str) -> bool:
    """A question or a request of any kind (see `data/speech_acts.json`), its subject left out too
    ("need the tracking numbers"); False for a statement that only sets the scene ("my aunt gave me
    a gift card for my birthday"). A tag after a statement asks nothing of its own ("I don't need it
    anymore, ok?")."""
    text = _ACKNOWLEDGEMENT_TAG.sub("", text)
    if has_question_mark(text):
        return True
    lexicon = _lexicon()
    if has_ideographs(text):  # "帮我取消订单", "能退吗": a request or question marker, or a change verb
        return any(m in text for m in (*lexicon["zh_request"], *lexicon["zh_asking"])) \
            or names_change_verb_zh(text)
    words = _words(text)
    if not words:
        return False
    # a question may open after a comma too ("moving next week, can the phone order go to ..."),
    # where a wh-word that can open a relative clause opens none ("I live in Chicago, where ..."),
    # and after a colon, where it does ("I wanted to check: which versions of that phone are in stock")
    parts = _PARTS_KEPT.split(text)
    for i in range(0, len(parts), 2):
        start = _words(parts[i])
        while start and start[0] in _BEFORE_A_QUESTION:  # ("k which one's still comin")
            start = start[1:]
        after_colon = i > 0 and parts[i - 1].strip() == ":"
        if start and (i == 0 or after_colon or start[0] not in _RELATIVES) \
                and any(start[: len(p)] == p for p in lexicon["interrogative"] if p):
            return True
    # (a wish denied asks nothing: "I have little money on it and I don't want to lose it")
    if _has(words, lexicon["request"], denied=_DENIED) \
            or _has(words, [p for p in lexicon["interrogative"] if len(p) > 1]):
        return True
    if any(words[: len(p)] == p for p in lexicon["request_openers"]):
        return True  # "need the tracking numbers", "want my receipt": the wish, its subject left out
    verbs = {p[0] for p in lexicon["imperative_verbs"] if p}
    # (a verb after a perfect's auxiliary tells what happened: "waiting on my kettle has put me in a
    # baking mood"; after "is" it describes: "PayPal is correct")
    return any(w in verbs and not (i and words[i - 1] in _PERFECT | _COPULAS) for i, w in enumerate(words))


_PERFECT = frozenset({"has", "have", "had", "been", "ive", "weve"})


def opens_follow_up(text: str) -> bool:
    """Does the clause open with a follow-up word ("and", "what about", "same for")?"""
    words = _words(text)
    while len(words) > 1 and words[0] in _ACKNOWLEDGING:
        words = words[1:]  # "k what about the dumbbells", "ok thanks, and for the lamp?"
    return any(words[: len(p)] == p for p in _lexicon()["ellipsis_openers"] if p)


_ACKNOWLEDGING = frozenset({"k", "kk", "ok", "okay", "oki", "cool", "great", "thanks", "thx", "ty", "alright",
                            "aight", "right", "hmm", "oh", "nice", "got", "it", "gotcha", "perfect"})
# Words before a question that only acknowledge or hesitate ("k which one's still comin", "cool cool
# what about the lamp", "hmm wait how much was it"): the acknowledgements but "got it", and hesitations.
_BEFORE_A_QUESTION = _OPENERS | (_ACKNOWLEDGING - {"got", "it"}) | {
    "ah", "um", "uh", "wait", "yeah", "yea", "lol", "bet", "well", "anyway", "anyways"}


# "#W3137176 too", "the lamp as well": the last question asked again of what it names.
_ENDS_WITH_TOO = re.compile(r"\b(?:too|as well|also)\s*[.!]*\s*$", re.IGNORECASE)


def is_elliptical(text: str, names: list[str]) -> bool:
    """ "And the tablet one?", "what about my other order?": a follow-up that only names something
    new, to be asked the last question again. It opens with a follow-up word, is put as a question
    or ends with "too" ("#W3137176 too", "the lamp as well"); `names` are the product names and
    option values it was found to mention, and every other word is a reference word."""
    lexicon = _lexicon()
    opens = opens_follow_up(text)
    words = _words(_ENDS_WITH_TOO.sub(" ", text))
    if not words or not (opens or text.rstrip().endswith(("?", "？")) or _ENDS_WITH_TOO.search(text)):
        return False
    named = {w for name in names for w in _words(name)}
    rest = [w for w in words if w not in named]
    allowed = {w for p in (*lexicon["ellipsis_words"], *lexicon["ellipsis_openers"]) for w in p}
    if not all(w in allowed for w in rest):
        return False
    return len(rest) < len(words) or "other" in rest or "another" in rest


# A request for advice that names nothing of its own: what to do, what is going on, ideas, tips.
_ADVICE = re.compile(
    r"(?:any|got any|have any|some)\s+(?:ideas?|tips?|advice|suggestions?|clues?|fix(?:es)?)"
    r"|what\s+(?:the\s+\w+\s+)?(?:do|should|can|must|shall|could|would)\s+i\s+do"
    r"|wtf\s+(?:do|should|can)\s+i\s+do|what\s+(?:i|do\s+i)\s+(?:must|should|can|need\s+to)\s+do"
    r"|what\s+(?:am\s+i|are\s+we)\s+supposed\s+to\s+do|what\s+to\s+do|what\s+now"
    r"|any\s*thing\s+(?:i|we)\s+(?:can|could|should)\s+(?:try|do)"
    r"|what'?s\s+(?:up|going\s+on|wrong|happening)(?:\s+with\s+(?:it|that|this|them))?"
    r"|how\s+(?:do|can|should)\s+i\s+(?:fix|sort|solve)\s+(?:it|this|that|them)"
    r"|is\s+(?:it|this|that)\s+normal|help(?:\s+me)?"
    r"|what\s+(?:do|would|can|could)\s+(?:you|u)\s+(?:recommend|suggest|advise)"
    r"|any\s+recommendations?",
    re.IGNORECASE)
# What may stand around it: a lead-in ("so", "ok", "pls") and a tail that adds no object ("... before
# I lose my mind", "... before I throw it out the window", "lol").
_ADVICE_LEAD = re.compile(r"^(?:(?:so|ok|okay|well|and|but|pls|please|hm+|ugh|seriously|honestly|anyway)"
                          r"\W+)*", re.IGNORECASE)
_ADVICE_TAIL = re.compile(r"(?:\s+(?:before|b4)\s+i\b.*|\s+(?:here|now|please|pls|lol|haha|then"
                          r"|(?:with|about)\s+(?:it|this|that|them)))*"
                          r"\W*$", re.IGNORECASE)
_ADVICE_ZH = re.compile(
    r"^(?:那|请问)?(?:我)?(?:该|应该|要)?(?:怎么办|怎么回事|怎么解决|怎么处理|如何解决|咋办)[？?！!。.]*$")


def asks_for_advice(text: str) -> bool:
    """Is the clause only a request for advice, naming nothing of its own ("any ideas before I lose
    my mind?", "whats up with that??", "What I must do?", "wtf do i do", "What do you recommend?",
    "怎么办？")? It asks about
    what the clause before told ("my kettle keeps switching off before the water boils")."""
    text = text.strip()
    if _ADVICE_ZH.match(text):
        return True
    rest = _ADVICE_LEAD.sub("", text, count=1)
    head = _ADVICE.match(rest)
    return head is not None and bool(_ADVICE_TAIL.fullmatch(rest[head.end():]))
