"""Example-based intent classification: unseen phrasings, Chinese, out-of-scope rejection."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources

import pytest

from csagent.nlp.intents import (
    INTENTS,
    OUT_OF_SCOPE,
    Example,
    IntentClassifier,
    detect_language,
    load_calibration,
    load_examples,
    mask_entities,
    training_examples,
)

# Phrasings that are in neither the training nor the held-out file.
UNSEEN = [
    ("has order #W2611340 left the warehouse yet", "order_status"),
    pytest.param("what's the current status of my purchase", "order_status", marks=pytest.mark.xfail(
        strict=True, reason=(
            "read as product_availability (probability 0.28, order_status 0.23) since the English model "
            "learns from development parts 1 to 40 and trains to convergence: 'current' weighs toward "
            "stock questions. That model reads 0.8929 / 0.9216 of the unseen first messages of parts 31 "
            "to 40 / 19 to 28 right, against 0.8426 / 0.8728 before (SoftmaxRegression.ENGLISH)"))),
    ("can you give me the tracking number for #W2611340", "tracking"),
    ("which shipping carrier is handling my package", "tracking"),
    ("please cancel order #W2611340", "cancel_order"),
    ("I don't want the order anymore, cancel it", "cancel_order"),
    ("I'd like to return the headphones I bought", "return_request"),
    ("the jacket is too small, I want to exchange it", "change_items"),
    ("I returned the item but haven't seen the refund", "refund_status"),
    ("has the refund been issued yet", "refund_status"),
    # A cancellation told as done, asking after the money, is a refund question.
    ("we canceled #W2611340 on monday, has the money reached my account", "refund_status"),
    ("please ship my order to 9 Elm St, Denver, CO 80202 instead", "change_order_address"),
    ("can I change the delivery address of my pending order", "change_order_address"),
    ("update the default shipping address on my account", "update_default_address"),
    ("please change my saved home address", "update_default_address"),
    ("what's the warranty period for the laptop", "warranty"),
    ("are the headphones covered by a warranty", "warranty"),
    ("can I speak with a human agent", "human_handoff"),
    ("transfer me to customer support staff", "human_handoff"),
    ("is the red backpack in stock", "product_availability"),
    ("what are the features of the smart thermostat", "product_info"),
    ("do you offer free returns", "policy_question"),
    # Generic "how long / can I / which reasons" questions are policy, not a request about an order.
    ("how long does a refund take to show up on paypal", "policy_question"),
    ("what does a shipment usually take to arrive once dispatched", "policy_question"),
    ("show all the orders I've placed", "order_list"),
    ("what items did I get in order #W2611340", "order_items"),
    ("hi there, good morning", "greeting"),
    ("thanks so much for the help", "thanks"),
]


@pytest.mark.parametrize(("text", "expected"), UNSEEN)
def test_unseen_phrasings_get_their_intent(classifier: IntentClassifier, text: str, expected: str) -> None:
    # Given a customer phrasing the classifier has never seen
    # When it is classified
    prediction = classifier.classify(text)
    # Then the intended intent wins, above the calibrated threshold
    assert prediction.intent == expected
    assert prediction.confidence >= classifier.threshold


# A known miss, strict so that a classifier that gets it right says so.
_KEPT_THRESHOLD = pytest.mark.xfail(strict=True, reason=(
    "read as account_info at 0.336, above the 0.312 out-of-scope threshold kept so that 'how long is the "
    "return window?' (0.319) is not refused; see calibration.json's threshold_note"))


@pytest.mark.parametrize("text", ["what's the capital of France", "write me a poem",
                                  "explain how black holes form", "who is the best football player ever",
                                  "translate good night into portuguese",
                                  pytest.param("is my Disney+ subscription still active",
                                               marks=_KEPT_THRESHOLD)])
def test_questions_outside_the_store_are_out_of_scope(classifier: IntentClassifier, text: str) -> None:
    # Given a question that has nothing to do with the store
    # When it is classified
    prediction = classifier.classify(text)
    # Then it is out of scope rather than forced into a store intent
    assert prediction.intent == OUT_OF_SCOPE
    assert not prediction.in_scope


def test_gibberish_is_out_of_scope_with_its_low_confidence_reported(classifier: IntentClassifier) -> None:
    # Given keyboard noise that is far from every example
    # When it is classified
    prediction = classifier.classify("asdkjh qwe zxcv")
    # Then it is out of scope, and the reported confidence is the low score that caused it
    assert prediction.intent == OUT_OF_SCOPE
    assert prediction.confidence < classifier.threshold
    assert prediction.runner_up is not None


def test_a_swap_asked_in_general_terms_is_answered_as_a_policy_question(classifier: IntentClassifier) -> None:
    # Given a swap asked about in general terms, naming no order (the classifier alone reads a
    # request to change an item; the understanding sees that nothing of the customer's is named)
    from csagent.understanding_local import LocalUnderstanding

    understanding = LocalUnderstanding(classifier=classifier).understand(
        "can a product be swapped for a bigger size", {})
    # Then it is answered from the store's policy
    assert understanding.intent == "policy_question"


@pytest.mark.parametrize(("text", "route"), [
    # courtesy around a question the store does not answer: the question decides
    ("Dear support team, I am planning a picnic this weekend. Do you know what the weather will be "
     "like in Chicago on Saturday? Many thanks in advance!", "out_of_scope"),
    ("Hello, can you help me write a cover letter for a marketing job? Thank you kindly.", "out_of_scope"),
    # a remark asks nothing: small talk stays small talk
    ("Good morning! Lovely weather today, isn't it? Thanks for all your help last week", "general"),
    ("Hi! Hope you're having a good day!", "general"),
])
def test_courtesy_does_not_hide_a_question_out_of_scope(classifier: IntentClassifier, text: str,
                                                        route: str) -> None:
    from csagent.understanding_local import LocalUnderstanding

    assert LocalUnderstanding(classifier=classifier).understand(text, {}).route == route


def test_prediction_names_a_runner_up_with_a_lower_score(classifier: IntentClassifier) -> None:
    # Given an order question / When classified
    prediction = classifier.classify("where is my package")
    # Then the runner-up is another intent scoring no higher than the winner
    assert prediction.runner_up not in (None, prediction.intent)
    assert prediction.runner_up_score <= prediction.confidence


@pytest.mark.parametrize(("text", "expected"), [
    ("我的快递到哪里了", "tracking"),
    ("订单#W2611340发货了吗", "order_status"),
    ("这件衣服我想退货", "return_request"),
    ("退款进度可以查一下吗", "refund_status"),
    ("帮我改一下订单的收货地址", "change_order_address"),
    ("我的默认地址需要更新", "update_default_address"),
    ("请帮我转人工", "human_handoff"),
])
def test_chinese_messages_are_classified_by_their_character_ngrams(classifier: IntentClassifier, text: str,
                                                                  expected: str) -> None:
    # Given a Chinese customer message (MiniLM-L6 is English-only)
    # When it is classified
    prediction = classifier.classify(text)
    # Then the Chinese examples sharing its characters pick the intent
    assert (prediction.intent, prediction.lang, prediction.source) == (expected, "zh", "ngrams")


def test_chinese_message_about_nothing_the_store_does_is_out_of_scope(classifier: IntentClassifier) -> None:
    # Given a Chinese question about the weather / When classified / Then it is out of scope
    prediction = classifier.classify("明天会下雨吗")
    assert prediction.intent == OUT_OF_SCOPE and prediction.lang == "zh"


def test_chinese_examples_read_by_a_model_trained_without_them_stay_above_the_measured_floor() -> None:
    # Given every Chinese training example read by a model trained on the other folds (5-fold)
    from csagent.nlp.calibrate import choose, sweep_chinese

    chosen = choose(sweep_chinese(training_examples(), top_ks=(5,)))
    # Then at least 82 % are labelled as their file says (measured 0.870 at top-5 over 1,873
    # examples of 22 labels; the top-k vote it replaced had 0.623 by leave-one-out over 682)
    assert chosen.accuracy >= 0.82, chosen


def test_a_chinese_example_is_its_own_nearest_text() -> None:
    # Given a classifier over two Chinese examples of different intents
    examples = [Example("我的订单到哪了", "order_status", "zh"), Example("我要退货", "return_request", "zh"),
                Example("hello", "greeting", "en")]
    clf = IntentClassifier(examples=examples, zh_threshold=0.1, zh_top_k=1)
    # When the scores of one of them are computed
    scores = clf.chinese_scores(["我要退货"])[0]
    # Then it is closest to itself, and to nothing in English
    assert max(scores, key=lambda k: scores[k]) == "return_request" and set(scores) == {"order_status",
                                                                                       "return_request"}


@pytest.mark.parametrize(("text", "lang"), [
    ("where is my order", "en"), ("我的订单到哪了", "zh"), ("#W2611340 到哪了", "zh"),
    ("order #W2611340 到了吗 please tell me when it will arrive", "en"), ("", "en"), ("12345", "en"),
])
def test_language_is_detected_from_the_share_of_chinese_characters(text: str, lang: str) -> None:
    # Given a message / When its language is detected / Then CJK share decides
    assert detect_language(text) == lang


def test_entities_are_masked_before_embedding() -> None:
    # Given a message with an order id, a tracking number and an e-mail
    masked = mask_entities("order #W2611340 tracking 357962501027 mail me at a@b.com")
    # When masked / Then no digits or address remain, only generic words
    assert masked == "order order tracking tracking number mail me at email"


@pytest.mark.parametrize("text", ["status of W32202031 please", "status of #W123456 please"])
def test_a_mistyped_order_id_is_masked_like_a_real_one(classifier: IntentClassifier, text: str) -> None:
    # Given a status question whose order id has the wrong number of digits
    # When it is masked and classified
    masked = mask_entities(text)
    prediction = classifier.classify(text)
    # Then the digits are gone and the clause is still an order-status question (the planner asks
    # about the bad id), not something the stray digits happened to resemble
    assert masked == "status of order please"
    assert prediction.intent == "order_status"


def test_threshold_comes_from_the_calibration_file(classifier: IntentClassifier) -> None:
    # Given the calibration written by `python -m csagent.nlp.calibrate`
    shipped = json.loads(resources.files("csagent.nlp").joinpath("data", "calibration.json").read_text())
    # When the classifier reads its threshold / Then it is the calibrated value
    assert classifier.threshold == pytest.approx(shipped["threshold"]) == load_calibration()["threshold"]
    assert shipped["heldout_accuracy"] >= 0.9


def test_an_explicit_threshold_overrides_the_calibration(embedder) -> None:  # noqa: ANN001
    # Given a classifier with an impossible threshold
    strict = IntentClassifier(embedder=embedder, threshold=0.999)
    # When a clear order question is classified
    prediction = strict.classify("where is my order")
    # Then it is rejected as out of scope, with the real runner-up kept for clarification
    assert prediction.intent == OUT_OF_SCOPE and prediction.runner_up == "order_status"


def test_classify_many_keeps_input_order(classifier: IntentClassifier) -> None:
    # Given English, Chinese and empty clauses mixed together
    texts = ["cancel my order", "转人工", "", "what is the warranty on the laptop"]
    # When classified in one call
    intents = [p.intent for p in classifier.classify_many(texts)]
    # Then each result lines up with its clause
    assert intents == ["cancel_order", "human_handoff", OUT_OF_SCOPE, "warranty"]


def test_training_data_covers_every_intent_with_enough_examples() -> None:
    # Given the training file / When examples are counted per intent and language
    examples = load_examples()
    english = Counter(e.intent for e in examples if e.lang == "en")
    chinese = Counter(e.intent for e in examples if e.lang == "zh")
    # Then every intent has at least 15 English examples, and the key intents 8 Chinese ones
    assert set(english) == set(INTENTS) and min(english.values()) >= 15
    for intent in ("order_status", "tracking", "return_request", "change_order_address",
                   "update_default_address", "human_handoff"):
        assert chinese[intent] >= 8


def test_heldout_set_shares_no_phrasing_with_training() -> None:
    # Given both labelled files / When compared / Then no held-out text is a training text
    training = {e.text.lower() for e in load_examples()}
    heldout = load_examples("intents_heldout.jsonl")
    assert len(heldout) >= 60
    assert not [e.text for e in heldout if e.text.lower() in training]


def test_a_chinese_sentence_quoting_an_english_address_is_chinese() -> None:
    # Given a Chinese request around a long English address / When its language is detected
    text = "平板那个订单的收货地址改成 1200 Market Street, Apt 4C, San Francisco, CA 94102。"
    # Then it is Chinese (so it is classified and answered in Chinese)
    assert detect_language(text) == "zh"


def test_a_question_naming_only_an_option_is_about_the_product_named_just_before(
        classifier: IntentClassifier, catalogue: list[dict]) -> None:
    from csagent.understanding_local import LocalUnderstanding

    # Given a product named in one sentence and its colours asked about in the next
    understanding = LocalUnderstanding(classifier=classifier, catalogue=lambda: catalogue).understand(
        "I'm shopping for a smart watch as a gift. What colours can I actually get right now?", {})
    # Then the question is a catalogue question about that product
    last = understanding.clauses[-1]
    assert last.intent == "product_info"
    assert [p["name"] for p in last.entities["products"]] == ["Smart Watch"]


def test_a_cancellation_told_as_done_beside_a_question_only_sets_the_scene(
        classifier: IntentClassifier) -> None:
    from csagent.understanding_local import LocalUnderstanding

    # Given "I cancelled an order ages ago" beside a question about its refund
    understanding = LocalUnderstanding(classifier=classifier).understand(
        "I cancelled an order ages ago and I want to know if you've actually refunded me.", {})
    # Then nothing is to be cancelled: the refund question is what was asked
    assert "cancel_order" not in [c.intent for c in understanding.clauses]
