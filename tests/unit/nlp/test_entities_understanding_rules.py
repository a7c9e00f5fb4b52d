"""Entity evidence over the classifier's intent, and message-wide entities (local tier, no model)."""

from __future__ import annotations

from typing import Any

import pytest

from csagent.nlp.entities.questions import is_general_question, mentions_catalogue
from csagent.understanding_local import LocalUnderstanding, reconsider_intent


class _FixedClassifier:
    """A classifier that reads every clause as one intent, with a fixed runner-up."""

    def __init__(self, intent: str, runner_up: str | None = None) -> None:
        self.intent, self.runner_up = intent, runner_up

    def classify_many(self, texts: list[str]) -> list[Any]:
        from csagent.nlp.intents import IntentPrediction

        return [IntentPrediction(intent=self.intent, confidence=0.8, runner_up=self.runner_up,
                                 runner_up_score=0.6, lang="en", source="embedding") for _ in texts]


def test_a_question_in_general_terms_is_recognised():
    # Given questions about the store, and questions about the customer's own order
    general = ["Do you deliver to PO boxes?", "how long does a gift card refund take?",
               "can a pending order be cancelled?", "can I exchange an item for a different size?",
               # a condition first, then the question; "it" pointing back at the indefinite
               "If I send something back, do I pay for the label?",
               "when I cancel an order, is it refunded straight away?",
               "If I return something, the money can go to my other card?",
               # the store as the subject of a casual question
               "u guys ship to Canada? asking for a friend"]
    own = ["where is my order?", "can I get the tracking number?", "what's the status of this order?",
           "cancel order", "refund?", "if I cancel it, how much do I get back?", "can my order be cancelled?",
           "you shipped it yet?", "If it's late, I get a refund?", "you guys have my order?",
           "When will my account show the refund?"]
    # When each is checked / Then only the general ones are general questions
    assert [is_general_question(t) for t in general] == [True] * len(general)
    assert [is_general_question(t) for t in own] == [False] * len(own)


def test_a_general_order_question_becomes_a_policy_question():
    # Given "do you deliver to PO boxes?" read as tracking, with no order named
    # When its intent is reconsidered
    intent = reconsider_intent("tracking", "order_status", "Do you deliver to PO boxes?", {},
                               names_order=False)
    # Then it is answered from the store's policies
    assert intent == "policy_question"


def test_a_general_question_about_the_catalogue_becomes_a_catalogue_question():
    # Given a catalogue question misread as an order question
    text = "how many different products do you sell in the Electronics category?"
    # When its intent is reconsidered
    intent = reconsider_intent("order_items", "order_status", text, {}, names_order=False)
    # Then it goes to the catalogue
    assert mentions_catalogue(text)
    assert intent == "product_info"


def test_a_question_about_the_customers_own_order_keeps_its_intent():
    # Given "where is my order?" with no order id
    # When its intent is reconsidered
    intent = reconsider_intent("tracking", "policy_question", "where is my order?", {}, names_order=False)
    # Then it stays an order question (so the agent asks which order)
    assert intent == "tracking"


def test_a_question_about_orders_in_the_plural_is_an_order_list():
    # Given "do i have any cancelled orders" read as a cancellation
    # When its intent is reconsidered
    intent = reconsider_intent("cancel_order", "policy_question", "do i have any cancelled orders", {},
                               names_order=False)
    # Then it lists the customer's orders
    assert intent == "order_list"


def test_a_product_mention_lets_a_catalogue_runner_up_win():
    # Given "can I still buy the T-Shirt in size XXL?" read as a return, with the T-Shirt found
    entities = {"products": [{"product_id": "p1", "name": "T-Shirt", "options": {}}]}
    # When its intent is reconsidered
    intent = reconsider_intent("return_request", "product_availability",
                               "Can I still buy the T-Shirt in size XXL?", entities, names_order=False)
    # Then it is an availability question
    assert intent == "product_availability"


def test_an_order_id_with_a_full_address_asks_to_change_the_shipping_address():
    # Given "send order #W2918688 to 250 Harbor Blvd, San Diego, CA 92101" read as a status question
    entities = {"order_id": "#W2918688", "address": {"address1": "250 Harbor Blvd", "zip": "92101"}}
    # When its intent is reconsidered
    intent = reconsider_intent("order_status", "change_order_address", "send order ...", entities,
                               names_order=True)
    # Then it is a change of the order's address
    assert intent == "change_order_address"


