"""The local tier's understanding of a message: no generative model.

Clauses from the rule-based splitter, one intent per clause from the MiniLM example
classifier (Chinese through a lexicon), entities from the rule-based extractors. An order
id mentioned once in the message, or given by the app (`order_id_hint`), serves every clause
that needs one and names none; so do a tracking number mentioned once and a cancellation reason
given once ("cancel #W1 and #W2, I ordered both by mistake"). A clause naming several order ids
keeps them all (`order_ids`): the planner gives each its own task.

The entities then check the classifier's intent (`reconsider_intent`): an order question that
names no order and points at none is asked in general terms, so it is a policy (or catalogue)
question; a catalogue product or "orders" in the plural favours a runner-up that fits it; an
order id given with a full postal address asks to ship the order there.

The reader (`LocalUnderstanding`) is this module; what it calls lives beside it: `folds` (pieces
joined before they are read), `passes` (clauses kept, folded or dropped once read), `answers` (the
answer to the question the assistant asked) and `addresses` (which of the customer's addresses the
words point at).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any

from csagent.domain.actions import PendingAction
from csagent.graph.state import pending_actions
from csagent.nlp.script import has_ideographs, has_question_mark
from csagent.requests import WRITE_INTENTS
from csagent.understanding import (
    ADDRESS_CHANGES,
    CATALOGUE_INTENTS,
    FOLLOW_UP_INTENTS,
    GENERAL_INTENTS,
    GENERAL_QUESTION_INTENTS,
    HANDOFF_INTENTS,
    ITEM_REQUESTS,
    MIN_CLAUSE_CONFIDENCE,
    ORDER_GROUNDING,
    ORDER_READ_INTENTS,
    OUT_OF_SCOPE_DOUBT,
    PASSIVE_INTENTS,
    REFUSAL_MIN,
    THANKS_WORDS,
    Clause,
    Understanding,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from csagent.grounding.model import CustomerView

from csagent.understanding_local.addresses import (
    SENTENCE_BREAK,
    address_known_to_the_customer,
    address_other_than_the_orders,
    left_behind,
    may_name_an_address,
    only_an_address,
)
from csagent.understanding_local.answers import (
    answered_candidate,
    with_payment_answered,
    with_request_reread,
)
from csagent.understanding_local.folds import (
    TOLD_BEFORE_ADVICE,
    advice_asks_folded,
    consequences_folded,
    named_then_asked_folded,
    possibility_asks_folded,
    requests_after_statements,
    with_fallbacks_folded,
)
from csagent.understanding_local.passes import (
    CONDITIONAL,
    address_of_the_order_change,
    bare_verb_of_a_payment,
    changes_held_back,
    changes_priced_first,
    payment_details_folded,
    preferences_folded,
    reasons_folded,
    returns_named_by_their_words,
    told_cancelled,
    wishes_asked_if_possible,
    without_account_facts_told,
    without_changes_told_as_done,
    without_doubted_readings,
    without_purchases_told,
    without_ruled_out_changes,
    without_wishes_asked_about,
)

logger = logging.getLogger(__name__)

GROUNDED_CONFIDENCE = 0.75
# A probability above this is more than every other reading's together.
MAJORITY = 0.5
OUT_OF_SCOPE = "out_of_scope"
# Intents whose task needs one order of the customer's (an id, or a tracking number for reads).
ORDER_BOUND_INTENTS = frozenset({"order_status", "tracking", "order_items", "refund_status", "cancel_order",
                                 "return_request", "change_order_address", "change_items", "change_payment"})
PLURAL_ORDERS = re.compile(r"\borders\b|(?:所有|全部|每个|几个)的?订单|订单(?:现在)?都|订单们", re.IGNORECASE)
# A question about money come back ("how much did I get back", "did both refunds go through", "退了
# 多少"): beside a cancellation told as done, or about a cancelled order, a question about its refund.
MONEY_CAME_BACK = re.compile(
    r"\b(?:refund\w*|reimburs\w*|money|get back|got back|gotten back|coming back|came back|paid back|"
    r"charged?|charges|billed|paying|credited)\b|退款|退了多少|退到|退回|退钱|扣款|扣了", re.IGNORECASE)
# Reads whose "the ..." names something of an order already in view ("the tracking number"); "the
# refund" of a change just asked for is a question about refunds, not an order's record of one.
DEFINITE_ORDER_READS = frozenset({"order_status", "tracking", "order_items"})
# A definite article: "the tracking number" is one already in view.
_DEFINITE = re.compile(r"\bthe\b", re.IGNORECASE)
# Words that point an account question at the order just talked about ("the address on it").
_ON_THAT_ORDER = re.compile(r"\b(?:on|for|of) (?:it|that(?: one| order)?|this(?: one| order)?)\s*[?.!]*\s*$",
                            re.IGNORECASE)
# Words that put a product in the order just talked about ("the laptop in it", "the mug in there").
_IN_THAT_ORDER = re.compile(r"\bin (?:it|there|that(?: one| order)?|this(?: one| order)?|the order)\b",
                            re.IGNORECASE)
# Something shaped like an order id but with the wrong number of digits ("#W12345").
NEAR_ORDER_ID = re.compile(r"(?<![A-Za-z0-9])#?W\d{1,12}(?![A-Za-z0-9])", re.IGNORECASE)


# Questions the store's documents answer: a short follow-up ("and to a gift card?") asks it again.
KNOWLEDGE_FOLLOW_UPS = frozenset({"policy_question", "warranty"})
MAX_FOLLOW_UP_WORDS = 6
# Below this, a general question in a message that names one order is read as about the order.
WEAK_GENERAL_QUESTION = 0.5


def asks_about_an_order(text: str) -> bool:
    """Is the closest of the store's question templates to `text` a question about one order,
    close enough to be answered by it ("what the total came to?" is the order's total; "how long is
    the return window?" is no order's)?"""
    from csagent import runtime
    from csagent.nlp.embeddings import get_embedder
    from csagent.planning import ORDER_QUESTIONS
    from csagent.tools.cypher_catalogue import ORDER_QUESTION_MIN_SCORE, english_query, matcher_for

    matcher = matcher_for(get_embedder(), matchers=runtime.template_matchers())
    ranked = matcher.rank(english_query(text), top_n=1)
    about_orders = {t for templates in ORDER_QUESTIONS.values() for t in templates}
    return bool(ranked) and ranked[0][0] in about_orders and ranked[0][1] >= ORDER_QUESTION_MIN_SCORE


#: A clause of fewer words that names a product, with no question mark, only sets the topic of the
#: clause after it when that clause points back at the product ("My blue earbuds, can I ...?").
TOPIC_WORDS = 5
#: The questions that take the product the clause before named when they point back at one ("can I
#: use them for swimming?"); not a policy question, whose "it" is idiom more often than not ("while
#: we're at it, do gift cards expire?"), nor a statement ("he keeps throwing it in the dishwasher").
POINTING_BACK_INTENTS = frozenset({"product_info", "product_availability", "warranty"})
# Questions about one product that its documents may answer rather than the catalogue's lists.
PRODUCT_QUESTION_INTENTS = frozenset({"product_info", "product_availability", "policy_question", "warranty"})


def asks_the_documents(text: str, names: Sequence[str]) -> bool:
    """Is `text`, a question about a product, one its documents answer ("how often should I descale
    it?", "is it OK for swimming?", "what's the weight limit of the office chair?") rather than the
    catalogue (price, stock, versions, a listed option)? The trained reader decides
    (`nlp.product_question`); when it cannot be read (or reads below its threshold), the nearest
    catalogue template does."""
    from csagent.nlp.product_question import documents_answer

    read = documents_answer(text)
    return read if read is not None else nearest_template_reads_documents(text, names)


def _documents_answer_it(text: str) -> bool:
    """Do both trained readers put the question to the product's documents: about the product
    itself, not its order (`nlp.purchase_question`), and one its documents answer, not the
    catalogue's lists (`nlp.product_question`)?"""
    from csagent.nlp.product_question import documents_answer
    from csagent.nlp.purchase_question import asks_about_the_product

    return bool(documents_answer(text)) and asks_about_the_product(text) is not False


def nearest_template_reads_documents(text: str, names: Sequence[str]) -> bool:
    """Is `text` too far from every catalogue template to be one the catalogue answers? `names` are
    the product words masked before matching."""
    from csagent import runtime
    from csagent.nlp.embeddings import get_embedder
    from csagent.tools.cypher_catalogue import CATALOGUE_QUESTION_MIN_SCORE, english_query, matcher_for

    matcher = matcher_for(get_embedder(), matchers=runtime.template_matchers())
    score = matcher.catalogue_score(english_query(text), entities=names)
    return score < CATALOGUE_QUESTION_MIN_SCORE


def documents_answer_closer(text: str) -> bool:
    """Is a question about the customer's account one the store's documents answer: a sentence of
    theirs answers a question asked almost in these words (`knowledge.asked`, at the bar where it
    answers instead of the best-ranked hit), and more closely than any account or order template's
    examples ask it? ("does my gift card expire?": the FAQ's "Store gift cards never expire";
    "what's my gift card balance?": the account's balance.) False without the asked questions."""
    from csagent import runtime
    from csagent.knowledge.search import ASKED_MIN
    from csagent.nlp.embeddings import get_embedder
    from csagent.tools.cypher_catalogue import english_query, matcher_for

    embedder = get_embedder()
    near = runtime.tool_caches().asked.closeness(embedder, text)
    if near < ASKED_MIN:
        return False
    matcher = matcher_for(embedder, matchers=runtime.template_matchers())
    return near > matcher.scope_score(english_query(text), "customer")


def found_order_named(found: Any, message_orders: Sequence[str], entities: Mapping[str, Any]) -> bool:
    """Does the clause carry an order id the customer typed (in it, or alone in the message)?"""
    order_id = entities.get("order_id")
    return bool(order_id) and (order_id in found.order_ids or list(message_orders) == [order_id])


def _spelling(catalogue: list[dict[str, Any]] | None) -> Any:
    """The store's spelling corrector, knowing the catalogue's product names and option values."""
    from csagent.nlp.spelling import corrector

    words: set[str] = set()
    for product in catalogue or ():
        words.add(str(product.get("name") or ""))
        for values in (product.get("options") or {}).values():
            words.update(str(v) for v in (values if isinstance(values, list) else [values]))
    return corrector(frozenset(words - {""}))


def route_for(intents: list[str]) -> str:
    """The message's route from its clauses' intents: any actionable clause wins."""
    if any(i not in GENERAL_INTENTS | HANDOFF_INTENTS | {OUT_OF_SCOPE} for i in intents):
        return "knowledge_and_actions"
    if any(i in HANDOFF_INTENTS for i in intents):
        return "handoff"
    if intents and all(i in GENERAL_INTENTS for i in intents):
        return "general"
    if any(i in GENERAL_INTENTS for i in intents):
        return "general"
    return OUT_OF_SCOPE


class LocalUnderstanding:
    """`catalogue` returns the store's products ({product_id, name, options}) for fuzzy
    product matching; without it, products are only found through references.

    `customer_view` (customer id -> `grounding.model.CustomerView`) and `variants` (the catalogue's
    variants by product) ground each clause in the customer's own orders and payment methods
    (`grounding.frame.ground`): "my kettle" becomes the one order with a kettle, "the camera with
    5x zoom instead" the variant, "my PayPal" the payment method. Without them the words alone
    decide, as before."""

    def __init__(self, classifier: Any | None = None,
                 catalogue: Callable[[], list[dict[str, Any]]] | None = None,
                 customer_view: Callable[[str | None], Any] | None = None,
                 variants: Callable[[], Any] | None = None) -> None:
        self._classifier = classifier
        self._catalogue = catalogue
        self._customer_view = customer_view
        self._variants = variants

    @property
    def classifier(self) -> Any:
        if self._classifier is None:
            from csagent.nlp.intents import get_intent_classifier

            self._classifier = get_intent_classifier()
        return self._classifier

    def understand(self, text: str, state: Mapping[str, Any]) -> Understanding:
        from csagent.grounding.facts import names_a_price_difference
        from csagent.grounding.frame import (
            MONEY_BACK_ASKED,
            about_another_persons,
            asks_another_item,
            asks_as_question,
            ground,
            named_change,
            names_a_purchase,
            not_what_it_is_for,
            points_at_another_order,
        )
        from csagent.grounding.resolve import category_mentions, names_a_gift_card, product_mentions
        from csagent.nlp.clauses import segment
        from csagent.nlp.entities.addresses import find_addresses
        from csagent.nlp.entities.extract import extract_entities
        from csagent.nlp.entities.identifiers import ORDER_ID_RE
        from csagent.nlp.entities.questions import opens_question
        from csagent.nlp.entities.references import find_references
        from csagent.nlp.intents import detect_language
        from csagent.nlp.reasons import find_cancel_reason, read_cancel_reason
        from csagent.nlp.script import spaced
        from csagent.nlp.speech_acts import (
            asks_for_change,
            asks_for_information,
            asks_something,
            is_elliptical,
            is_hypothetical,
            names_address_change,
            opens_follow_up,
        )
        from csagent.requests import REQUEST_BY_VERB

        text = spaced(text)  # "改成PayPal": English words keep their boundaries in Chinese text
        lang = detect_language(text)
        catalogue = self._catalogue() if self._catalogue else None
        if lang == "en":  # "cancle my espreso machine order": the store's words, spelt right
            text = _spelling(catalogue).correct(text)
        pieces = [c.text for c in segment(text)] or [text]
        predictions = self.classifier.classify_many(pieces)
        pieces, predictions = with_fallbacks_folded(pieces, predictions)
        pieces, predictions = consequences_folded(pieces, predictions)
        predictions = requests_after_statements(pieces, predictions, self.classifier)
        pieces, predictions = possibility_asks_folded(pieces, predictions)
        pieces, predictions, advice_asked = advice_asks_folded(pieces, predictions)
        pieces, predictions = named_then_asked_folded(pieces, predictions, catalogue or [])
        message = extract_entities(text)
        message_orders = message.order_ids
        view = self._customer_view(state.get("customer_id")) if self._customer_view else None
        fallback_order = message_orders[0] if len(message_orders) == 1 else state.get("order_id_hint")
        picked, waiting = None, None
        listed = next((ids for ids in (_only_listed(p) for p in pieces) if len(ids) > 1), [])
        # the products the message is about, not only as what something is for (read once, when asked)
        about_in_message = cache(lambda: not_what_it_is_for(text, product_mentions(text, catalogue or [])))
        variants = self._variants() if self._variants and view is not None else None
        if view is not None and (not fallback_order or len(message_orders) == 1):
            # "the delivered one", or "the one with number #W1, please" naming one of those listed
            picked, waiting = answered_candidate(text, state, view, variants, catalogue)
            if message_orders and picked != fallback_order:
                picked, waiting = None, None
            fallback_order = fallback_order or picked
        if view is not None and not fallback_order:
            from csagent.grounding.facts import order_of_amount

            fallback_order = order_of_amount(text, view)  # "818.31 coming back into my PayPal": its order
        fallback_tracking = message.tracking_numbers[0] if len(message.tracking_numbers) == 1 else None
        message_reason = find_cancel_reason(text)
        awaited = {str(w.get("parameter")) for w in state.get("awaiting") or []}
        recent = (state.get("memory") or {}).get("last_order_id")  # the order just talked about
        recent_products = list((state.get("memory") or {}).get("last_products") or [])  # named in it
        last_question = (state.get("memory") or {}).get("last_question")
        memory_text = str((state.get("memory") or {}).get("last_question_text") or "")
        clauses: list[Clause] = []
        asks_of = cache(asks_for_change)  # per piece, read once for the message's clauses
        vouched: dict[int, float] = {}  # clause index -> its confidence before the model vouched for it
        doubted: set[int] = set()  # clause indexes read as a hand-off (or a complaint) the model is unsure of
        # How many clauses the model reads, surely, as asking something of the store: a statement
        # beside one of them is context (`_purchase_question_reading`'s `told_alone`).
        asking = [pr.intent not in PASSIVE_INTENTS and pr.confidence >= MIN_CLAUSE_CONFIDENCE
                  for pr in predictions]
        for index, (piece, prediction) in enumerate(zip(pieces, predictions, strict=True)):
            # Ids, emails and addresses here; products (searched once, with their everyday names)
            # and references (with the catalogue's words) below.
            found = extract_entities(piece)
            entities: dict[str, Any] = {}
            # ("Cancel #W1 right now. And the other order with an office chair in it too": not #W1;
            # the order picked from those listed is the one meant: "... - the other one.")
            order_id = found.order_ids[0] if found.order_ids else (
                None if points_at_another_order(piece) and fallback_order != picked else fallback_order)
            if len(found.order_ids) > 1:
                entities["order_ids"] = list(found.order_ids)
            elif not found.order_ids and not fallback_order and listed:
                # "I got charged twice on my Mastercard! W3376947 and W7538230, same day.": the orders
                # a sentence of their own only lists are those the message speaks of
                entities["order_ids"], order_id = list(listed), listed[0]
            if order_id:
                entities["order_id"] = order_id
            else:
                near = NEAR_ORDER_ID.search(piece)
                if near:
                    entities["invalid_order_id"] = near.group(0)
            tracking = found.tracking_numbers[0] if found.tracking_numbers else fallback_tracking
            if tracking:
                entities["tracking_number"] = tracking
            if found.emails:
                entities["email"] = found.emails[0]
            if found.addresses:
                entities["address"] = found.addresses[0].as_dict()
            # The catalogue's names and the everyday ones ("my phone" is the Smartphone, "登山靴"
            # the Hiking Boots), as grounding reads them in the customer's orders.
            products = _once_each(product_mentions(piece, catalogue)) if catalogue else []
            if not products and view is not None:
                # "Could I send the bed back?": a word too plain to name a product of the catalogue
                # names one of the few this customer bought (the Pet Bed).
                products = _once_each(product_mentions(piece, view.products(), own=True))
            if products and catalogue and piece != text and about_in_message():
                # ("the backpack hasn't shipped yet right? can i get the large size instead, its for my
                # 17 inch laptop": the laptop is what the backpack is for, not a product asked about)
                products = not_what_it_is_for(piece, products)
            if products:
                meant = _owned_of_ambiguous(piece, products, view)
                entities["products"] = [{"product_id": p.product_id, "name": p.name, "options": p.options,
                                         "surface": p.surface}
                                        for p in products if not p.ambiguous or p in meant]
            elif catalogue and lang == "en":
                # "yall got any pet stuff?": a category of the catalogue, when no product is named.
                categories = category_mentions(piece, catalogue)
                if categories:
                    entities["categories"] = categories
            if products and not found.order_ids and message_orders == [order_id] \
                    and prediction.intent not in WRITE_INTENTS \
                    and view is not None and not _holds_any(view, order_id, products):
                # "The earbuds in #W7810809, are they fine in the rain? And I cancelled some hiking
                # boots, how much did I get back?": a question about boots not in that order is about
                # the order they are in. (A change keeps the order named: "use the card I paid with
                # for the difference" is about #W1's change, whatever product its words resemble.)
                del entities["order_id"]
            product_refs = [r for r in find_references(piece, catalogue) if r.kind == "product"]
            if product_refs:
                entities["reference"] = {"kind": "product", "hint": product_refs[0].hint}
            runner_up = getattr(prediction, "runner_up", None)  # a model's labels have none
            # "Okay. What is the tracking number?" right after an answer about one order: "the"
            # tracking number is that order's, not a question about tracking in general.
            about_recent = bool(recent) and prediction.intent in DEFINITE_ORDER_READS \
                and bool(_DEFINITE.search(piece))
            # "#W7594624 status?" ... "ok. laptop in it - what specs": a product the order just talked
            # about holds, said to be in it; their item, not the catalogue's.
            # (a reading of nothing of the store's is grounded below, where it is vouched for: "bet. oh
            # and the puzzle in there, is it the art one?")
            in_recent = bool(recent) and view is not None and bool(products) and not found.order_ids \
                and prediction.intent not in PASSIVE_INTENTS and bool(_IN_THAT_ORDER.search(piece)) \
                and not points_at_another_order(piece) \
                and view.order(recent) is not None and _holds_any(view, recent, products)
            if in_recent:
                entities["order_id"] = recent
            names_order = bool(found.order_ids or found.tracking_numbers) or about_recent or in_recent
            intent = reconsider_intent(prediction.intent, runner_up, piece, entities, names_order=names_order,
                                       message=text)
            if intent in ORDER_READ_INTENTS and found.addresses and found.addresses[0].complete \
                    and getattr(prediction, "probability", 1.0) < 0.5 and not found.order_ids \
                    and _ACCOUNTS_ADDRESS.search(text):
                # "My account still has my old address. The right one is 40 Quarry Lane, Austin, TX
                # 78704.": a whole address written out, read unsurely as a question about an order,
                # in a message about the account's address, is the account's new one
                intent = "update_default_address"
            if index in advice_asked and len(entities.get("products") or []) == 1 \
                    and prediction.intent in TOLD_BEFORE_ADVICE:
                # "... flame is super low. wtf do i do": what to do about the product is what its
                # documents tell (the manual's troubleshooting), not the catalogue's lists nor the
                # order's lines
                intent = "product_info"
                entities["documents_first"] = True
            if in_recent and intent in CATALOGUE_INTENTS:
                intent = "order_items"
            if intent == "policy_question" and recent and not names_order and view is not None \
                    and view.order(recent) is not None and _THAT_ORDER.search(piece) \
                    and not points_at_another_order(piece) \
                    and (_ASKS_WHATS_IN.search(piece) or asks_about_an_order(piece)):
                # "OK good. And what things are inside this order?" after an answer about #W1: a
                # question about that order, which its facts answer, not the rules of orders at large
                intent = "order_items" if _ASKS_WHATS_IN.search(piece) else "order_status"
                entities["order_id"] = recent
                names_order = True
            if intent == "account_info" and recent and not names_order and view is not None \
                    and view.order(recent) is not None and _ON_THAT_ORDER.search(piece):
                # "#W9102111 status" ... "whats the address on it": the order's, not the account's
                intent = runner_up if runner_up in ORDER_READ_INTENTS else "order_status"
                entities["order_id"] = recent
            that_order = not names_order and bool(clauses) and bool(clauses[-1].entities.get("order_id")) \
                and bool(_THAT_ORDER.search(piece)) and intent not in WRITE_INTENTS
            told_before = _named_before(piece, text, clauses, catalogue) if catalogue and not products else []
            # ("... how long is the warranty on it?" ... "how long does the battery last on that one?":
            # "that one" is the one product the last turn was about, when the message names none)
            talked_about = _product_talked_about(state, catalogue) \
                if catalogue and not products and not told_before and not names_order \
                and product_refs and product_refs[0].hint is None else []
            if catalogue and not products and not told_before and not names_order and not product_refs:
                # ("wat sizes are the two backpacks in W1?" ... "how many liters does the large one
                # hold": "the large one" is the product just talked about, in the version it names)
                talked_about = _one_described(piece, _product_talked_about(state, catalogue), catalogue)
            # ("W8309293 security cam - wifi or ethernet?" ... "field of view?": a short question
            # naming one of its options is about the product the last turn was about, too)
            key_asked = not talked_about and catalogue is not None and not products and not told_before \
                and not names_order and not clauses and len(piece.split()) <= KEY_QUESTION_WORDS \
                and asks_as_question(piece) \
                and _names_an_option_key(piece, _product_talked_about(state, catalogue), catalogue)
            if key_asked:
                talked_about = _product_talked_about(state, catalogue or [])
                held = view.order(recent) if recent and view is not None else None
                if held is not None and str(talked_about[0]["product_id"]) in held.product_ids():
                    # (their own one, in the order just talked about: its option is on its line)
                    entities["order_id"], intent = recent, "order_items"
                    entities["products"] = talked_about
                    entities["own_products"] = [str(talked_about[0]["product_id"])]
                elif intent not in POINTING_BACK_INTENTS:
                    intent = "product_info"
            asked_of = None if products or names_order or that_order or not catalogue else \
                _product_asked_about_again(piece, clauses, catalogue, told_before)
            if that_order:
                # "Which address is the order with the white headphones being sent to, and what did
                # that whole order cost me?": the order the clause before found, asked about itself.
                entities["order_id"] = clauses[-1].entities["order_id"]
                if intent not in ORDER_READ_INTENTS:
                    intent = "order_items"
            elif asked_of is not None and intent not in WRITE_INTENTS:
                # "I'm shopping for a coffee maker. What colours can I get?": the question names one
                # of the options of the product the clause before named; it is about that product.
                # ("... do u have a 4k one?": whether the version its values name is in stock)
                version_asked = intent == "product_availability" and bool(_ONE_OF_THOSE.search(piece)) \
                    and bool(asked_of.get("options"))
                intent = "product_availability" if version_asked else "product_info"
                entities["products"] = [asked_of]
            elif not products and not names_order and intent in POINTING_BACK_INTENTS \
                    and (clauses or talked_about) \
                    and (asks_as_question(piece)
                         or (asks_something(piece) and not asks_another_item(piece))) \
                    and (not product_refs or product_refs[0].hint is None) \
                    and len(before := told_before or talked_about) == 1:
                # "My blue earbuds, can I use them for swimming?": "them", "it", "that" are the one
                # product the clause before named; so is a question that names none ("... And how
                # many hours is the battery?"). A question of which versions it comes in carries the
                # product, not the version told before ("I have a black desk lamp ... what other
                # colours it comes in"); "those exact ones in a 12?" keeps it.
                from csagent.grounding.frame import asks_the_range

                pointed = {**before[0], "options": {}} if asks_the_range(piece) else before[0]
                entities["products"] = [_carried(pointed, piece, catalogue or [])]
                if clauses and clauses[-1].entities.get("products") == told_before \
                        and len(clauses[-1].text.split()) < TOPIC_WORDS and "?" not in clauses[-1].text:
                    # ... and a clause that only named it ("My blue earbuds") asked nothing itself.
                    vouched.pop(len(clauses) - 1, None)
                    clauses.pop()
            elif not products and not names_order and not recent and intent in ITEM_REQUESTS \
                    and talked_about and product_refs and product_refs[0].hint is None \
                    and view is not None and names_a_purchase(str(talked_about[0]["name"]), view):
                # "does the yoga mat I just ordered have latex in it??" (its pages answered) ... "Can
                # you swap it for a TPE one then?": "it" is the one product the last turn was about,
                # theirs; the order holding it is found as if it were named.
                entities["products"] = [_carried(talked_about[0], piece, catalogue or [])]
            elif not products and not names_order and intent in {"out_of_scope", "smalltalk"} \
                    and (clauses or talked_about) and product_refs and asks_as_question(piece) \
                    and len(before := told_before or talked_about) == 1:
                # "I've got a few questions about my espresso machine ... First one: how often am I
                # supposed to descale it?": read as nothing of the store's, a question of the one
                # product the clause before named, which its pages answer.
                intent = "product_info"
                entities["products"] = [_carried(before[0], piece, catalogue or [])]
            # ("and #W1780552" after a tracking question names an order, as "and the tablet one?" a
            # product; a message of one clause is read whole, its opening "and" with it)
            # (their own products count by their everyday words: "the order with the kettle and the
            # boots", a kettle too plain a word to name one of the catalogue's)
            own_named = [m.surface for m in product_mentions(piece, view.products(), own=True)] \
                if view is not None and last_question else []
            # (a write read unsurely of words naming no change of their own follows up too: "tracking
            # #W5367110" ... "#W3137176 too")
            unsure_write = bool(last_question) and intent in WRITE_INTENTS and named_change(piece) is None \
                and 0.0 < float(getattr(prediction, "probability", 0.0) or 0.0) < MAJORITY
            follows_up = bool(last_question) and (intent not in WRITE_INTENTS or unsure_write) \
                and is_elliptical(
                text if len(pieces) == 1 else piece,
                [p.surface for p in products] + [str(v) for p in products for v in p.options.values()]
                + own_named + list(found.order_ids))
            question_before = clauses[-1].intent if clauses and clauses[-1].intent in FOLLOW_UP_INTENTS \
                and products and intent not in WRITE_INTENTS and not follows_up else None
            if follows_up:
                intent = str(last_question)  # "where's my grill order?" … "and the tablet one?"
                of_an_order = (state.get("memory") or {}).get("last_order_question")
                if of_an_order and intent not in ORDER_READ_INTENTS \
                        and (found.order_ids or len({m.lower() for m in own_named}) > 1):
                    # "n the one w the makeup kit n the watch, same deal?": an order named (by its id,
                    # or by two of its items), so the last question asked of an order
                    intent = str(of_an_order)
            elif question_before and intent != question_before and is_elliptical(
                    piece, [p.surface for p in products]
                    + [str(v) for p in products for v in p.options.values()]):
                # "how long is the warranty on my keyboard and my digital camera?": the question of
                # the clause before, asked of what this one names
                intent = question_before
                before_names = [str(p.get("surface") or "")
                                for p in clauses[-1].entities.get("products") or []]
                if len(before_names) == 1 and before_names[0] and before_names[0] in clauses[-1].text:
                    piece = clauses[-1].text.replace(before_names[0], products[0].surface)
            elif last_question in KNOWLEDGE_FOLLOW_UPS and len(pieces) == 1 and opens_follow_up(text) \
                    and len(text.split()) <= MAX_FOLLOW_UP_WORDS and not asks_for_change(piece):
                # "how long do refunds take to show up on a credit card?" … "and to a gift card?":
                # the same question, about what the follow-up names.
                intent, follows_up = str(last_question), True
                piece = f"{memory_text} {piece}".strip()
            elif last_question in KNOWLEDGE_FOLLOW_UPS and not products and asks_as_question(piece) \
                    and not asks_for_change(piece) and (
                        (intent in {OUT_OF_SCOPE, "smalltalk"} and _POINTS_BACK.search(piece)) or (
                            intent not in WRITE_INTENTS and len(pieces) == 1
                            and prediction.confidence < MIN_CLAUSE_CONFIDENCE
                            and len(piece.split()) <= MAX_FOLLOW_UP_WORDS)):
                # "how long is the warranty on it?" … "Would that include damage from limescale?":
                # read as nothing of the store's, a question about what the last answer said; so is
                # a short one the model cannot read on its own ("warranty on grill burners?" …
                # "other parts?", "rust on the grates covered?").
                intent, follows_up = str(last_question), True
                piece = f"{memory_text} {piece}".strip()
            of_the_last = (state.get("memory") or {}).get("last_order_question")
            if picked and waiting is None and not follows_up and of_the_last and len(pieces) == 1 \
                    and intent not in WRITE_INTENTS and (not asks_something(piece) or float(
                        getattr(prediction, "probability", 0.0) or 0.0) < MAJORITY):
                # "is my kettle shipped yet", answered for both kettle orders ... "the electric one,
                # its going to my aunt in san antonio": one of them picked, in words that ask nothing
                # else (or nothing sure); the question asked of them, of that one
                intent, follows_up = str(of_the_last), True
            if view is not None and intent in GENERAL_QUESTION_INTENTS and not follows_up \
                    and prediction.intent in ORDER_BOUND_INTENTS and names_a_purchase(piece, view):
                # "the tracking number for the order with the tablet": general in its words, but the
                # tablet is one this customer bought, so it is about that order after all. (A
                # follow-up asks the last question again: "how long is my laptop covered?" ... "And
                # the wristwatch from my other order?")
                intent = prediction.intent
            if not entities.get("order_id") and not found.order_ids and _POINTS_AT_SEVERAL.search(piece) \
                    and not _PICKS_ONE_OF_THEM.search(piece):
                # "why are my makeup kit and my bookshelf orders going to DC and Charlotte?? ... send
                # both to my home address": the orders the clauses before were about.
                # ("I have two orders with an office chair, #W1 and #W2. When they will arrive?")
                earlier = list(dict.fromkeys(
                    str(o) for c in clauses
                    for o in c.entities.get("order_ids") or [c.entities.get("order_id")] if o))
                if len(earlier) > 1:
                    entities["order_ids"], entities["order_id"] = earlier, earlier[0]
                    if intent in CATALOGUE_INTENTS and not products:
                        # ("I've got two orders with you ... have they left yet?": a question of them)
                        intent = runner_up if runner_up in ORDER_READ_INTENTS else "order_status"
            read_as = intent
            if view is not None and not found.addresses \
                    and may_name_an_address(intent, piece, entities, recent, view):
                intent = address_known_to_the_customer(intent, piece, entities, view, text)
            others = about_another_persons(piece) or (
                # "My son ordered a tablet on his account. Cancel it.": what points back at another
                # person's order is about that order too, unless it names a product or an order.
                intent in WRITE_INTENTS and not products
                and any(c.entities.get("another_persons") for c in clauses))
            if others and not found.order_ids and intent not in GENERAL_INTENTS | HANDOFF_INTENTS:
                # "check the status of my husband's order": not the customer's to see; the rule. (An
                # order id names an order, which is the customer's if it is on their account.)
                intent, entities = "policy_question", {"another_persons": True}
            reason = find_cancel_reason(piece) or (message_reason if intent == "cancel_order" else None)
            if reason is None and (intent == "cancel_order" or "reason" in awaited):
                # "Then please cancel, I not need it more", or the answer to "why?": the customer's words
                reason = read_cancel_reason(piece if "reason" in awaited else text)
            if reason:
                entities["reason"] = reason
            grounded_to_store = False
            if view is not None and not entities.get("another_persons"):  # (not this customer's order)
                try:
                    intent, entities, grounded_to_store = _grounded(
                        intent, runner_up, piece, text, entities, view, variants, recent,
                        recent_products if recent == (state.get("memory") or {}).get("last_order_id") else (),
                        about_a_product=_purchase_question_reading(
                            piece, products, intent,
                            told_alone=sum(asking) - asking[index] == 0))
                except Exception:  # noqa: BLE001 - grounding refines; without it the words decide
                    logger.exception("grounding failed; the clause is read from its words alone")
                grounded_to_store = grounded_to_store or key_asked  # (the product just talked about)
                if intent in ADDRESS_CHANGES and not found.addresses and state.get("pending_actions"):
                    intent, entities = _default_to_the_address_proposed(intent, piece, entities, state)
                if index in advice_asked and entities.get("documents_first"):
                    intent = "product_info"  # (advice about their own one: still its documents')
                if entities.get("address_named"):
                    intent = address_other_than_the_orders(read_as, intent, piece, entities, view)
                elif intent == "change_order_address" and not entities.get("address") and not found.addresses:
                    # "send the tea kettle order to my place in denver instead of jacksonville": two
                    # of their cities named; once the order is found, the one it is not going to now.
                    order = view.order(entities.get("order_id"))
                    named = view.address_named(piece, besides=order.address) if order is not None else None
                    if named is not None:
                        entities["address"] = dict(named)
                if intent == "cancel_order" and message_reason and not entities.get("reason"):
                    entities["reason"] = message_reason  # read as a cancellation once grounded
                if entities.get("not_bought") and not entities.get("order_id"):
                    entities = orders_of_its_kind(entities, view, catalogue or [])
                grounded = entities.get("grounded_orders") or []
                # (an order only offered in a question, "is that the one you mean?", is not yet one
                # talked about)
                settled = len(grounded) == 1 and not entities.get("question")
                named = found.order_ids[:1] or (grounded if settled else [])
                if named:
                    recent = named[0]  # "what's in my kettle order, and is my other order pending?"
            if intent in WRITE_INTENTS:
                # "how much would I get back if I returned it?" asks about a return, not for one.
                # An item request's wish may sit in another clause ("the boots are too small.
                # please, a 10"), unless that clause asks for a change of its own ("i have 2 pairs
                # of red headphones. pls cancel the in ear ones": the cancellation's).
                entities["asks_for_change"] = asks_of(piece) or (
                    intent in {"change_items", "return_request"} and asks_for_change(text)
                    and any(asks_of(p) for p in pieces)
                    and not any(p != piece and pr.intent in WRITE_INTENTS - {intent} and asks_of(p)
                                # ("Pay difference with gift card" pays for the item change)
                                and not (pr.intent == "change_payment" and names_a_price_difference(p))
                                for p, pr in zip(pieces, predictions, strict=True))) or (
                    # (or writes out the new address: "New default address: 4512 Sunset Blvd, ...";
                    # not when it asks to have where it goes checked: "just want to double check it's
                    # going to Maple Drive and not to my apartment in San Antonio?")
                    # ("If I send back just the clock, do I have to return the backpack too?" asks
                    # what would follow a change, however fully it names it)
                    view is not None and (asks_something(piece) or bool(find_addresses(piece)))
                    and not asks_for_information(piece) and not is_hypothetical(piece)
                    # (nor where it goes now: "one of my orders is headed to my old apartment in NY")
                    and not (intent == "change_order_address" and _TELLS_WHERE_IT_GOES.search(piece))
                    and _fully_specified(intent, text, entities, view, piece)) or (
                    # "I just moved in with my partner so my address has changed! The new one is 45
                    # Magnolia Court, ...": an address said to have changed, the new one written out
                    intent == "update_default_address" and names_address_change(piece)
                    and not asks_something(piece) and bool(find_addresses(text))) or (
                    # ("1200 ocean drive apt 5b, miami florida 33139": an address written alone, the
                    # whole message, gives the address its reading's change needs)
                    intent in {"update_default_address", "change_order_address"} and len(pieces) == 1
                    and only_an_address(piece)) or _one_more_of_the_same(piece, intent, state, clauses)
                if entities["asks_for_change"] and state.get("pending_actions") \
                        and _one_more_of_the_same(piece, intent, state, ()):
                    entities["adds_to_pending"] = True  # (the change proposed still waits beside it)
            named_products = entities.get("products") or []
            if intent == "order_items" and len(named_products) == 1 and asks_as_question(piece) \
                    and not has_ideographs(piece) and not _ASKS_WHATS_IN.search(piece) \
                    and not _names_an_option(piece, named_products, catalogue or ()) \
                    and _documents_answer_it(piece):
                # "the gas grill from W3561391, how do i light it once it comes?": a question about their
                # own product that its documents answer (both trained readers say so), not the lines
                # of its order (in English: they read Chinese less surely, "里面那台笔记本电脑单价多少？"
                # asks its price)
                intent = "product_info"
                entities["documents_first"] = True
            if intent in PRODUCT_QUESTION_INTENTS and len(named_products) == 1 \
                    and (opens_question(ORDER_ID_RE.sub(" ", piece)) or asks_as_question(piece)
                         or entities.get("owned_in")):
                # A question about one product of the catalogue is about the store ("how ofen
                # shoud i descale my espreso machine"); when no catalogue template comes close, the
                # product's documents answer it first, the catalogue's facts if they are silent. So
                # is what the customer tells of their own one ("little orange light just came on on
                # my air purifier and I have no clue what it means").
                grounded_to_store = True
                names = [str(p.get("name") or "") for p in catalogue or ()] + [named_products[0]["surface"]]
                if intent == "product_info" and asks_the_documents(piece, names):
                    entities["documents_first"] = True
            if intent == "account_info" and asks_as_question(piece) and documents_answer_closer(piece):
                # "does my gift card expire?", "can u cash out my gift card balance?": what the
                # account holds, and the store's rule, which is what is asked.
                entities["documents_too"] = True
            # A clause that grounds to the customer's own orders, or asks about a product the store
            # sells, is about the store, whatever the examples' score: it is never refused as out
            # of scope.
            confidence = float(prediction.confidence)
            # (a product said to be in the order just talked about is grounded in it: "ok and the
            # umbrella in there is the red 7 ft one right?")
            if grounded_to_store or follows_up or in_recent:
                confidence = max(confidence, GROUNDED_CONFIDENCE)
            elif intent == prediction.intent and getattr(prediction, "probability", 0.0) > MAJORITY \
                    and intent not in HANDOFF_INTENTS:
                # The trained model, which learned out of scope from examples too, gives this reading
                # more probability than all others together ("yall sell air fryers?": a catalogue
                # question, however far its words are from the examples): not one to refuse, unless
                # the message says plainly it is about something else (below). (A hand-off is never
                # refused, and lifted it would no longer give way to a request read surely beside it:
                # "My daughter told me I could just message you here. Has my kettle shipped?")
                vouched[len(clauses)] = confidence
                confidence = max(confidence, OUT_OF_SCOPE_DOUBT)
            if intent in _BALANCE_READ_AS and not products and _BALANCE_ASKED.search(piece) \
                    and (names_a_gift_card(text) or names_a_gift_card(_last_customer_text(state))):
                # "My gift card, how much money it still have?", or "how much is even on the card
                # then" after a gift card was named: its balance, which the account holds
                intent, grounded_to_store = "account_info", True
                entities.pop("order_id", None)
                entities["account_fact"] = "gift_card_balance"
            if intent in _BALANCE_READ_AS | {"account_info"} and view is not None \
                    and names_a_gift_card(piece) and _COVERS.search(piece) \
                    and names_a_purchase(piece, view):
                # "whether my gift card has enough on it to cover the blue t-shirt order": that order
                # paid with the gift card, weighed (what is on it beside what the order cost), not the
                # rule for gift cards, nor the t-shirt's warranty; nothing is asked to be done.
                intent = "change_payment"
                entities = ground(intent, piece, entities, view, variants, text)
                entities["asks_for_change"] = False
            changed = _CHANGE_SUPPOSED.search(piece)
            # (or found by what it holds: "If I cancelled the order with the tea kettle, how much
            # would I get back?")
            if intent in ORDER_READ_INTENTS | {"policy_question"} and changed \
                    and (found_order_named(found, message_orders, entities)
                         or (entities.get("order_id") and len(entities.get("grounded_orders") or ()) == 1)) \
                    and (_HOW_MUCH.search(piece) or MONEY_BACK_ASKED.search(piece)):
                # "If I cancel the order #W4284542, how much money I get back and to which card?": a
                # question about that change of that order, which its facts answer (what would go
                # back, and where), not the rule in general; nothing is asked to be done.
                intent = REQUEST_BY_VERB[changed.group(1).lower()]
                entities["asks_for_change"] = False
            if intent == "policy_question" and found_order_named(found, message_orders, entities) \
                    and prediction.confidence < WEAK_GENERAL_QUESTION and not entities.get("products") \
                    and asks_about_an_order(piece):
                # "which items are in #W8921199 and what the total came to?": a weakly read general
                # question beside the one order the message names is about that order.
                intent = "order_status"
            if picked and entities.get("order_id") == picked:
                entities["picked_candidate"] = True  # answers "which of your orders do you mean?"
            if intent in HANDOFF_INTENTS and _doubted_handoff(piece, prediction):
                doubted.add(len(clauses))
            if intent == "complaint" and prediction.intent == "complaint" and not products \
                    and not any(entities.get(k) for k in _NAMES_AN_ORDER) and not asks_something(piece) \
                    and 0.0 < float(getattr(prediction, "probability", 0.0) or 0.0) < MAJORITY:
                # "Hi! I've been ordering gifts for half my family, I'm losing track. Which of my
                # orders ...?": read unsurely as a complaint, naming nothing that went wrong; beside
                # a request it is a remark (so is a doubted hand-off)
                doubted.add(len(clauses))
            if intent in {OUT_OF_SCOPE, "smalltalk"} and clauses and not products \
                    and asks_as_question(piece) and _POINTS_BACK.search(piece) \
                    and not asks_as_question(clauses[-1].text) \
                    and (named := [c for c in clauses if c.entities.get("products")]):
                # "The yoga mat I ordered is natural rubber. I have allergy for latex, is this a problem
                # for me?": what "this" points back at is what the statements before it told, of the
                # product they named; its documents are asked, with those words
                intent, confidence = "product_info", max(confidence, GROUNDED_CONFIDENCE)
                entities["products"] = [_carried(named[-1].entities["products"][0], piece, catalogue or [])]
                entities["told"] = " ".join(pieces[max(0, index - 2):index])  # (what it told, in its words)
                entities["documents_first"] = True
                if not clauses[-1].entities.get("products") and clauses[-1].intent in CATALOGUE_INTENTS:
                    # ("I have allergy for latex": told, not asked on its own)
                    vouched.pop(len(clauses) - 1, None)
                    doubted.discard(len(clauses) - 1)
                    clauses.pop()
            if intent in KNOWLEDGE_ABOUT_WHAT_HAPPENED and clauses and not products \
                    and not entities.get("told") and asks_as_question(piece) \
                    and (_POINTS_BACK.search(piece) or intent == "warranty") \
                    and clauses[-1].entities.get("products") and not asks_as_question(clauses[-1].text):
                # "my dog ate a corner off the pet bed 💀 does the warranty cover that": "that" is
                # what the statement before it told, which the documents are asked with; so is what
                # a warranty question follows ("my cycling helmet took the knock. Would a replacement
                # be covered under the warranty?"), whose products it asks about; a complaint that
                # only told it is that question's matter, not a request of its own.
                told = clauses[-1]
                entities["told"] = told.text
                if intent == "warranty":
                    entities["told_of"] = [str(p["product_id"]) for p in told.entities["products"]
                                           if p.get("product_id")]
                    if told.intent == "complaint" and not NEAR_ORDER_ID.search(told.text):
                        vouched.pop(len(clauses) - 1, None)
                        clauses.pop()
            if clauses and _tells_more_of(clauses[-1], intent, piece, entities):
                # "the red t-shirt you sent me is a V-NECK. I did not order a v-neck": more of what
                # the clause before told, about the order it found; no question of which order.
                clauses[-1] = replace(clauses[-1], text=f"{clauses[-1].text} {piece}")
                continue
            if clauses and clauses[-1].intent in WRITE_INTENTS and intent not in WRITE_INTENTS \
                    and _THE_SAME_TOO.search(piece) and not asks_as_question(piece) \
                    and entities.get("order_id") \
                    and entities["order_id"] != clauses[-1].entities.get("order_id"):
                # "Cancel #W5733668 right now. And the other order with an office chair in it too": the
                # change the clause before asked for, of another order
                asked_before = clauses[-1].entities
                intent = clauses[-1].intent
                entities.update({k: asked_before[k] for k in ("reason", "asks_for_change")
                                 if asked_before.get(k) is not None and not entities.get(k)})
            if intent in WRITE_INTENTS and not entities.get("asks_for_change") and entities.get("order_id") \
                    and any(c.intent == intent and c.entities.get("asks_for_change")
                            and c.entities.get("order_id") == entities["order_id"] for c in clauses):
                # "Cancel #W5036595 immediately. I don't want any of it anymore.": more words of the
                # change the clause before asked for, of the same order, never a question about it
                entities["asks_for_change"] = True
            clauses.append(Clause(text=piece, intent=intent, confidence=round(confidence, 4),
                                  entities=entities))
        if any(c.intent == OUT_OF_SCOPE and c.confidence >= OUT_OF_SCOPE_DOUBT for c in clauses):
            # "Can you recommend me good restaurant in Columbus? Something not expensive.": beside a
            # clause plainly out of scope, a fragment the model alone vouches for is read as it was.
            clauses = [replace(c, confidence=vouched[i]) if i in vouched else c
                       for i, c in enumerate(clauses)]
        clauses = without_doubted_readings(clauses, doubted)
        clauses = payment_details_folded(
            without_ruled_out_changes(reasons_folded(without_changes_told_as_done(clauses))))
        clauses = without_wishes_asked_about(clauses, catalogue or [])
        clauses = wishes_asked_if_possible(preferences_folded(without_purchases_told(clauses, view)))
        clauses = without_account_facts_told(clauses)
        clauses = bare_verb_of_a_payment(clauses)
        clauses = address_of_the_order_change(clauses)
        if not state.get("pending_actions") and not state.get("awaiting"):
            clauses = returns_named_by_their_words(changes_held_back(clauses), text)
            clauses = changes_priced_first(clauses, text, view)
        if picked and waiting is not None and view is not None:
            clauses = with_request_reread(clauses, waiting, picked, text, view, variants, catalogue)
        if view is not None:
            clauses = with_payment_answered(clauses, text, state, view)
        if view is not None and state.get("pending_actions"):
            narrowed = _narrowed(text, pending_actions(state), view, lang, variants)
            if narrowed is not None:
                return narrowed
        # A weakly read fragment ("My brother" in "... who won the Super Bowl? My brother and I have a
        # bet going") does not decide the route beside clauses read with confidence.
        # Beside a clause plainly out of scope, a weak one decides nothing either ("whats the weather
        # gonna be like in chicago tmrw? tryna figure out if i need a jacket lol").
        # Nor does a statement that asks nothing, whatever it names: it tells why the question off
        # the store's topics is asked ("how will be the weather in San Antonio this weekend? I am
        # planning a barbecue with my family"). (English only: what asks is read by English words.)
        plainly_off = any(c.intent == OUT_OF_SCOPE and c.confidence >= OUT_OF_SCOPE_DOUBT for c in clauses)
        told_only = [plainly_off and lang == "en" and c.intent != OUT_OF_SCOPE and not asks_something(c.text)
                     for c in clauses]
        sure = [c.intent for c, told in zip(clauses, told_only, strict=True) if not told
                and (c.confidence >= MIN_CLAUSE_CONFIDENCE
                     or (c.intent not in PASSIVE_INTENTS and not plainly_off))]
        intents = [c.intent for c in clauses]
        route = route_for(sure or intents)
        if route == "general" and any(c.intent == OUT_OF_SCOPE and c.confidence >= MIN_CLAUSE_CONFIDENCE
                                      and _asks_off_topic(c) for c in clauses):
            # "Dear team, do you know what the weather will be on Saturday? Many thanks": the courtesy
            # wraps a question the store does not answer, which decides the reply ("lovely weather
            # today, isn't it?" asks nothing: small talk).
            route = OUT_OF_SCOPE
        if route == OUT_OF_SCOPE and not any(c.intent == OUT_OF_SCOPE and c.confidence >= REFUSAL_MIN
                                             for c in clauses):
            # Nothing vouches for "off-topic" more than for a store request in words the examples
            # lack: a store matter is never refused, so what the customer needs is asked.
            route = "clarify"
        if _chat_only(clauses):
            # "Hello! How are you today? I only want to say your website is very nice", "This heat
            # wave is unbearable ... Just venting.", "今天外面好冷啊": small talk, and beside it only
            # weak readings of statements that ask nothing and name no order; a friendly answer that
            # offers help, not "say it again". A statement needs no surer reading for that.
            social = [c for c in clauses if c.intent in GENERAL_INTENTS]
            said = "smalltalk" if any(c.intent == "smalltalk" for c in social) else social[0].intent
            if said == "smalltalk" and THANKS_WORDS.search(text) and not any(asks_something(c.text)
                                                                             for c in clauses):
                said = "thanks"  # "cool thx, thats all": a closing thanks, read as small talk
            return Understanding(route="general", intent=said,
                                 confidence=max(MIN_CLAUSE_CONFIDENCE, *(c.confidence for c in social)),
                                 lang=lang, entities={}, clauses=tuple(clauses))
        relevant = [c.confidence for c in clauses if route_for([c.intent]) == route] or [0.0]
        primary = next((c.intent for c in clauses if route_for([c.intent]) == route), intents[0])
        merged: dict[str, Any] = {}
        for clause in clauses:
            for key, value in clause.entities.items():
                merged.setdefault(key, value)
        return Understanding(route=route, intent=primary, confidence=max(relevant), lang=lang,
                             entities=merged, clauses=tuple(clauses))


def _chat_only(clauses: Sequence[Clause]) -> bool:
    """Is the message small talk (a greeting, thanks or chat read at all) with nothing else but
    weakly read statements that ask nothing (`speech_acts.asks_something`) and name no order?"""
    from csagent.nlp.speech_acts import asks_something

    def weak_statement(c: Clause) -> bool:
        return (c.confidence < MIN_CLAUSE_CONFIDENCE and not asks_something(c.text)
                and c.intent not in HANDOFF_INTENTS and not any(c.entities.get(k) for k in _NAMES_AN_ORDER))

    def chat(c: Clause) -> bool:  # a weakly read chat that asks something is not known to be chat
        return c.intent != "smalltalk" or c.confidence >= MIN_CLAUSE_CONFIDENCE or not asks_something(c.text)

    social = [c for c in clauses if c.intent in GENERAL_INTENTS]
    rest = [c for c in clauses if c.intent not in GENERAL_INTENTS]
    return bool(social) and all(weak_statement(c) for c in rest) and all(chat(c) for c in social)


def _doubted_handoff(piece: str, prediction: Any) -> bool:
    """A hand-off reading the trained model gives less probability than all others together, in
    words that name no person (the explicit lexicon): "I am new customer here", "Could you please
    look into it?", "My two are begging me for one" read nearest the hand-off examples without
    asking for anyone."""
    from csagent.handoff.triggers import is_explicit_request

    probability = float(getattr(prediction, "probability", 0.0) or 0.0)
    return 0.0 < probability < MAJORITY and not is_explicit_request(piece)


_NAMES_AN_ORDER = ("order_id", "order_ids", "invalid_order_id", "grounded_orders", "tracking_number",
                   "address")


# "lovely weather today, isn't it?", "crazy week, right?": a question tagged on, asking nothing.
_TAG_QUESTION = re.compile(
    r",\s*(?:isn'?t|aren'?t|don'?t|doesn'?t|wasn'?t|right|eh|huh|no)\b[^,?]*\?\s*$", re.IGNORECASE)


def _asks_off_topic(clause: Clause) -> bool:
    """Does an out-of-scope clause ask something ("do you know what the weather will be?", "I don't
    suppose you could recommend a recipe for banana bread?"), rather than chat?"""
    from csagent.nlp.entities.questions import opens_question

    text = clause.text
    return opens_question(text) or (clause.confidence >= OUT_OF_SCOPE_DOUBT and has_question_mark(text)
                                    and not _TAG_QUESTION.search(text))


# What a clause naming a product the customer bought may be read as before grounding weighs it.
_PRODUCT_OR_ORDER = frozenset({"product_info", "product_availability", "order_status"})
# Questions the documents answer about what happened to a product, and the words that point back at
# what a statement before them told ("does the warranty cover that?", "is it normal?").
KNOWLEDGE_ABOUT_WHAT_HAPPENED = frozenset({"warranty", "product_info", "policy_question"})
_POINTS_BACK = re.compile(r"\b(?:that|this|it)\b", re.IGNORECASE)


# What orders hold or cost, asked of them ("what's in", "the total on"), not which they are.
_ASKS_WHATS_IN = re.compile(r"\b(?:what'?s in|what is in|what was in|what were in|what'?s inside|contents?"
                            r"|contains?|contained"
                            r"|what (?:things|items|stuff|products) (?:are|is|were|was) (?:in|inside)\b"
                            r"|(?:the )?total|in all"
                            r"|altogether|how much (?:is|was|are|were|did|do)\b)", re.IGNORECASE)


def _holds_a_product_named(text: str, order_id: str, view: Any) -> bool:
    """Does the order hold a product the words name ("the laptop in #W2923184")?"""
    from csagent.grounding.resolve import product_mentions

    order = view.order(order_id)
    return order is not None and any(m.product_id in order.product_ids()
                                     for m in product_mentions(text, view.products()))


# "also", "too", "as well": one more of what was asked
_ONE_MORE = re.compile(r"\b(?:also|too|as well)\b", re.IGNORECASE)


def _one_more_of_the_same(piece: str, intent: str, state: Mapping[str, Any],
                          clauses: Sequence[Clause]) -> bool:
    """ "could I also send back the coffee maker from my other order?" while a return waits for a
    yes (or beside one asked for in the message): one more change of the kind already asked for,
    which asks for it however much its words ask permission. (Not a question of what would follow:
    "if I return the lamp, do I have to send the shade back too?")"""
    from csagent.nlp.speech_acts import is_hypothetical, weighs_a_change
    from csagent.requests import RESTATES

    if not _ONE_MORE.search(piece) or is_hypothetical(piece) or weighs_a_change(piece):
        return False
    proposed = {str(p.action) for p in pending_actions(state)} if state.get("pending_actions") else set()
    return any(intent in RESTATES.get(action, ()) for action in proposed) \
        or any(c.intent == intent and c.entities.get("asks_for_change") for c in clauses)


def _purchase_question_reading(piece: str, products: Sequence[Any], intent: str, *,
                               told_alone: bool = False) -> bool | None:
    """Does a question naming a product, read as a product or an order question, ask about the
    product itself (True) or its order (False), as the model trained on customers' messages reads
    it (`nlp.purchase_question`)? None when it is unsure; and for other clauses, whose intent is
    not in doubt, or which ask nothing ("my robot vacuum keeps wandering around and won't go back
    to its dock" tells what went wrong, `grounding.frame.tells_of_the_product`; "8gb ram on my
    laptop is kinda mid" says what the next clause asks about): their words decide. A statement
    read as a product question that nothing else in the message asks beside (`told_alone`: "little
    orange light just came on on my air purifier and I have no clue what it means. help?") is the
    customer's whole matter: the model reads it too."""
    from csagent.grounding.frame import CATALOGUE_WISHES, asks_as_question

    if not products or intent not in _PRODUCT_OR_ORDER:
        return None
    if not asks_as_question(piece) and not (told_alone and intent in CATALOGUE_WISHES):
        return None
    from csagent.nlp.purchase_question import asks_about_the_product

    return asks_about_the_product(piece)


# Where an order is going now, told ("is headed to my old apartment", "it's being shipped to Denver"):
# the address after it is the one it has, not one wished for.
_TELLS_WHERE_IT_GOES = re.compile(
    r"\b(?:is|are|'s|was|were|s)\s+(?:still\s+|currently\s+|now\s+)?(?:headed|heading|going|being sent|"
    r"being shipped|set to (?:go|ship|be (?:sent|shipped|delivered))|shipping|on (?:its|their) way)"
    r"\s+(?:to|for)\b|\bmy old\s+(?:address|apartment|place|flat|house|home)\b", re.IGNORECASE)


def _carried(product: Mapping[str, Any], piece: str,
             catalogue: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The product a clause points back at ("Do you have that exact model in red?" after "the black
    wireless over-ear ones"), with the options the clause names in place of the ones told before."""
    from csagent.grounding.options import find_option_values

    entry = _catalogue_entry(catalogue, str(product.get("product_id")))
    named = {h.key: h.value for h in find_option_values(piece, entry.get("options") or {})} if entry else {}
    return {**product, "options": {**(product.get("options") or {}), **named}, "carried": True}


def _catalogue_entry(catalogue: Sequence[Mapping[str, Any]], product_id: str) -> Mapping[str, Any] | None:
    """The catalogue's product of `product_id` ({product_id, name, options}), or None."""
    return next((p for p in catalogue if str(p.get("product_id")) == product_id), None)


def _names_an_option_key(piece: str, products: list[dict[str, Any]],
                         catalogue: Sequence[Mapping[str, Any]]) -> bool:
    """Does the text name an option of the one product given ("field of view?", "battery life?")?"""
    if len(products) != 1:
        return False
    entry = _catalogue_entry(catalogue, str(products[0]["product_id"])) or {}
    return any(re.search(rf"\b{re.escape(str(key))}\b", piece, re.IGNORECASE)
               for key in entry.get("options") or {})


def _names_an_option(piece: str, products: list[dict[str, Any]],
                     catalogue: Sequence[Mapping[str, Any]]) -> bool:
    """Does the text name an option of the one product given, by its name or by the unit its
    values are counted in ("how many cups does the coffee maker do": "1 cup", "8 cups")?"""
    if _names_an_option_key(piece, products, catalogue):
        return True
    if len(products) != 1:
        return False
    entry = _catalogue_entry(catalogue, str(products[0]["product_id"])) or {}
    counted = (re.fullmatch(r"[\d.]+\s+([a-z]+)", str(value), re.IGNORECASE)
               for values in (entry.get("options") or {}).values() for value in values)
    units = {m.group(1).lower().rstrip("s") for m in counted if m}
    return any(re.search(rf"\b{re.escape(unit)}s?\b", piece, re.IGNORECASE) for unit in units)


def _one_described(piece: str, products: list[dict[str, Any]],
                   catalogue: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The one product given, when the words point at it by option values only ("the large one",
    "the navy ones": values it comes in), with those values; [] otherwise."""
    if len(products) != 1:
        return []
    from csagent.grounding.options import find_option_values

    entry = _catalogue_entry(catalogue, str(products[0]["product_id"])) or {}
    for m in _THE_ONE_DESCRIBED.finditer(piece):
        if find_option_values(m.group(1), entry.get("options") or {}):
            return [_carried(products[0], piece, catalogue)]
    return []


# "the large one", "the navy ones", "that 4k one": a version pointed at by the words before "one".
_THE_ONE_DESCRIBED = re.compile(r"\b(?:the|that|this|those|these)\s+((?:[\w-]+\s+){1,3}?)ones?\b",
                                re.IGNORECASE)


# At most this many words make a question about one option of the product just talked about.
KEY_QUESTION_WORDS = 6


def _product_talked_about(state: Mapping[str, Any],
                          catalogue: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The one product the last turn was about (`memory.last_product`, else the one product its
    clauses named in the order it answered about), as a clause's product; [] when not one."""
    memory = state.get("memory") or {}
    last = memory.get("last_product")
    ids = [str(last["product_id"])] if isinstance(last, Mapping) and last.get("product_id") \
        else [str(p) for p in memory.get("last_products") or []]
    if len(ids) != 1:
        return []
    product = _catalogue_entry(catalogue, ids[0])
    if product is None:
        return []
    name = str(product.get("name") or "")
    return [{"product_id": ids[0], "name": name, "options": {}, "surface": name}]


_PRICE_WORDS = frozenset({"price", "prices", "cost", "costs", "much", "cheap", "cheapest", "expensive"})


def _named_before(piece: str, text: str, clauses: Sequence[Clause],
                  catalogue: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The products a clause that names none points back at: those of the nearest clause before it
    that named any, else the one product the message's words before it name ("I got a desk lamp from
    you. what colours does it come in?", where the statement was read as the order's, not the
    lamp's); [] when none, or several."""
    from csagent.grounding.resolve import product_mentions

    for clause in reversed(clauses):
        named = clause.entities.get("products") or []
        if named:
            return list(named)
    at = text.find(piece)
    if at <= 0:
        return []
    mentions = [m for m in _once_each(product_mentions(text[:at], catalogue)) if not m.ambiguous]
    if len({m.product_id for m in mentions}) != 1:
        return []
    last = mentions[-1]
    return [{"product_id": last.product_id, "name": last.name, "options": last.options,
             "surface": last.surface}]


# The store's rules about prices, not a product's price ("do you price match?", "any price protection?").
_PRICE_RULE = re.compile(r"\bprice[- ]?(?:match\w*|adjust\w*|drops?|protection|guarantee)\b", re.IGNORECASE)


# What a question opens on when it falls back from the one before ("if not, ...", "otherwise").
_FALLBACK_OPENING = re.compile(r"^\W*(?:(?:and|but|or)\s+)?"
                             r"(?:if\s+(?:not|so|it\s+(?:does|doesn[’']?t|is|isn[’']?t))"
                             r"|otherwise|failing that|or else|else)\b[\s,]*", re.IGNORECASE)
# "one that does", "ones that do": with what the clause before asked of the product.
_DOES_WHAT_WAS_ASKED = re.compile(r"\bones?\s+that\s+(?:does|do|is|are|has|have)\s*[?.!]*\s*$", re.IGNORECASE)
# "a 4k one", "the blue ones": a version of the product named before, told by its values.
_ONE_OF_THOSE = re.compile(r"\bones?\b", re.IGNORECASE)


def _product_asked_about_again(piece: str, before: Sequence[Clause],
                               catalogue: Sequence[Mapping[str, Any]],
                               told_before: Sequence[Mapping[str, Any]] | None = None,
                               ) -> dict[str, Any] | None:
    """The catalogue product the clause just before named, when this clause names none but asks
    about one of its option dimensions ("what colours ...?", "which sizes?") or its price, with the
    option values the clause names ("How much is the 4-piece blue softshell one?")."""
    from csagent.grounding.comparatives import dimension_named
    from csagent.grounding.frame import asks_the_stores_range
    from csagent.grounding.options import find_option_values, tokens
    from csagent.nlp.entities.questions import opens_question

    named = list(told_before) if told_before is not None else \
        (before[-1].entities.get("products") or []) if before else []
    # (a question may open on what it falls back from: "if not do u have a 4k one that does")
    asking = _FALLBACK_OPENING.sub("", piece)
    if len(named) != 1 or not (has_question_mark(piece) or opens_question(asking)):
        return None
    product = named[0]
    entry = next((p for p in catalogue if p.get("product_id") == product.get("product_id")), None)
    toks = tokens(piece)
    keys = list((entry or {}).get("options") or {})
    asked = dimension_named(toks, keys)
    dimensions = {str(k): [str(v) for v in vs] for k, vs in ((entry or {}).get("options") or {}).items()}
    named_values = {hit.key: hit.value for hit in find_option_values(piece, dimensions)}
    if _DOES_WHAT_WAS_ASKED.search(piece) and before:
        # "does the camera i bought work on wifi? if not do u have a 4k one that does": one with the
        # value the clause before asked of their item
        asked_before = before[-1].entities.get("own_options_asked") or []
        named_values = {**{str(o["key"]): str(o["asked"][0]) for o in asked_before
                           if o.get("product_id") == product.get("product_id") and o.get("asked")},
                        **named_values}
    if asked is None and not (_ONE_OF_THOSE.search(piece) and named_values and asks_the_stores_range(piece)) \
            and (not _PRICE_WORDS & set(toks) or _PRICE_RULE.search(piece)):
        # ("do u guys price match?" asks the store's rule, not the product's price; "do you have a
        # 4k one?" asks for the version the values name, "the glass one, has that one left yet?" not)
        return None
    # The options the clause before named still hold ("the e-reader with cellular in stock? how much
    # does it cost?" is the cellular one's price), but for the dimension this clause asks about; those
    # of the customer's own item describe theirs, not what is asked for now ("the yellow running shoes
    # i got, are those leather? do u have them in a size 10").
    own = bool(before) and bool(before[-1].entities.get("owned_in"))
    kept = {} if own else {k: v for k, v in (product.get("options") or {}).items() if k != asked}
    return {**product, "options": {**kept, **named_values}}


def _once_each(mentions: Sequence[Any]) -> list[Any]:
    """One mention per product named twice alike ("an espresso shot with ur espresso machine":
    the Espresso Machine, once, as its fuller mention says it). Two mentions whose options differ
    ("the blue kettle and the red one") stay two: they are two items."""
    kept: list[Any] = []
    for mention in mentions:
        same = next((k for k, m in enumerate(kept) if m.product_id == mention.product_id and all(
            m.options.get(key, value) == value for key, value in mention.options.items())), None)
        if same is None:
            kept.append(mention)
        elif _fullness(mention) > _fullness(kept[same]):
            kept[same] = mention
    return kept


def _fullness(mention: Any) -> tuple[int, int]:
    return len(mention.options), len(mention.surface)


def _holds_any(view: Any, order_id: str | None, products: Sequence[Any]) -> bool:
    """Does the customer's order `order_id` hold one of the products named (True when the order is
    not on the account: nothing to tell)?"""
    order = view.order(order_id)
    return order is None or bool(order.product_ids() & {p.product_id for p in products})



# A clause that only lists orders ("W3376947 and W7538230, same day"): ids joined by commas, "and",
# "&" or "+", and at most two words after them.
_ONLY_LISTED = re.compile(r"(?:(?:orders?|both)\s+)?#?W\d{7}(?:\s*(?:,|and|&|\+|/)\s*#?W\d{7})+"
                          r"(?:\s*,?\s*[A-Za-z]+){0,2}\W*", re.IGNORECASE)


def _only_listed(piece: str) -> list[str]:
    """The order ids of a clause that only lists them, [] for any other clause."""
    from csagent.nlp.entities.identifiers import find_order_ids

    if "?" in piece or not _ONLY_LISTED.fullmatch(piece.strip()):
        return []
    return find_order_ids(piece)


# The account's address, named ("my account still has my old address", "the address on file").
_ACCOUNTS_ADDRESS = re.compile(r"\b(?:account|profile|on file|default|saved)\b[^.?!]{0,40}\baddress\b"
                               r"|\baddress\b[^.?!]{0,20}\b(?:account|profile|on file|default|saved)\b",
                               re.IGNORECASE)


def _narrowed(text: str, pending: list[PendingAction], view: Any, lang: str,
              variants: Any = None) -> Understanding | None:
    """ "Actually, only the boots" at confirmation: the proposed item writes again, with the named
    items alone (`grounding.frame.narrow_pending`); "could you make it the 1000ml red one instead?":
    the proposed item change again, with the version now asked for (`grounding.frame.amend_pending`)."""
    from csagent.grounding.frame import amend_pending, narrow_pending

    try:
        narrowed = narrow_pending(text, pending, view) or (
            amend_pending(text, pending, view, variants) if variants is not None else [])
    except Exception:  # noqa: BLE001 - grounding refines; without it the message is read afresh
        logger.exception("narrowing the proposal failed; the message is read afresh")
        return None
    if not narrowed:
        return None
    # `amends_pending`: the proposal again, changed; no yes or no to it (the route asks no consent)
    clauses = tuple(Clause(text=text, intent=intent, confidence=1.0,
                           entities={**entities, "amends_pending": True})
                    for intent, entities in narrowed)
    return Understanding(route="knowledge_and_actions", intent=clauses[0].intent, confidence=1.0, lang=lang,
                         entities=dict(clauses[0].entities), clauses=clauses)


# A charge named ("the duplicate charge", "the extra transaction", "charged twice").
_A_CHARGE = re.compile(r"\b(?:charges?|charged|transactions?|double[- ]charged?|overcharged?)\b",
                       re.IGNORECASE)


# Questions that may ask what the customer's own item is like ("r my hiking boots waterproof??", "The
# grill I order, it is gas or electric?"), whatever request their words resemble most.
_ASKED_OF_OWN_ITEM = frozenset({"product_info", "product_availability", "order_items", "order_status"})


def _options_asked_of_own(intent: str, entities: dict[str, Any], piece: str, text: str, view: Any,
                          variants: Any) -> str:
    """The intent of a question asking what options the customer's own item has, its line's answer
    noted (`own_options_asked`, `grounding.frame.options_asked_of_own`): a question of the order's
    items ("is it gas or electric?" asks no status), or the catalogue question it was."""
    from csagent.grounding.frame import (
        CATALOGUE_WISHES,
        asks_as_question,
        asks_the_stores_range,
        find_order,
        names_a_purchase,
        options_asked_of_own,
        speaks_of_a_purchase,
    )
    from csagent.nlp.script import has_ideographs

    if variants is None or not asks_as_question(piece):
        return intent
    # ("the speaker i got slaps. is it legit waterproof tho?": what the message said before the
    # clause names the item its "it" is)
    at = -1 if has_ideographs(text) else text.find(piece)
    said = text[:at + len(piece)] if at > 0 else piece
    order_id = entities.get("owned_in") or entities.get("order_id")
    if not order_id and said != piece and speaks_of_a_purchase(said) and names_a_purchase(said, view):
        order_id = find_order("order_items", said, {}, view).get("order_id")
    order = view.order(order_id) if order_id else None
    if order is None:
        return intent
    asked = options_asked_of_own(said, order, variants, since=max(at, 0))
    if not asked:
        return intent
    entities["own_options_asked"] = asked
    if asks_the_stores_range(piece):
        # "are those leather or what? also do u have them in a size 10": the store's range is asked too
        entities["asks_the_store_too"] = True
    if intent in CATALOGUE_WISHES:
        entities["owned_in"] = order.order_id
        return intent
    entities["own_products"] = list(dict.fromkeys(
        [*(entities.get("own_products") or []), *(str(a["product_id"]) for a in asked)]))
    return "order_items"


def _only_a_payment_method(piece: str, entities: Mapping[str, Any], variants: Any) -> bool:
    """Does the clause name a payment method and nothing an item change would: no product of its
    own (unless only to say which order the payment moves off: "The tablet I ordered is sitting on
    my gift card and I want it on my Amex instead"), no option value of the catalogue's, no price
    difference?"""
    from csagent.grounding.facts import names_a_price_difference
    from csagent.grounding.options import tokens
    from csagent.grounding.resolve import names_a_payment_method

    if not names_a_payment_method(piece) or names_a_price_difference(piece) or entities.get("item_ids"):
        return False
    own = [p for p in entities.get("products") or []
           if not p.get("carried") and str(p.get("surface") or "").lower() in piece.lower()]
    words = set(tokens(piece))
    values = {str(v).lower() for vs in (variants or {}).values() for x in vs for v in x.options.values()}
    return (not own or bool(_ON_A_METHOD_INSTEAD.search(piece))) \
        and not any(set(tokens(v)) <= words for v in values)


# The payment an order should be on, said as where it sits: "I want it on my Amex instead".
_ON_A_METHOD_INSTEAD = re.compile(r"\b(?:it|that|them|this)\s+on\s+(?:my|the)\s+[\w ]{1,25}?\binstead\b",
                                  re.IGNORECASE)


def _grounded(intent: str, runner_up: str | None, piece: str, text: str, entities: dict[str, Any],
              view: Any, variants: Any, recent: str | None = None,
              recent_products: Sequence[str] = (), *, about_a_product: bool | None = None,
              ) -> tuple[str, dict[str, Any], bool]:
    """The clause's intent and entities once grounded in the customer's data, and whether it
    grounds to the store (see `grounding.frame`); `about_a_product` as `purchase_intent` reads it."""
    from csagent.grounding.facts import amounts, asks_which_orders
    from csagent.grounding.frame import (
        CATALOGUE_WISHES,
        MAX_LISTED,
        MONEY_BACK_ASKED,
        READS,
        address_intent,
        adds_or_removes_an_item,
        asks_an_items_option,
        asks_another_item,
        asks_as_question,
        asks_the_stores_range,
        change_intent,
        describes_an_owned_item,
        find_order,
        ground,
        item_change_intent,
        named_changes,
        names_a_purchase,
        names_the_account,
        orders_named_by_facts,
        purchase_intent,
        speaks_of_a_purchase,
        tells_of_the_product,
    )
    from csagent.grounding.status import (
        ends_in_a_tag_question,
        statuses_asked_about,
        statuses_described,
        told_delivered_but_not_received,
    )
    from csagent.nlp.entities.addresses import names_a_place_abroad
    from csagent.nlp.entities.identifiers import ORDER_ID_RE
    from csagent.nlp.script import has_ideographs
    from csagent.nlp.speech_acts import asks_for_change, names_address_change

    grounded_to_store = False  # (set by a re-reading below that grounds the clause in their orders)
    if intent == "change_items" and _tells_what_they_bought(piece, view, variants):
        # "I bought the blue crew neck t-shirt in medium and I'm really pleased with it": what they
        # have, every option named theirs, no change named; it asks nothing.
        return "smalltalk", {}, False
    if intent == "complaint" and _praises(piece):
        # "The hiking boots from #W7773202 fit like a dream, no complaints there, but the smart watch
        # ...": praise, read as a complaint; what follows is the matter
        return _praise_told(entities)
    own_products = [p for p in entities.get("products") or [] if not p.get("carried")]
    if (intent in CATALOGUE_WISHES or (intent in {"account_info", "smalltalk"} and statuses_asked_about(piece)
                                       and asks_as_question(piece))) \
            and not entities.get("order_id") and statuses_described(piece) \
            and (not entities.get("products") or statuses_asked_about(piece)) \
            and (not own_products or ends_in_a_tag_question(piece)):
        # "what do i have that hasn't shipped yet": no product, but words of an order's progress; the
        # customer's orders, not the catalogue. ("I've got a couple of tea kettles ordered. The glass
        # one, has that one left yet?": the product pointed back at, its order's progress asked.)
        # ("the desk lamp — that one's already out the door, right?": its order's status; "do i even
        # have anything on the way rn?", read as the account's: what of theirs is on its way)
        intent = runner_up if runner_up in ORDER_READ_INTENTS | {"order_list"} \
            else "order_status" if own_products else "order_list"
    # a question naming no product, beside words of the customer's orders (a statement is not one:
    # "Reason is I don't need them anymore.")
    of_their_orders = intent in CATALOGUE_WISHES and not entities.get("products") \
        and not entities.get("order_id") and bool(_MY_ORDERS.search(text)) and asks_as_question(piece)
    if of_their_orders and _POINTS_AT_THEM.search(piece):
        # "I've got two orders with you. What does each one come to, and have they left yet?": its
        # words pointing back at the orders the message spoke of; about those orders.
        intent = runner_up if runner_up in ORDER_READ_INTENTS else "order_status"
    elif of_their_orders and _WHICH_OF_THEM.search(piece):
        # "how many orders have i placed, and which one was the most expensive": which of the orders
        # the message spoke of, which their list answers (each with its status, date and total)
        intent, grounded_to_store = "order_list", True
    if intent in CATALOGUE_WISHES and not entities.get("order_id") and own_products \
            and _WHICH_HOLDS_IT.search(piece) and names_a_purchase(piece, view):
        # "Which one of those is the tablet?" after their orders were listed, "which one is the lamp
        # in?": which of their orders holds the product they bought, not the store's range
        intent, grounded_to_store = "order_list", True
    if intent == "order_list" and not entities.get("order_id") and _ASKS_WHATS_IN.search(piece):
        # "what's in my order that hasn't shipped yet", "whats the total on my orders that havent
        # shipped": what the orders the status words say hold and cost, each answered (more than
        # can be answered one by one are listed)
        found = ground("order_items", piece, entities, view, variants, text, recent, recent_products)
        if found.get("order_id") or found.get("order_ids"):
            intent, grounded_to_store, entities = "order_items", True, found
    asks_progress = intent in {"order_list", "order_items"} and statuses_asked_about(piece) \
        and bool(statuses_described(piece))
    if intent == "order_list" and not entities.get("order_id") \
            and (asks_progress or _WHERE_THEY_GO.search(piece) or _TRACKING_ASKED.search(piece)):
        # "have any of them shipped yet", "where are all my orders shipping to?", "which of my
        # orders are on their way, and the tracking number please?": whether the orders have got
        # that far, where they go, how to follow them; each one's status, which says all of it
        # (more than can be answered one by one are listed)
        found = ground("order_status", piece, entities, view, variants, text, recent, recent_products)
        if found.get("order_id") or found.get("order_ids"):
            intent, grounded_to_store, entities = "order_status", True, found
    elif intent == "order_items" and asks_progress:
        # "the one with the running shoes and the makeup kit, has that one left yet?": its products
        # say which order; how far it has got is asked
        intent, grounded_to_store = "order_status", True
    # (an account question too: "i see 2 charges from u guys on my mastercard, 822.50 and 4249.91")
    complains_of_amounts = intent in {"complaint", "account_info"} and bool(amounts(piece))
    # ("订单#W4514908里都有什么东西？一共付了多少钱？": what was paid, asked beside the one order the
    # message names by its id, is that order's total, not the account's spending)
    total_of_the_order = intent == "account_info" and bool(_WHAT_WAS_PAID.search(piece)) \
        and len(set(NEAR_ORDER_ID.findall(text))) == 1 and not _ALL_OF_THEM.search(piece)
    if entities.get("order_id") and intent in {"account_info", "out_of_scope"} and (
            complains_of_amounts or total_of_the_order
            or (asks_as_question(piece) and asks_which_orders(piece))):
        # "I see 6305.19 from you guys on my card statement. For which things is that?": the order
        # the amount picked, its charge told and what it holds asked, not the account's profile
        # (theirs: the guard keeps a flagged sentence naming it, `grounded_in_customer_data`)
        if view.order(entities["order_id"]) is not None:
            entities = {**entities, "grounded_orders": [entities["order_id"]]}
        return ("complaint" if complains_of_amounts else "order_items"), entities, True
    if not entities.get("order_id") and (
            (asks_as_question(piece) and asks_which_orders(piece)) or complains_of_amounts):
        # "anything of mine going to dallas?", "which ones went on PayPal?": orders picked out by an
        # amount, a city or a payment method, whatever the words first read as; each one answered.
        # So are the charges a complaint names ("2 charges on my gift card, one for 1412.70 and
        # one for 3214.75??"): an amount to the cent names its order, and the complaint is theirs.
        # (a weak reading of another kind gives way to the read the model put next: "whats in the
        # order going to san diego", read nearly as out of scope, then as the order's items)
        read = intent if intent in READS else runner_up if runner_up in READS else "order_status"
        by_facts = orders_named_by_facts(read, piece, entities, view, text)
        if by_facts is not None:
            return ("complaint" if complains_of_amounts else read), by_facts, True
    if (intent in ORDER_BOUND_INTENTS or (intent in CATALOGUE_WISHES and about_a_product is False)) \
            and entities.get("products") and not entities.get("order_id") and not NEAR_ORDER_ID.search(text) \
            and _named_as_theirs(piece, entities["products"]) and not names_a_purchase(piece, view):
        # "could u tell me the status of my hking boots", "where is my laptop?", "please cancel my
        # running shoes order": about an order (so the words, or the model trained on customers'
        # messages, read it), by a product none of their orders holds; which order they mean is
        # asked, among those holding products of its kind (`orders_of_its_kind`), never guessed.
        # (A message naming an order says which: "the package of my e-reader, order #W1".)
        entities = {**entities, "not_bought": [str(p.get("name")) for p in entities["products"]]}
        intent = runner_up if runner_up in ORDER_READ_INTENTS else "order_status"
    # A clause that points back at a product ("exchange them for an 11"), or names none ("wrong size
    # on the hiking boots. exchange for 7."), means one the message names.
    points_back = (entities.get("reference") or {}).get("kind") == "product" or not any(
        not p.get("carried") and str(p.get("surface") or "").lower() in piece.lower()
        for p in entities.get("products") or [])  # (none named in the clause's own words)
    read_as = change_intent(purchase_intent(intent, runner_up, piece, view, about_a_product=about_a_product),
                            piece, view, text if points_back else "")
    if read_as == "change_items" and intent != "change_items" \
            and _tells_what_they_bought(piece, view, variants) and not asks_another_item(text):
        # "The yoga mat I ordered is natural rubber.": what they have, told (read as a wish once its
        # purchase was found), in a message asking for no other item; it sets the scene, its product
        # what "this" after it points back at. (Beside a change asked, "The tea kettle I order, it
        # is for gas. My husband want induction ... Is possible to change?", the change reads it.)
        return _praise_told(entities)
    if read_as == "policy_question" and runner_up in ADDRESS_CHANGES \
            and (recent or entities.get("order_id")) and _POINTS_AT_IT.search(piece) \
            and names_address_change(piece) and asks_for_change(piece):
        from csagent.nlp.entities.addresses import find_addresses

        if find_addresses(text):
            # "Oh brilliant, then could you send it to my sister's place instead? 12 Walnut Street,
            # Philadelphia PA 19103": the order talked about, sent to the address the message writes;
            # no question about the store's rules.
            read_as = "change_order_address"
            entities = {**entities, "order_id": entities.get("order_id") or recent}
    read_as = address_intent(read_as, piece, view, order_named=bool(entities.get("order_id")), message=text)
    if read_as == "update_default_address" and recent and not entities.get("order_id") \
            and _POINTS_AT_IT.search(piece) and not names_the_account(piece):
        # "that's my old flat. Could you change it to my current address, please?", after the
        # order's address was told: "it" is that order's address, not the account's.
        read_as = "change_order_address"
        entities = {**entities, "order_id": recent}
    if read_as == "update_default_address" and entities.get("address") \
            and dict(entities["address"]) == dict(view.default_address or {}):
        from csagent.grounding.frame import makes_it_the_default
        from csagent.nlp.entities.addresses import find_addresses

        written = find_addresses(text)
        if left_behind(text, entities["address"]):
            # "I'm moving out of San Francisco ... I'd like to change the address on my account": the
            # saved address is the one left, not where it goes; the new one is still to be told.
            entities = {k: v for k, v in entities.items() if k not in {"address", "address_named"}}
        elif makes_it_the_default(piece) and len(written) == 1:
            # "I've moved to 388 Spruce Street, .... Could you make that my default address?": the
            # address the message wrote, not the one saved
            entities = {**entities, "address": written[0].as_dict()}
        else:
            # "... to my home address, the one on my account": the saved address, which the default
            # cannot become; where an order should go.
            read_as = "change_order_address"
    if read_as in ADDRESS_CHANGES and not entities.get("address") and names_a_place_abroad(text):
        # "we're moving to Vancouver, Canada. can my laptop order go there instead?": a place the
        # store does not deliver to, whichever clause named it.
        entities = {**entities, "abroad": True}
    asks_a_change = _ZH_CHANGE.search(piece) if has_ideographs(piece) else names_address_change(piece)
    if read_as in ADDRESS_CHANGES and (not entities.get("address") or entities.get("address_named")) \
            and not asks_a_change:
        # "wat adress is it goin to", "I want to check the address for my kettle order", "会寄到哪个
        # 地址？": neither a new address nor a word asking for one; where it goes (or what the account
        # holds) is asked ("but my profile has my san diego place on it right?": the account's).
        about_account = read_as == "update_default_address" or names_the_account(piece)
        read_as = "account_info" if about_account else "order_status"
        if entities.get("address_named"):
            entities = {k: v for k, v in entities.items() if k not in {"address", "address_named"}}
    grounded_to_store = grounded_to_store or read_as != intent
    intent = read_as
    # An item change or a return reads the whole request: its items, options and payment method are
    # often spread over several clauses ("... 5x zoom instead. PayPal for the difference").
    if intent in CATALOGUE_WISHES and _REFUNDED.search(piece) and not asks_for_change(piece):
        # "the tablet order i cancelled. how much got refunded and to what": money that came back
        # is an order's refund, whatever price question "how much" resembles
        intent = "refund_status"
        entities = ground(intent, piece, entities, view, variants, text, recent, recent_products)
    read_as = item_change_intent(intent, text, entities, view, variants, piece)
    if read_as == "return_request" and _A_CHARGE.search(piece) and not any(
            not p.get("carried") for p in entities.get("products") or []):
        # "I want the duplicate charge reversed": money back for a charge, not for an item sent back;
        # a complaint about what was paid, which the order's payments answer.
        read_as = "complaint"
    if read_as == "change_items" and _only_a_payment_method(piece, entities, variants):
        # "put the 2nd one on a gift card instead": what it goes on is a way to pay, and no item or
        # option is named; the order's payment (not an item change's difference: "PayPal for the
        # difference" stays with the change it pays for).
        read_as = "change_payment"
    if read_as in CATALOGUE_WISHES | ORDER_READ_INTENTS | {"complaint"} \
            and adds_or_removes_an_item(piece, entities, view):
        # "can you put one water bottle more inside it?", read as a question about the bottle: an
        # item put into the order, which the order's facts and the store's rule answer.
        read_as = "change_items"
    grounded_to_store = grounded_to_store or read_as != intent
    intent = read_as
    whole = intent in {"change_items", "return_request", "change_payment"}
    entities = ground(intent, text if whole else piece, entities, view, variants, text, recent,
                      recent_products)
    if intent == "return_request" and len(entities.get("item_ids") or ()) > 1 and piece != text:
        entities = _items_the_clause_returns(piece, entities, view)
    if intent in ORDER_READ_INTENTS and entities.get("order_id") \
            and (entities.get("address") or {}).get("zip") and names_address_change(piece):
        # "The order with the bicycle, please send it to other address: 271 Sunset Drive, ..., Dallas
        # TX 75243": once the order is found, a full postal address and a word sending it there ask
        # for the order to go there (as an order id beside the address does, `reconsider_intent`).
        intent, grounded_to_store = "change_order_address", True
        entities = ground(intent, piece, entities, view, variants, text, recent, recent_products)
    if intent in {"order_status", "tracking", "complaint"} and told_delivered_but_not_received(piece) \
            and (order := view.order(entities.get("order_id"))) is not None and order.status == "delivered":
        # "My earbuds order #W1 is showing delivered but I don't find the package anywhere": a parcel
        # the carrier marked delivered and the customer never found; what the store's pages say to do
        # about it (wait, then an investigation) beside the order's facts, not only its status.
        intent, grounded_to_store = "complaint", True
        entities = {**_without_the_question(entities), "parcel_missing": True}
    if intent == "order_status" and tells_of_the_product(piece) and _all_delivered(entities, view):
        if _praises(piece):
            # "Loving the automatic espresso machine so far, it's made my mornings so much better":
            # what they say of what came is praise; it asks nothing
            return _praise_told(entities)
        # "my kettle from you is stop by itself before the water is boiling": nothing asked about a
        # delivered order's progress; what went wrong with what came, which the order's facts and
        # the product's own pages (its troubleshooting) answer, whichever of its orders it was.
        intent, grounded_to_store = "complaint", True
        entities = _without_the_question(entities)
    if intent in {"out_of_scope", "smalltalk"} and not entities.get("order_id") and recent \
            and view.order(recent) is not None and entities.get("products") \
            and {str(p.get("product_id")) for p in entities["products"]} <= view.order(recent).product_ids() \
            and asks_an_items_option(piece, view.order(recent), entities["products"]):
        # "#W3973757 whens it showin up" ... "bet. oh and the puzzle in there, is it the art one?":
        # read as nothing of the store's, yet it asks an option of an item of the order just talked
        # about.
        entities = {**entities, "order_id": recent}
        intent, grounded_to_store = "order_items", True
    items_option = entities.get("order_id") is not None and asks_an_items_option(
        piece, view.order(entities["order_id"]), entities.get("products") or [])
    if intent in {"order_status", *CATALOGUE_WISHES} and items_option \
            and not (intent in CATALOGUE_WISHES and asks_the_stores_range(piece)):
        # "#W1 - sunglasses polarized or not?": what the order's item is, option by option (read as
        # a question about the order or about the product, the order named says whose). ("in my
        # order W1 I have the green road bike. Which other colour you have for same size?" asks the
        # store's range.)
        intent, grounded_to_store = "order_items", True
    if intent in _ORDER_READS_OF_ITEMS and entities.get("order_candidates") and not entities.get("order_id") \
            and _same_option_in_every(piece, entities, view):
        # "my sunnies r they polarized or nah", of two orders whose sunglasses both are: the answer
        # is the same whichever order is meant, so each says it rather than the customer being asked.
        intent, grounded_to_store = "order_items", True
        entities = {**_each_candidate_asked(entities),
                    "own_products": [str(p["product_id"]) for p in entities.get("products") or []]}
    if intent == "cancel_order" and entities.get("order_candidates") and not entities.get("order_id") \
            and len(entities["order_candidates"]) <= MAX_LISTED \
            and all((o := view.order(c)) is not None and o.status != "pending"
                    for c in entities["order_candidates"]):
        # "I'd like to cancel the iron dumbbell set", of two orders with one, neither pending: the
        # answer is the rule whichever order is meant (neither can be cancelled any more), so each
        # order's status says it rather than the customer being asked which.
        entities = _each_candidate_asked(entities)
    if intent in ORDER_READ_INTENTS and entities.get("order_candidates") and not entities.get("order_id") \
            and len(entities["order_candidates"]) <= MAX_LISTED and _OF_EACH.search(piece):
        # "我有哪些订单已经发货了？各自的快递单号是多少？" (which of my orders shipped? the tracking number
        # of each?), "and what are the tracking numbers for both?": each of the orders that fit is
        # asked about, not one of them asked for.
        entities = _each_candidate_asked(entities)
    if intent == "complaint" and (entities.get("grounded") or {}).get("order") \
            and not NEAR_ORDER_ID.search(text) \
            and _story_of_something_not_received(piece, view.order(entities.get("order_id"))):
        # "I had a fall on my bike last weekend", their one bike in an order not yet shipped: what
        # happened to a bike they had before, not news of that order; it asks nothing of the store.
        return "smalltalk", {}, False
    if intent in {"complaint", "warranty"} and not entities.get("products") and entities.get("order_id") \
            and (entities.get("grounded") or {}).get("by") != "status":
        # "grill wont light. i push the igniter and nothing happens", "my chair's seat keeps sinking.
        # is that covered, and for how long?": the products the message named in the order the
        # clause was grounded to are what it tells of, or asks about.
        from csagent.grounding.resolve import product_mentions

        order = view.order(entities["order_id"])
        held = order.product_ids() if order is not None else set()
        told = [m for m in product_mentions(text, view.products()) if m.product_id in held]
        if told:
            entities["told_of"] = list(dict.fromkeys(m.product_id for m in told))
            entities["told_of_names"] = list(dict.fromkeys(m.name for m in told))
    if intent == "order_items" and entities.get("order_id") and asks_as_question(piece):
        # "订单里那个充电宝是什么接口？": a question about some items of the order, which their own
        # lines answer (their options, what each cost); one naming them all is about the order
        # ("whats the total on the order w the espresso machine n the vacuum?").
        from csagent.grounding.resolve import items_asked_about

        order = view.order(entities["order_id"])
        asked = items_asked_about(piece, order) if order is not None else []
        if asked and order is not None and set(asked) < order.product_ids():
            entities["own_products"] = asked
    if intent in CATALOGUE_WISHES and ((speaks_of_a_purchase(piece) and names_a_purchase(piece, view))
                                       or describes_an_owned_item(piece, view)):
        # "does the coffee maker I ordered have a timer?", "can i take the white earbuds swimming?":
        # a question about the product, which its pages and the catalogue answer, and about the
        # customer's own one, which the order that holds it answers (its options: "features:
        # timer", "water resistance: IPX4").
        owned = find_order("order_items", piece, {}, view).get("order_id")
        if owned:
            entities["owned_in"] = owned
    elif intent in CATALOGUE_WISHES and entities.get("order_id") and ORDER_ID_RE.search(piece) \
            and _holds_a_product_named(piece, str(entities["order_id"]), view):
        # "how much ram does the laptop in #W2923184 have": the customer's own one, in the order named
        entities["owned_in"] = entities["order_id"]
    if intent in _ASKED_OF_OWN_ITEM and not entities.get("asks_for_change"):
        intent = _options_asked_of_own(intent, entities, piece, text, view, variants)
    if intent in _MONEY_QUESTIONS and _every_order_delivered(entities, view) \
            and MONEY_BACK_ASKED.search(piece) and not _DIFFERENCE.search(piece) and asks_for_change(piece):
        # "the helmet came cracked. I want my money back on my Visa": for a delivered order, which
        # has no refund until something is sent back, money back asked for is a return (so for
        # every order the clause may mean, when each was delivered: "kettle leaks all over the
        # counter. want my money back", with two delivered kettle orders, asks which to return).
        intent, grounded_to_store = "return_request", True
        entities = ground(intent, text, entities, view, variants, text, recent, recent_products)
    elif intent == "cancel_order" and entities.get("order_id") and _every_order_delivered(entities, view) \
            and MONEY_BACK_ASKED.search(text) and not named_changes(piece) and asks_for_change(piece):
        # "showed up with a cracked screen. I want it gone and my money back": read as a cancellation
        # by no word of one, of an order already delivered, with the money back asked for: a return
        intent, grounded_to_store = "return_request", True
        entities = ground(intent, text, entities, view, variants, text, recent, recent_products)
    money_read = intent in _MONEY_ON_A_CANCELLED_ORDER or (
        intent == "return_request" and not asks_for_change(piece))  # "退了多少钱？": what came back
    if money_read and entities.get("order_status") == "cancelled" \
            and MONEY_CAME_BACK.search(piece) and not CONDITIONAL.search(piece):
        # A cancelled order moves no money but its refund: a charge, a payment or money come back
        # on it is asked about by its refund record (how much, to which method, when).
        intent, grounded_to_store = "refund_status", True
    # An order found by its status alone ("your pending order") says nothing about the words.
    by_words = (entities.get("grounded") or {}).get("by") != "status"
    return intent, entities, grounded_to_store or (by_words and bool(entities.get("grounded_orders")))


# A purchase told in the past tense: "I bought the ...", "we ordered ...".
_TOLD_PURCHASE = re.compile(r"\b(?:i|we)\s+(?:just\s+|recently\s+|already\s+)?"
                            r"(?:bought|ordered|purchased|got)\b", re.IGNORECASE)


# Words of a customer pleased with what came, and words of something wrong with it.
_SATISFIED = re.compile(
    r"\b(?:no complaints?|like a dream|(?:love|loving|enjoying|adore) (?:it|them|this|that|the|my)"
    r"|(?:really |very |so )?happy with"
    r"|(?:works?|working|fits?|fitting) (?:great|fine|perfectly|well|beautifully)"
    r"|(?:is|are|was|were|been) (?:great|perfect|fine|lovely|amazing|awesome))\b", re.IGNORECASE)
_SOMETHING_WRONG = re.compile(
    r"\b(?:broke\w*|damaged|crack\w*|wrong|missing|late|stopped|defect\w*|leak\w*|faulty|dead"
    r"|doesn'?t|don'?t|won'?t|isn'?t|aren'?t|wasn'?t|never|but|except|however)\b", re.IGNORECASE)


def _default_to_the_address_proposed(intent: str, piece: str, entities: dict[str, Any],
                                     state: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """ "And change the address on my account to that too while you're at it.", while an order's new
    address waits for a yes: the account's default address becomes the one proposed (not the one
    the account or the order has now)."""
    from csagent.grounding.frame import makes_it_the_default

    proposed = [p.proposal.args.get("address") for p in pending_actions(state)
                if p.action == "change_order_address" and p.proposal.args.get("address")]
    if not proposed or not makes_it_the_default(piece):
        return intent, entities
    from csagent.grounding.asking import QUESTION_KEYS

    kept = {k: v for k, v in entities.items()
            if k not in {*ORDER_GROUNDING, *QUESTION_KEYS, "order_id", "order_ids", "already_ships_there"}}
    return "update_default_address", {**kept, "address": dict(proposed[-1] or {}), "asks_for_change": True}


def _praise_told(entities: Mapping[str, Any]) -> tuple[str, dict[str, Any], bool]:
    """A clause of praise (or of what they have), as `_grounded` gives it back: small talk, asking
    nothing, keeping only the products it names, which "it" and "that backpack" in the next clause
    point back at ("... it's been great. What other colors does that backpack come in?")."""
    return "smalltalk", {k: v for k, v in entities.items() if k == "products"}, False


def _without_the_question(entities: Mapping[str, Any]) -> dict[str, Any]:
    """The entities without the question of which order grounding asked, and its candidates."""
    from csagent.grounding.asking import QUESTION_KEYS

    return {k: v for k, v in entities.items() if k not in {*QUESTION_KEYS, "order_candidates"}}


def _each_candidate_asked(entities: Mapping[str, Any]) -> dict[str, Any]:
    """The entities with every order grounding offered as a candidate asked about (`order_ids`, the
    first as `order_id`) instead of the question of which one."""
    candidates = list(entities["order_candidates"])
    return {**_without_the_question(entities), "order_ids": candidates, "order_id": candidates[0]}


def _praises(piece: str) -> bool:
    """Does the clause only praise what the customer has ("fit like a dream", "loving the espresso
    machine so far"), with no word of anything wrong and nothing asked?"""
    from csagent.grounding.frame import asks_as_question

    return bool(_SATISFIED.search(piece)) and not _SOMETHING_WRONG.search(piece) \
        and not asks_as_question(piece)


def _tells_what_they_bought(piece: str, view: CustomerView,
                            variants: Mapping[str, Sequence[Any]] | None = None) -> bool:
    """Is the clause a statement of what the customer bought ("I bought the blue crew neck t-shirt in
    medium"): a purchase told, no change named, and every product it names with options one of
    their items has, option for option? An option value their items of it lack, which the product
    comes in, is a wish ("yo the hiking boots i ordered r gonna be way too big, gotta size em down to
    a 10"; "the M one, can u bump it to an L")."""
    from csagent.grounding.frame import asks_as_question, lines_as_described, named_changes
    from csagent.grounding.options import find_option_values, tokens
    from csagent.grounding.resolve import option_dimensions, product_mentions

    if asks_as_question(piece) or not _TOLD_PURCHASE.search(piece) or named_changes(piece) \
            or _NAMES_A_SWAP.search(piece):
        return False  # ("keyboard i ordered - want clicky switches instead of tactile": a change)
    mentions = product_mentions(piece, view.products(), own=True)
    described = [lines_as_described(view, m.product_id, m.options) for m in mentions]
    if not mentions or not all(described):
        return False
    toks = tokens(piece)
    for mention, own in zip(mentions, described, strict=True):
        offered = option_dimensions((variants or {}).get(mention.product_id, ()), own[0])
        # (a value after "to", "into" or "for", where a wish names what it becomes; not one only
        # mused about: "wondering if linear would've been better for gaming")
        wished = [h for h in find_option_values(piece, offered)
                  if any(t in ("to", "into", "for") for t in toks[max(0, h.position - 3):h.position])]
        if any(all(x.options.get(h.key) != h.value for x in own) for h in wished):
            return False
    return True


# Words that make a told purchase a change ("want clicky switches instead of tactile", "I want to
# change the navy backpack that I ordered to a grey colour"); not `grounding.frame._INSTEAD`, which
# reads "instead" alone as a wish for another item.
_NAMES_A_SWAP = re.compile(r"\binstead\b|\brather than\b"
                           r"|\b(?:change|switch|turn)\b[^.?!]{0,60}?\b(?:to|into)\b", re.IGNORECASE)


def _items_the_clause_returns(piece: str, entities: dict[str, Any], view: CustomerView) -> dict[str, Any]:
    """A return read from the whole message ("two backpacks ..., the grey one and the green one. want
    to return the green one") sends back the items its own clause names, when it names some of
    them: the other sentences only said which items the order holds."""
    from csagent.grounding.resolve import line_by_options, read_return_lines

    order = view.order(entities.get("order_id"))
    if order is None:
        return entities
    named, undecided = read_return_lines(piece, order)
    if not named and not undecided:
        line = line_by_options(piece, order)
        named = [line] if line is not None else []
    ids = [line.item_id for line in named]
    if ids and set(ids) < set(entities["item_ids"]):
        return {**entities, "item_ids": ids}
    return entities


def _tells_more_of(before: Clause, intent: str, piece: str, entities: Mapping[str, Any]) -> bool:
    """Is the clause a statement that would only ask which order, among orders one of which the
    clause before it was found to be about?"""
    from csagent.grounding.frame import asks_as_question

    candidates = set(entities.get("order_candidates") or [])
    found = {before.entities.get("order_id"), *(before.entities.get("order_ids") or [])} - {None}
    return bool(candidates & found) and bool(entities.get("question")) and intent not in WRITE_INTENTS \
        and before.intent not in PASSIVE_INTENTS and not asks_as_question(piece)


def _story_of_something_not_received(piece: str, order: Any) -> bool:
    """Does a statement tell of using a product whose only order has not shipped yet, with no word
    about that order (its delivery, its status, a change)?"""
    from csagent.grounding.frame import asks_as_question, speaks_of_an_order

    return order is not None and order.status == "pending" and not asks_as_question(piece) \
        and not speaks_of_an_order(piece) and not _AWAITED.search(piece)


# Words of buying or waiting ("I ordered headphones forever ago and they STILL haven't shown up").
_AWAITED = re.compile(r"\b(?:ordered|bought|purchased|still|never|not yet|haven'?t|hasn'?t|shown up)\b",
                      re.IGNORECASE)


# Reads of an order that, asked of one of its items' options, its items' lines answer.
_ORDER_READS_OF_ITEMS = frozenset({"order_status", "order_items", "product_info"})
# Words asking the same of each of several things ("for each", "both of them", "各自", "分别").
_OF_EACH = re.compile(r"\b(?:each|every one|all of them|both)\b|各自|分别|每个", re.IGNORECASE)


def _same_option_in_every(piece: str, entities: dict[str, Any], view: Any) -> bool:
    """Does the clause ask an option of a product the customer bought ("are my sunnies polarized?")
    whose every item of that product, in every order the words may mean, has the same value?"""
    from csagent.grounding.frame import asks_an_items_option
    from csagent.grounding.resolve import option_values

    products = [p for p in entities.get("products") or [] if p.get("options")]
    orders = [view.order(o) for o in entities.get("order_candidates") or []]
    if not products or not orders \
            or any(o is None or not asks_an_items_option(piece, o, products) for o in orders):
        return False
    for product in products:
        lines = [x for o in orders for x in o.lines if x.product_id == str(product["product_id"])]
        values = option_values(lines)
        if not lines or any(len(set(values.get(name) or ())) != 1 for name in product["options"]):
            return False
    return True


def _owned_of_ambiguous(piece: str, products: Sequence[Any], view: Any) -> list[Any]:
    """Of the products one word names ("kettle": the Electric Kettle and the Tea Kettle), the one
    the customer bought, when the words speak of their purchase and only one of those is theirs, or
    only one of theirs has the options named ("the white kettle I got from you has started clicking
    off", of a white Electric Kettle and a Tea Kettle)."""
    from csagent.grounding.frame import speaks_of_a_purchase

    ambiguous = [p for p in products if p.ambiguous]
    if view is None or not ambiguous or not speaks_of_a_purchase(piece):
        return []
    lines = [x for o in view.orders for x in o.lines]

    def described(mention: Any) -> bool:  # "the white kettle": an item of theirs is white
        wanted = mention.options.items()
        return bool(mention.options) and any(
            x.product_id == mention.product_id and all(x.options.get(k) == v for k, v in wanted)
            for x in lines)

    meant = []
    for span in dict.fromkeys(p.span for p in ambiguous):
        theirs = [p for p in ambiguous if p.span == span and any(x.product_id == p.product_id for x in lines)]
        if len(theirs) > 1:
            theirs = [p for p in theirs if described(p)]
        if len(theirs) == 1:
            meant.append(theirs[0])
    return meant


def _named_as_theirs(piece: str, products: Sequence[Mapping[str, Any]]) -> bool:
    """Is a product the clause names spoken of as the customer's own ("my hiking boots", "the
    laptop I ordered"), not only named beside a purchase ("my pending order ... (long story
    involving my cat and the keyboard)")? Chinese: the purchase's words anywhere in the clause."""
    from csagent.grounding.frame import speaks_of_a_purchase
    from csagent.nlp.script import has_ideographs

    if has_ideographs(piece):
        return speaks_of_a_purchase(piece)
    for product in products:
        surface = re.escape(str(product.get("surface") or product.get("name") or ""))
        if surface and re.search(
                rf"\b(?:my|our)\s+(?:(?!and\b|or\b|the\b)[\w-]+\s+){{0,2}}?{surface}"
                rf"|{surface}\w*\s+(?:that\s+|which\s+)?(?:i|we)\s+(?:ordered|bought|got|purchased|received|order|buy)\b",
                piece, re.IGNORECASE):
            return True
    return False


def orders_of_its_kind(entities: dict[str, Any], view: Any, catalogue: Sequence[Mapping[str, Any]],
                       ) -> dict[str, Any]:
    """A question about the order of a product none of the customer's orders holds ("the status of
    my hiking boots", theirs being running shoes and sneakers): which order is asked, said plainly,
    among the orders holding products of the same catalogue category (when none does, or too many
    to list, the question the grounding asked)."""
    from csagent.grounding.asking import QUESTION_PHRASE, orders_listed, question, sentences
    from csagent.grounding.frame import MAX_LISTED
    from csagent.nlp.replies import joined, phrase

    category_of = {str(p.get("product_id")): p.get("category") for p in catalogue}
    named = [p for p in catalogue if str(p.get("name")) in entities["not_bought"]]
    kinds = {p.get("category") for p in named if p.get("category")}
    orders = [o for o in view.orders if any(category_of.get(x.product_id) in kinds for x in o.lines)]
    said = phrase("ask_not_in_orders",
                  products=joined([phrase("the_product", product=n) for n in entities["not_bought"]], "or"))
    if not 1 <= len(orders) <= MAX_LISTED:  # the question the grounding asked, if any, said plainly
        asked = entities.get(QUESTION_PHRASE) or entities.get("question") or phrase("ask_order_number")
        return {**entities, **question(sentences(said, asked))}
    kind = sorted(str(k).lower() for k in kinds)
    ids = [o.order_id for o in orders]
    listed = orders_listed(orders)
    asked = phrase("ask_your_order_with", kind=kind, orders=listed) if len(orders) == 1 \
        else phrase("ask_your_orders_with", kind=kind, orders=listed)
    return {**entities, "order_candidates": ids, "grounded_orders": ids, **question(sentences(said, asked))}


def _every_order_delivered(entities: Mapping[str, Any], view: Any) -> bool:
    """Is the order the clause was grounded to delivered, or, before one is picked, each order it
    may mean?"""
    if entities.get("order_status") == "delivered":
        return True
    if entities.get("order_id"):
        return False
    orders = [view.order(o) for o in entities.get("order_candidates") or ()]
    return bool(orders) and all(o is not None and o.status == "delivered" for o in orders)


def _all_delivered(entities: Mapping[str, Any], view: Any) -> bool:
    """Are the orders a clause was grounded to, by the products it names, all delivered?"""
    if not entities.get("products"):
        return False
    orders = [view.order(o) for o in entities.get("grounded_orders") or [entities.get("order_id")] if o]
    return bool(orders) and all(o is not None and o.status == "delivered" for o in orders)


# The Chinese words that ask for a change ("改寄到", "换个地址", "更新", "修改"): without one, an
# address is asked about, not changed.
_ZH_CHANGE = re.compile(r"改|换|更新|更改|变更|修改|转寄|寄到新")
# What "I want my money back" on a delivered order is read as before its order is known.
_MONEY_QUESTIONS = frozenset({"refund_status", "policy_question"})
# What a question about money beside a cancellation told as done is read as: its refund.
MONEY_READ_AS_REFUND = frozenset({"order_status", "order_items", "policy_question", "account_info"})
# A question opening with a question word ("what was in ...", "which one got ...").
_WH_OPENING = re.compile(r"\W*(?:(?:and|so|ok|okay|hey|hi)\W+)?(?:what|whats|what's|which|where|when|how)\b",
                         re.IGNORECASE)
_A_SWAP = re.compile(r"\b(?:swap|switch|exchange|trade|replacement)\w*\b", re.IGNORECASE)


def _swap_ruled_out(text: str) -> bool:
    """Does the clause name a swap only to rule it out ("not a swap", "not tryna swap it")?"""
    from csagent.grounding.frame import asks_another_item

    return bool(_A_SWAP.search(text)) and not asks_another_item(text)


def _swap_ruled_out_for_money(text: str) -> bool:
    """Does the clause ask for money back and rule out the swap it names ("I want my money back, not a
    swap", "a refund, no exchange")?"""
    from csagent.grounding.frame import asks_money_back

    return asks_money_back(text) and _swap_ruled_out(text)


def _swap_ruled_out_for_the_range(text: str) -> bool:
    """Does the clause rule out the swap it names and ask what the store has ("not tryna swap it or
    anything, just curious what smaller sizes u got")?"""
    from csagent.grounding.frame import asks_the_stores_range

    # (not a swap asked on a condition: "if not can i swap it for the alexa one, same steel color")
    return _swap_ruled_out(text) and not CONDITIONAL.search(text) and asks_the_stores_range(text)


# What a question about a gift card's balance may first read as, and its words.
_BALANCE_READ_AS = frozenset({"product_info", "order_items", "order_status", "policy_question",
                              "refund_status"})
# Whether an amount is enough for something: "has enough on it to cover", "would it cover".
_COVERS = re.compile(r"\benough\b|\bcover(?:s|ed)?\b", re.IGNORECASE)
_BALANCE_ASKED = re.compile(
    r"\bhow\s*(?:much|many\s+dollars)\b.*\b(?:left|still|remaining|remain|on\s+(?:it|the\s+card|there)|have|has)\b"
    r"|\bbalance\b", re.IGNORECASE)


def _last_customer_text(state: Mapping[str, Any]) -> str:
    """The customer's message before this one ("" when none)."""
    said = [str(m.get("text") or "") for m in state.get("messages") or [] if m.get("role") != "assistant"]
    if said and said[-1] == state.get("text"):
        said = said[:-1]  # (this turn's own message, when it is already kept)
    return said[-1] if said else ""


_CHANGE_SUPPOSED = re.compile(
    r"\b(?:if|when|once|in case)\s+(?:i|we)\s+(?:do\s+|did\s+|were\s+to\s+)?(cancel|return|exchange|swap)"
    r"(?:l?ed|ing)?\b", re.IGNORECASE)
_HOW_MUCH = re.compile(r"\bhow much\b", re.IGNORECASE)
# What was paid asked ("how much did I pay", "一共付了多少钱", "花了多少钱"), and words of every order or the
# account ("所有订单", "all my orders", "in total on my account").
_WHAT_WAS_PAID = re.compile(
    r"\bhow much\b[^.?!]{0,30}\b(?:pay|paid|spend|spent|cost)\b|(?:付|花|消费)了?多少钱?", re.IGNORECASE)
_ALL_OF_THEM = re.compile(r"\b(?:all|every|each|account|orders)\b|所有|全部|每个|账户|账号", re.IGNORECASE)
# What a clause about money on a cancelled order is read as, whatever its words first read as ("there
# is a 399.04 charge on my visa for #W1 and I CANCELLED that order"): the order's refund answers it.
_MONEY_ON_A_CANCELLED_ORDER = frozenset({"complaint", "change_payment", *MONEY_READ_AS_REFUND})
# "it's cheaper on your site now, refund me the difference": a price drop, not the item's money back
_DIFFERENCE = re.compile(r"\b(?:the|price|that)\s+(?:difference|diff)\b|差价", re.IGNORECASE)


# An item change put as a question names its verb ("can I swap my fleece for an XL?", "could I get
# it in black instead?"); "I ordered a BLACK fleece and got a navy one" names a variant and asks
# for nothing.
_CHANGE_VERB = re.compile(
    r"\b(swap(?:s|ped|ping)?|switch(?:es|ed|ing)?|exchang(?:e|es|ed|ing)|chang(?:e|es|ed|ing)|"
    r"replac(?:e|es|ed|ing)|trad(?:e|es|ed|ing)|modif(?:y|ies|ied|ying)|instead)\b", re.IGNORECASE)


# Words asking to have something done, in a question ("can it go to ...", "could you send it to ...").
_ASKS_TO_HAVE_IT = re.compile(
    r"\b(?:can|could|may|pls|plz|please)\b|\b(?:would|will) (?:you|u)\b|\b(?:redirect|re-?route)",
    re.IGNORECASE)


# Words that, right before an address, say it is the one the order should have: "it should be",
# "the correct address is", "new address:".
_SAID_TO_BE_THE_ADDRESS = re.compile(
    r"(?:\b(?:should|must|needs? to|has to|is supposed to)\s+be|"
    r"\b(?:correct|right|new|proper|actual)\s+(?:shipping\s+)?(?:address|addy|one)(?:\s+is|\s*:))"
    r"\s*:?\s*$", re.IGNORECASE)


def _tells_why(text: str, piece: str) -> bool:
    """Does the message, beside the question `piece`, tell of the customer or the thing in a sentence
    of its own ("The dumbbells are way too heavy for me.", "I don't use them.")? A greeting or thanks
    ("Hope you're well.", "Thanks so much!") tells nothing; nor does the thing's condition, which
    asks whether the rules allow it ("I did not open it yet, the seal is still there. Is it possible
    to return it?")."""
    told = [s for s in SENTENCE_BREAK.split(text) if piece not in s and not has_question_mark(s)]
    return any(len(s.split()) >= TOLD_WORDS and _OF_THEM_OR_ME.search(s) and not _ITS_CONDITION.search(s)
               for s in told)


# Words of the state a thing is in, which the store's return rules ask about.
_ITS_CONDITION = re.compile(r"\b(?:open(?:ed)?|unopened|seal(?:ed)?|unused|used|worn|tags?|box|packag\w*"
                            r"|wrapp(?:ed|ing))\b", re.IGNORECASE)
#: Words a sentence needs to tell something (not "Hi!", "Thanks so much.").
TOLD_WORDS = 4
# Words telling of the customer or of the thing ("I", "my", "it", "them").
_OF_THEM_OR_ME = re.compile(
    r"\b(?:i|i'?m|i'?ve|my|me|we|our|it|it'?s|they|them|their|these|those|this|that)\b", re.IGNORECASE)


def _fully_specified(intent: str, text: str, entities: Mapping[str, Any], view: Any, piece: str = "") -> bool:
    """A question that names what its change needs ("can I swap my fleece for an XL in black?", "any
    chance of swapping them for a size 12?",
    "can I exchange the watch for the gold one with a leather band? gift card for the
    difference", "can it go to 12 Main St, ... instead?") asks for it, unless hypothetical. An
    item change names the variant it wants, with its verb or with where the money goes (the
    payment for the difference is asked next); a return names its items and where the money goes
    ("can I return the kettle?" alone asks whether it can be returned); a payment change names the
    order, the method and a change word ("... be paid with my gift card instead?"); a default
    address names the address and the account's ("... my default address be 12 Main St, ...?"); a
    cancellation names the order and why ("can I cancel the kettle order? don't need it anymore")."""
    from csagent.grounding.frame import MONEY_BACK_ASKED
    from csagent.grounding.resolve import resolve_payment
    from csagent.nlp.speech_acts import asks_something, is_hypothetical, names_change_verb_zh, weighs_a_change

    # (nor when a condition or a doubt holds it back: "... charge my visa if its more", "I might send
    # the fleece jacket back")
    if is_hypothetical(piece or text) or weighs_a_change(piece or text):
        return False
    named_method = resolve_payment(text, view, view.order(entities.get("order_id"))).named
    if intent == "change_items":
        verb = bool(_CHANGE_VERB.search(text)) or names_change_verb_zh(text)  # "能不能换成白色的？"
        # (a wish for options no item can have, "could it be exchanged for the stainless steel one in
        # black?", is one too: what is available instead is its answer)
        wished = bool(entities.get("new_item_ids")) or bool(entities.get("target_named"))
        return wished and (named_method or verb)
    if intent == "return_request":
        # "can i send them back for a refund", "... the present plan fell through. Can I send back just
        # one of them?": items named, and the money asked back or why told, ask for the return, as a
        # cancellation's order and reason do ("can I return the kettle?" alone asks whether it can be)
        return bool(entities.get("item_ids")) and (
            named_method or bool(MONEY_BACK_ASKED.search(text)) or _tells_why(text, piece))
    if intent == "change_order_address":
        # "can the phone order go to 2210 W Belmont Ave, Unit 2, Chicago IL 60618 instead?" (the
        # address may follow in a sentence of its own: "... to my work? 200 Bay Street, ...")
        from csagent.nlp.entities.addresses import find_addresses

        addresses = find_addresses(text)
        written = bool(entities.get("address")) or len(addresses) == 1
        # (a question of where it goes asks nothing to change: "My luggage order #W1, it go to my
        # home address?"; an address said to be the right one corrects it: "I gave the wrong
        # address for the espresso machine order, it should be 77 Pearl Street, ...")
        corrected = any(_SAID_TO_BE_THE_ADDRESS.search(text[:a.span[0]]) for a in addresses) \
            and not asks_something(piece or text)
        return written and bool(entities.get("order_id")) \
            and bool(_CHANGE_VERB.search(text) or _ASKS_TO_HAVE_IT.search(piece or text)
                     or names_change_verb_zh(text) or corrected)  # ("能不能改成寄到我账户上的默认地址？")
    if intent == "change_payment":  # "could the t-shirt order be paid with my gift card instead?"
        # ("订单还没发货，能改成用Visa卡付款吗？")
        return bool(entities.get("order_id") or entities.get("order_ids")) \
            and bool(entities.get("payment_method_id")) and named_method \
            and (bool(_CHANGE_VERB.search(text)) or names_change_verb_zh(text))
    if intent == "cancel_order":
        # "can i cancel the order w the headphones? dont need it anymore": the order and the reason,
        # all a cancellation needs, given with the question (the reason says it is wanted).
        return bool(entities.get("order_id")) and bool(entities.get("reason"))
    if intent == "update_default_address":  # "can my default address be 12 Main St, ...?"
        from csagent.nlp.entities.addresses import names_saved_address

        return bool(entities.get("address")) and names_saved_address(text)
    return False


# An order pointed back at ("that order", "the whole order"), not a product of it.
_THAT_ORDER = re.compile(
    r"\b(?:that|this|the same|the whole|that whole|this whole|the entire|that entire)\s+order\b",
    re.IGNORECASE)
# A clause that ends by saying it asks the same again ("... that one too", "... as well").
_THE_SAME_TOO = re.compile(r"\b(?:too|as well|also)\W*$", re.IGNORECASE)
# "it", "that": what the conversation was about.
_POINTS_AT_IT = re.compile(r"\b(?:it|that one|this one)\b", re.IGNORECASE)
# Words pointing back at several things at once ("have they left yet?", "what does each one cost"),
# and a message speaking of the customer's orders ("I have two orders", "my orders").
_POINTS_AT_THEM = re.compile(r"\b(?:they|them|each(?: one)?|both|all of them)\b", re.IGNORECASE)
_MY_ORDERS = re.compile(r"\b(?:my|two|three|several|few|both|all|\d)\s+(?:\w+\s+)?orders\b"
                        r"|\borders\s+(?:have\s+|did\s+)?i\b", re.IGNORECASE)
# "which one was the most expensive", "which of them came first": one of the orders, asked about.
_WHICH_OF_THEM = re.compile(r"\bwhich (?:one|ones|of them|of those|order)\b", re.IGNORECASE)
# Which of the orders spoken of holds a product: "which one of those is the tablet?", "which one is
# the lamp in?".
_WHICH_HOLDS_IT = re.compile(r"\bwhich (?:one )?of (?:those|them|these)\b"
                             r"|\bwhich (?:one|order)\b.*\b(?:in|inside)\s*[?.!]*\s*$", re.IGNORECASE)
# Money said to have come back ("how much got refunded", "did the refund go through").
_REFUNDED = re.compile(r"\brefund(?:ed|s)?\b|\bmoney back\b|退款|退了多少", re.IGNORECASE)
# Tracking asked of orders ("... and the tracking number please?").
_TRACKING_ASKED = re.compile(r"\btracking\b|运单号|物流单号|快递单号", re.IGNORECASE)
# Where orders go ("where are all my orders shipping to?").
_WHERE_THEY_GO = re.compile(
    r"\b(?:shipping|going|headed|heading|sent|being sent|delivered)\s+to\b|\baddress(?:es)?\b", re.IGNORECASE)
# Words pointing back at several orders at once ("they", "them" and "those" count only where the
# clauses before named several), and words picking one of them ("send one of them back").
_PICKS_ONE_OF_THEM = re.compile(r"\b(?:one|either) of (?:them|those|these|the two)\b", re.IGNORECASE)
_POINTS_AT_SEVERAL = re.compile(r"\b(?:both|all of them|each of them|them all|them both|they|them|those)\b",
                                re.IGNORECASE)


# A question of how often something is done ("how often should I replace the filter?").
_HOW_OFTEN = re.compile(r"\bhow (?:often|frequently)\b|\bevery how (?:long|many)\b", re.IGNORECASE)


def reconsider_intent(intent: str, runner_up: str | None, text: str, entities: Mapping[str, Any], *,
                      names_order: bool, message: str = "") -> str:
    """The clause's intent once its entities are known (the classifier reads words, not entities).

    - A cancellation told as done ("i cancelled #W1 - did my money come back?") asks what became
      of the money when the refund status is the runner-up or the clause asks about money; so does
      a read or a general question about money beside one in the `message` ("I ended up cancelling
      two orders. How much did I get back in total?").
    - A refund question about a change put hypothetically ("if I return it, how much would I get
      back?"), with that change as the runner-up, is a question about the change; so is a question
      about the refund rule put as a condition on the order the clause names ("if i cancel #W1 does
      the money go back on my gift card rite away").
    - An order read given an order id and a full postal address ("send order #W1 to 12 Main St,
      Springfield, IL 62704") asks to change where the order ships.
    - An intent that needs an order, in a clause that names none (and gives no mistyped id):
      a catalogue product mentioned makes a catalogue runner-up win ("can I still buy the T-Shirt
      in XXL?"); a question about "orders" in the plural asks for the list ("do I have any
      cancelled orders", and the same for an order-list runner-up); a question in general terms
      ("do you deliver to PO boxes?") is answered from the store's documents or catalogue: its
      runner-up when that is such a question, else a catalogue or a policy question. A clause
      that points at the customer's order ("where is my order?") keeps its intent, so the agent
      asks which order.
    - Out of scope by the examples' threshold, but naming a catalogue product with a catalogue
      runner-up: the catalogue question it reads most like; asking about the order the message
      names, with an order read as runner-up: that read.
    - A catalogue, complaint, small-talk or out-of-scope reading of a clause that tells the store to
      make a change by that change's own verb ("kill the sneakers one", "nix the smart watch one"):
      the change; so is a hand-off reading whose runner-up is that change ("kill that one pls").
    - A payment change whose words name an item change and its price difference ("swap it for the
      blue one, the difference on PayPal"): the item change.
    - In Chinese, an item request asking how often ("多久...一次"): a product question; one whose own
      verb names the other item request ("...一起退掉" read as an item change): that request.
    - A warranty reading of a question asking how often ("how often I should be replacing it?"):
      a product question (its upkeep, which its pages say); a warranty's term is no frequency.
    """
    from csagent.grounding.frame import named_changes
    from csagent.nlp.entities.questions import is_general_question, mentions_catalogue, opens_question
    from csagent.nlp.script import has_ideographs
    from csagent.nlp.speech_acts import ZH_HOW_OFTEN, asks_for_change, is_hypothetical

    if intent == "warranty" and (_HOW_OFTEN.search(text) or ZH_HOW_OFTEN.search(text)):
        return "product_info"

    address = entities.get("address") or {}
    if intent == "change_payment":
        from csagent.grounding.facts import names_a_price_difference

        if names_a_price_difference(text) and "change_items" in named_changes(text):
            # "我想换成同样M号、蓝色，但是高通风的那款，差价用礼品卡付", "swap it for the blue one, the
            # difference on PayPal": the item change, and how its difference is paid
            return "change_items"
    if intent in ITEM_REQUESTS and has_ideographs(text):
        if ZH_HOW_OFTEN.search(text):
            # "HEPA滤网多久需要换一次？" (how often does the filter need replacing?): how the product
            # is looked after, which its pages answer; no change of the order
            return "product_info"
        said = named_changes(text)
        if len(said) == 1 and said[0] in ITEM_REQUESTS and said[0] != intent:
            # "我想把黑色的无线耳机和那套蓝色的行李箱一起退掉" (send them back): read as an item
            # change for its "我想把 ...", but its own verb names a return
            return said[0]
    if intent == "cancel_order" and told_cancelled(text) \
            and (runner_up == "refund_status" or MONEY_CAME_BACK.search(text)):
        return "refund_status"
    if intent == "change_items" and (_swap_ruled_out_for_money(text) or (
            _swap_ruled_out(text) and "return_request" in named_changes(text))):
        # "I just want my money back on the boots, not a swap", "I'm not playing swap games with you,
        # just take them back": the item change is ruled out, the money back (the return) asked for
        return "return_request"
    if intent == "change_items" and _swap_ruled_out_for_the_range(text):
        # "not tryna swap it or anything, just curious what smaller sizes u got": the swap ruled out,
        # the store's range asked about
        return "product_info"
    if intent == "cancel_order" and told_cancelled(text) and _WH_OPENING.match(text):
        # "what was in the order that got cancelled": a question about an order cancelled already,
        # what it held (or where it is), never a cancellation asked for
        return "order_items" if _ASKS_WHATS_IN.search(text) else "order_status"
    if intent in MONEY_READ_AS_REFUND | {"refund_status"} and MONEY_CAME_BACK.search(text) \
            and not CONDITIONAL.search(text) and told_cancelled(message):
        # "I ended up cancelling two orders. Did both refunds go through? How much did I get back in
        # total?": beside a cancellation told as done, a question about the money is about its refund.
        return "refund_status"
    if intent == "policy_question" and names_order and entities.get("order_id") and is_hypothetical(text) \
            and MONEY_CAME_BACK.search(text) and not told_cancelled(text):
        # "if i cancel #W1 does the money go back on my gift card rite away or do i have to wait": the
        # refund rule asked of what would come of changing the order named; that change's facts
        # (its money, where it goes and when) answer it, nothing is proposed.
        from csagent.grounding.frame import named_change

        change = named_change(text)
        if change in {"cancel_order", "return_request"}:
            return change
    if intent == "refund_status" and is_hypothetical(text) and not told_cancelled(text):
        # "if I return the backpack, how much do I get back?", "If I cancel order #W1, how much money
        # come back to me?": a refund that would come of a change not yet asked for; the change's
        # facts answer it, nothing is proposed.
        from csagent.grounding.frame import named_change

        change = runner_up if runner_up in WRITE_INTENTS else named_change(text)
        if change:
            return change
    if intent in ORDER_READ_INTENTS and entities.get("order_id") and address.get("zip"):
        return "change_order_address"
    if intent == OUT_OF_SCOPE and runner_up in CATALOGUE_INTENTS \
            and (entities.get("products") or entities.get("categories")):
        # Below every intent's threshold, yet it names a catalogue product (or category) and reads
        # most like a catalogue question ("Tell me about the Gaming Mouse - which sensor types
        # ...?", "what toys do you have for kids?").
        return runner_up
    if intent == OUT_OF_SCOPE and runner_up in ORDER_READ_INTENTS and entities.get("order_id") \
            and opens_question(text):
        # So is a question about the order the message names that reads most like an order question
        # ("wats the total on #W9929926 and whats even in it lol i forgot").
        return runner_up
    if intent in CATALOGUE_INTENTS | HANDOFF_INTENTS | {"complaint", "smalltalk", OUT_OF_SCOPE} \
            and not has_question_mark(text):
        from csagent.grounding.frame import named_change

        change = named_change(text)
        # (a hand-off reading gives way only to the change read next to it: "kill that one pls")
        if change in WRITE_INTENTS and (change == runner_up or (
                asks_for_change(text) and intent not in HANDOFF_INTENTS)):
            # "ok kill the sneakers one, dont need em", "ok nix the smart watch one": read as about the
            # product, or as a complaint, but told to make a change by its own verb
            return change
    if intent not in ORDER_BOUND_INTENTS or names_order or entities.get("invalid_order_id"):
        return intent
    if runner_up in CATALOGUE_INTENTS and entities.get("products"):
        return runner_up
    if PLURAL_ORDERS.search(text) and (runner_up == "order_list" or opens_question(text)) \
            and not (intent in WRITE_INTENTS and asks_for_change(text)):
        # (a change asked of several orders stays one: "Could you please change the shipping address
        # on both of my orders that haven't shipped yet to 55 Harbor View Road, ...?")
        return "order_list"
    if is_general_question(text):
        if runner_up in GENERAL_QUESTION_INTENTS:
            return runner_up
        return "product_info" if mentions_catalogue(text) else "policy_question"
    return intent