def test_several_order_ids_in_one_clause_are_all_kept():
    # Given a message naming three orders in one clause
    understanding = LocalUnderstanding(classifier=_FixedClassifier("order_status"))
    # When it is understood
    result = understanding.understand("status of #W3220203, #W9300146 and #W4316152 please", {})
    # Then the clause keeps every order id, the first as its order
    assert result.clauses[0].entities["order_ids"] == ["#W3220203", "#W9300146", "#W4316152"]
    assert result.clauses[0].entities["order_id"] == "#W3220203"


def test_a_tracking_number_given_once_serves_the_following_question():
    # Given "I have tracking number 152028381741, where is that parcel now?"
    understanding = LocalUnderstanding(classifier=_FixedClassifier("tracking"))
    # When it is understood
    result = understanding.understand("I have tracking number 152028381741, where is that parcel now?", {})
    # Then every clause knows the tracking number (so none asks which order)
    numbers = [c.entities.get("tracking_number") for c in result.clauses]
    assert numbers == ["152028381741"] * len(result.clauses)


def test_a_reason_given_once_serves_every_cancellation():
    # Given two cancellations and one reason after them
    understanding = LocalUnderstanding(classifier=_FixedClassifier("cancel_order"))
    # When it is understood
    result = understanding.understand("Please cancel #W5694685 and #W6689278, I ordered both by mistake.", {})
    # Then the clause naming the orders has the reason
    assert result.clauses[0].entities["reason"] == "ordered by mistake"
    assert result.clauses[0].entities["order_ids"] == ["#W5694685", "#W6689278"]


def test_a_cancellation_told_as_done_asks_about_the_refund():
    # Given a clause read as a cancellation, with the refund status as the runner-up
    text = "i cancelled W1659844 - did my money come back?"
    # When its intent is reconsidered
    intent = reconsider_intent("cancel_order", "refund_status", text, {"order_id": "#W1659844"},
                               names_order=True)
    # Then the customer asks what became of the money
    assert intent == "refund_status"


def test_a_cancellation_asked_for_stays_a_cancellation():
    # Given a request to cancel, mentioning an earlier cancellation
    text = "I already cancelled one order, now cancel #W1659844 too"
    # When its intent is reconsidered
    intent = reconsider_intent("cancel_order", "refund_status", text, {"order_id": "#W1659844"},
                               names_order=True)
    # Then it stays a cancellation
    assert intent == "cancel_order"


def test_an_out_of_scope_reading_that_names_a_product_becomes_its_catalogue_runner_up():
    # Given a question below every intent's threshold that names a catalogue product
    text = "Tell me about the Gaming Mouse - which sensor types can I choose from?"
    products = [{"product_id": "p-mouse", "name": "Gaming Mouse", "options": {}}]
    # When the intent is reconsidered with a catalogue runner-up
    intent = reconsider_intent("out_of_scope", "product_availability", text, {"products": products},
                               names_order=False)
    # Then it is the catalogue question it reads most like, not a refusal
    assert intent == "product_availability"


def test_out_of_scope_without_a_product_stays_out_of_scope():
    # Given an off-topic question whose runner-up happens to be a catalogue intent
    intent = reconsider_intent("out_of_scope", "product_info", "what is the capital of France?", {},
                               names_order=False)
    # Then it stays out of scope
    assert intent == "out_of_scope"


class _ScriptedClassifier:
    """A classifier that reads the clauses in turn as the given (intent, confidence) pairs, or
    (intent, confidence, the trained model's probability) triples."""

    def __init__(self, *readings: tuple[str, float] | tuple[str, float, float]) -> None:
        self.readings = readings

    def classify_many(self, texts: list[str]) -> list[Any]:
        from csagent.nlp.intents import IntentPrediction

        return [IntentPrediction(intent=r[0], confidence=r[1], runner_up=None, runner_up_score=0.0, lang="en",
                                 source="embedding", probability=r[2] if len(r) > 2 else 0.0)
                for r, _ in zip(self.readings, texts, strict=False)]


def test_a_weakly_read_small_talk_fragment_does_not_decide_the_route():
    # Given an off-topic question whose tail splits into a weak small-talk fragment
    understanding = LocalUnderstanding(classifier=_ScriptedClassifier(
        ("out_of_scope", 0.52), ("smalltalk", 0.3), ("out_of_scope", 0.27)))
    text = "Do you know who won the Super Bowl last year? My brother and I have a bet going"
    # When it is understood / Then the confidently read clause routes it
    assert understanding.understand(text, {}).route == "out_of_scope"


@pytest.mark.parametrize(("text", "about_an_order"), [
    ("what the total came to?", True),           # the order's total, by the templates' examples
    ("how long is the return window?", False),   # a policy question, whatever order is named beside it
])
def test_a_general_question_is_about_an_order_when_an_order_template_answers_it(text, about_an_order):
    from csagent.understanding_local import asks_about_an_order

    assert asks_about_an_order(text) is about_an_order


@pytest.mark.parametrize(("text", "documents"), [
    ("how often should i descale my espresso machine", True),
    ("can I go swimming with the IPX7 earbuds?", True),
    ("what colors does the backpack come in", False),
    ("how much is the kettle", False),
    ("which is the cheapest skateboard", False),
])
def test_a_product_question_far_from_every_catalogue_template_is_for_the_products_documents(text, documents):
    from csagent.understanding_local import asks_the_documents

    names = ["Espresso Machine", "Wireless Earbuds", "Office Chair", "Backpack", "Electric Kettle",
             "Skateboard",
             "espresso machine", "earbuds", "office chair", "backpack", "kettle", "skateboard"]
    assert asks_the_documents(text, names) is documents


@pytest.mark.parametrize(("text", "documents"), [
    ("does my gift card expire?", True),                 # the FAQ: gift cards never expire
    ("can u cash out my gift card balance?", True),
    ("can I add a new credit card to my account", True),  # the FAQ: added in the account settings
    ("what's my gift card balance?", False),              # what the account holds
    ("what email do you have on file", False),
    ("which card did I pay with for #W1234567?", False),
])
def test_an_account_question_the_documents_answer_more_closely_than_the_account(text, documents):
    from csagent.understanding_local import documents_answer_closer

    assert documents_answer_closer(text) is documents


def test_the_trained_models_probability_travels_with_its_intent() -> None:
    from csagent.nlp.intents import get_intent_classifier

    # a reading the trained model decided carries its probability; an out-of-scope one carries none
    store, outside = get_intent_classifier().classify_many(
        ["do you sell air fryers?", "who won the super bowl"])
    assert store.intent == "product_availability" and store.probability > 0.5
    assert outside.intent == "out_of_scope" and outside.probability == 0.0


@pytest.mark.parametrize(("text", "runner_up", "expected"), [
    # the change named with the customer as its subject, whatever the runner-up
    ("If I cancel order #W7273405, how much money come back to me?", "order_status", "cancel_order"),
    ("if I return the backpack, how much do I get back?", "return_request", "return_request"),
    # a refund that already exists stays a refund question
    ("how much of my refund for #W7273405 has come back?", "order_status", "refund_status"),
])
def test_a_refund_asked_of_a_change_put_hypothetically_is_a_question_about_that_change(text, runner_up,
                                                                                        expected):
    assert reconsider_intent("refund_status", runner_up, text, {"order_id": "#W7273405"},
                             names_order=True) == expected


def test_the_trained_model_vouches_for_a_store_reading_unless_the_message_is_plainly_about_else() -> None:
    understanding = LocalUnderstanding()
    # "yall sell air fryers?": far from the examples, but the trained model is sure it is a catalogue
    # question, so the scope check cannot refuse it
    alone = understanding.understand("yall sell air fryers?", {})
    assert alone.intent == "product_availability" and alone.confidence >= 0.5
    # a fragment the model alone vouches for, beside a clause plainly out of scope, stays doubtful
    beside = understanding.understand(
        "Can you recommend me good restaurant in Columbus? Something not expensive.", {})
    assert [c.intent for c in beside.clauses] == ["out_of_scope", "product_info"]
    assert beside.clauses[1].confidence < 0.5


def test_beside_a_plainly_off_topic_question_a_weak_store_fragment_decides_nothing():
    # Given a weather question and a weak fragment that only mentions a product in passing
    understanding = LocalUnderstanding(classifier=_ScriptedClassifier(("out_of_scope", 0.89),
                                                                      ("product_info", 0.31)))
    text = "whats the weather gonna be like in chicago tmrw? tryna figure out if i need a jacket lol"
    # When it is understood / Then it is off topic, not a question to ask back about
    assert understanding.understand(text, {}).route == "out_of_scope"


def test_beside_a_plainly_off_topic_question_a_statement_naming_a_product_decides_nothing():
    # Given a weather question, then a statement that tells why, naming a product read surely
    understanding = LocalUnderstanding(classifier=_ScriptedClassifier(("out_of_scope", 0.73),
                                                                      ("product_info", 0.57)))
    text = "Can you tell me how will be the weather in San Antonio this weekend? I am planning a barbecue."
    # When it is understood / Then it is off topic: the statement asks nothing of the store
    assert understanding.understand(text, {}).route == "out_of_scope"
    # And a question about the product beside it still makes it a store matter
    asked = "Can you tell me how will be the weather in San Antonio this weekend? Do you sell barbecues?"
    assert understanding.understand(asked, {}).route == "knowledge_and_actions"
    # And a Chinese statement is not judged by English words ("物流显示已送达，但我没收到。怎么办？")
    chinese = LocalUnderstanding(classifier=_ScriptedClassifier(("complaint", 0.6), ("out_of_scope", 0.6)))
    assert chinese.understand("物流显示数码相机已送达，但我没收到。怎么办？", {}).route != "out_of_scope"


@pytest.mark.parametrize(("text", "confidence", "asks"), [
    ("I don't suppose you could recommend a good recipe for banana bread?", 0.9, True),
    ("do you know what the weather will be on Saturday", 0.4, True),   # opens as a question
    ("lovely weather today, isn't it?", 0.9, False),                    # a tag question: chat
    ("crazy week, right?", 0.9, False),
    ("I had the longest day?", 0.3, False),                             # weakly read: no question
])
def test_an_off_topic_clause_asks_something_or_chats(text, confidence, asks):
    from csagent.understanding import Clause
    from csagent.understanding_local import _asks_off_topic

    assert _asks_off_topic(Clause(text, "out_of_scope", confidence)) is asks


def test_a_money_question_beside_a_cancellation_told_as_done_is_about_its_refund():
    # Given a message that tells of cancellations, then asks about the money in general words
    message = ("Hey, so I ended up cancelling two orders with you guys. Did both refunds actually go "
               "through? How much did I get back in total?")
    # When its questions are reconsidered
    general = reconsider_intent("policy_question", None, "Did both refunds actually go through?", {},
                                names_order=False, message=message)
    read = reconsider_intent("order_items", None, "How much did I get back in total?", {},
                             names_order=False, message=message)
    # Then both ask about the refunds of those orders
    assert general == read == "refund_status"


def test_the_same_question_without_a_cancellation_told_stays_as_read():
    # Given the same general question, in a message that tells of no cancellation / asks for one
    intent = reconsider_intent("policy_question", None, "How long do refunds take?", {},
                               names_order=False, message="How long do refunds take?")
    asked = reconsider_intent("policy_question", None, "how much would I get back?", {},
                              names_order=False, message="cancel my kettle order. how much would I get back?")
    # Then they stay what the words read as
    assert intent == asked == "policy_question"


@pytest.mark.parametrize("text", [
    "I cancelled some hiking boots a while ago, how much did I get back for those?",
    "how much did i get back for the cancelled espresso order",
    "我取消的那个订单退了多少？",
])
def test_a_cancellation_told_as_done_with_a_money_question_is_a_refund_question(text: str):
    # Given a clause telling of a cancellation done and asking how much came back (no runner-up
    # says so; "how much" alone would read as hypothetical)
    # When its intent is reconsidered, as a cancellation or as a refund question
    # Then it asks about the refund, never for a cancellation
    told = reconsider_intent("cancel_order", None, text, {}, names_order=False, message=text)
    assert told == "refund_status"
    assert reconsider_intent("refund_status", "cancel_order", text, {}, names_order=False,
                             message=text) == "refund_status"


def test_a_cancellation_asked_for_in_chinese_is_not_told_as_done():
    from csagent.understanding_local.passes import CANCEL_ASKED, CANCELLATION_DONE

    # Given Chinese words telling of a cancellation done, and asking for one
    # Then only the first tells it as done
    assert CANCELLATION_DONE.search("我取消的那个订单") and CANCELLATION_DONE.search("订单已经取消了")
    assert CANCEL_ASKED.search("帮我取消这个订单") and not CANCEL_ASKED.search("我取消的那个订单")


def test_a_question_about_the_product_just_named_keeps_the_option_values_it_names():
    from csagent.understanding import Clause
    from csagent.understanding_local import _product_asked_about_again

    # Given a clause that named the luggage set, and the catalogue's options for it
    luggage = {"product_id": "p-luggage", "name": "Luggage Set", "options": {}, "surface": "luggage sets"}
    before = [Clause(text="I'm eyeing the luggage sets", intent="product_info", confidence=0.8,
                     entities={"products": [luggage]})]
    catalogue = [{"product_id": "p-luggage", "name": "Luggage Set",
                  "options": {"piece count": ["2-piece", "4-piece"], "color": ["blue", "red"],
                              "material": ["softshell", "hardshell"]}}]
    # When the next clause asks the price of one version without naming the product
    asked = _product_asked_about_again("How much is the 4-piece blue softshell one", before, catalogue)
    # Then it is about that product, in the version named
    assert asked is not None and asked["product_id"] == "p-luggage"
    assert asked["options"] == {"piece count": "4-piece", "color": "blue", "material": "softshell"}


def test_a_handoff_reading_is_not_lifted_by_the_trained_models_majority() -> None:
    # Given "my daughter told me I could just message you here", which the trained model reads as a
    # hand-off with the majority of its probability but far from the examples (real model)
    understanding = LocalUnderstanding()
    clause = understanding.understand("My daughter told me I could just message you here", {}).clauses[0]
    # Then it keeps the examples' confidence, under the 0.5 at which it no longer gives way to a
    # request read surely beside it (`handoff.triggers.WEAK_HANDOFF`)
    from csagent.handoff.triggers import WEAK_HANDOFF

    assert clause.intent == "human_handoff" and clause.confidence < WEAK_HANDOFF


@pytest.mark.parametrize(("confidence", "route"), [
    (0.34, "clarify"),        # "why is it going to san diego": nothing vouches for off-topic
    (0.57, "out_of_scope"),   # "write me a rap about tacos": plainly off-topic
])
def test_a_message_read_out_of_scope_is_refused_only_when_read_so_with_confidence(confidence, route):
    from csagent.understanding import REFUSAL_MIN

    # Given a message whose one clause reads out of scope, below or above the cross-validated bar
    understanding = LocalUnderstanding(classifier=_ScriptedClassifier(("out_of_scope", confidence)))
    # When it is understood / Then a weak reading is asked about, a confident one refused
    assert (confidence >= REFUSAL_MIN) is (route == "out_of_scope")
    assert understanding.understand("some words", {}).route == route


@pytest.mark.parametrize(("readings", "text"), [
    # a greeting, chat, and a weakly read statement that asks nothing and names no order
    ((("greeting", 0.92), ("smalltalk", 0.83), ("product_info", 0.31), ("smalltalk", 0.5)),
     "Hello! How are you today? I don't need nothing special, I only want to say your website is very nice."),
    ((("out_of_scope", 0.29), ("product_info", 0.33), ("smalltalk", 0.5)),
     "This heat wave is unbearable. 95 degrees, AC is broken. Just venting."),
    ((("smalltalk", 0.33),), "今天外面好冷啊,还好我在你们家买的抓绒外套够暖和,哈哈。"),
])
def test_small_talk_beside_weak_statements_is_answered_as_small_talk(readings, text):
    understanding = LocalUnderstanding(classifier=_ScriptedClassifier(*readings)).understand(text, {})
    assert (understanding.route, understanding.intent) == ("general", "smalltalk")
    assert understanding.confidence >= 0.35  # no clarifying question for a statement


@pytest.mark.parametrize(("readings", "text"), [
    # the weak clause asks something: what is needed is asked back, as before
    ((("greeting", 0.92), ("product_info", 0.31)), "hi! does the kettle come in red?"),
    ((("greeting", 0.92), ("order_status", 0.31)), "hi, where is my stuff"),
    # a weak reading confident enough to act on is no chat
    ((("greeting", 0.92), ("complaint", 0.6)), "hi. my kettle arrived broken."),
    # a Chinese request without a question mark asks something
    ((("smalltalk", 0.33),), "帮我取消订单"),
])
def test_a_request_beside_small_talk_is_never_taken_for_chat(readings, text):
    understanding = LocalUnderstanding(classifier=_ScriptedClassifier(*readings)).understand(text, {})
    assert understanding.route != "general" or understanding.confidence < 0.35


@pytest.mark.parametrize(("readings", "text"), [
    # the probabilities the shipped model gives these clauses (2026-12-05): a hand-off reading it is
    # unsure of, in words that name no person, beside what the message asks
    ((("greeting", 0.92, 0.9), ("human_handoff", 0.57, 0.21), ("order_list", 0.82, 0.9)),
     "Hello, I am new customer here. Please can you show me my orders"),
    ((("complaint", 0.86, 0.8), ("human_handoff", 0.35, 0.29)),
     "I believe I was charged twice for the same bookshelf. Could you please look into it?"),
])
def test_a_doubted_handoff_beside_a_request_is_no_request_for_a_person(readings, text):
    from csagent.handoff.triggers import asks_for_person_now

    understanding = LocalUnderstanding(classifier=_ScriptedClassifier(*readings)).understand(text, {})
    assert understanding.route == "knowledge_and_actions"
    assert "human_handoff" not in [c.intent for c in understanding.clauses]
    assert not asks_for_person_now(understanding.clauses_as_dicts())


@pytest.mark.parametrize(("readings", "text"), [
    # alone, a doubted hand-off still goes to a person: in doubt, a person
    ((("human_handoff", 0.44, 0.41),), "how do you verify who i am"),
    # the model sure of it, beside a request
    ((("human_handoff", 0.62, 0.62), ("order_status", 0.8, 0.9)),
     "I want to escalate this. Where is my order?"),
    # words that name a person are never doubted
    ((("human_handoff", 0.39, 0.25), ("order_status", 0.8, 0.9)),
     "get me someone who can actually fix this. Where is my order?"),
])
def test_a_handoff_alone_sure_or_in_words_for_a_person_stays(readings, text):
    understanding = LocalUnderstanding(classifier=_ScriptedClassifier(*readings)).understand(text, {})
    assert "human_handoff" in [c.intent for c in understanding.clauses]


@pytest.mark.parametrize(("text", "intent", "read"), [
    # the item change, and how its difference is paid, read as a payment change
    ("我想换成同样M号、蓝色，但是高通风的那款，差价用礼品卡付", "change_payment", "change_items"),
    ("swap it for the blue one, the difference on PayPal", "change_payment", "change_items"),
    ("change the payment to paypal", "change_payment", "change_payment"),
    # in Chinese, an item request whose own verb names a return, or asks how often
    ("我想把黑色的无线耳机和那套蓝色的行李箱一起退掉", "change_items", "return_request"),
    ("HEPA滤网多久需要换一次？", "change_items", "product_info"),
])
def test_a_reading_its_own_words_outweigh(text: str, intent: str, read: str) -> None:
    assert reconsider_intent(intent, None, text, {}, names_order=True) == read


@pytest.mark.parametrize(("text", "intent"), [
    ("how often I should be replacing it?", "product_info"),   # upkeep: what the product's pages say
    ("how frequently should the filter be changed", "product_info"),
    ("滤网多久需要换一次？", "product_info"),
    ("how long is the warranty on it?", "warranty"),             # a term: the warranty's
])
def test_a_warranty_reading_of_how_often_something_is_done_is_a_product_question(text: str, intent: str):
    assert reconsider_intent("warranty", "product_info", text, {}, names_order=False) == intent


@pytest.mark.parametrize(("text", "entities", "intent"), [
    ("whats even in it lol i forgot", {"order_id": "#W9929926"}, "order_items"),
    ("whats even in it lol i forgot", {}, "out_of_scope"),                    # no order named
    ("lol i forgot my password to netflix", {"order_id": "#W9929926"}, "out_of_scope"),  # no question
])
def test_an_unsure_question_about_the_order_the_message_names_is_its_order_read(text: str, entities: dict,
                                                                                intent: str):
    assert reconsider_intent("out_of_scope", "order_items", text, entities, names_order=False) == intent


@pytest.mark.parametrize(("text", "praise"), [
    ("I bought a grey backpack from you guys a while back and honestly it's been great", True),
    ("Loving the automatic espresso machine so far, it's made my mornings so much better", True),
    ("it's been great but the strap broke", False),       # something wrong beside it
    ("is it great for hiking?", False),                   # a question
])
def test_praise_of_what_came_is_told_apart(text: str, praise: bool):
    from csagent.understanding_local import _praises

    assert _praises(text) is praise


def test_the_refund_rule_asked_of_a_change_to_the_order_named_is_a_question_about_that_change():
    text = "if i cancel #W7170967 does the money go back on my gift card rite away or do i have to wait"
    entities = {"order_id": "#W7170967"}
    # Given the refund rule asked as a condition on the order the clause names: that cancellation's facts
    assert reconsider_intent("policy_question", None, text, entities, names_order=True) == "cancel_order"
    # but the rule asked of no order, or asked of nothing about money, stays a question about the rule
    assert reconsider_intent("policy_question", None, "if i cancel an order does the money go back to my "
                             "gift card right away?", {}, names_order=False) == "policy_question"
    assert reconsider_intent("policy_question", None, "if i cancel #W7170967 can i order again later?",
                             entities, names_order=True) == "policy_question"
