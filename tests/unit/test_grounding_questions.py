"""Grounding's questions in the customer's language: each is kept as a phrase beside its English
text, the English rendering is the text asked before phrases existed, word for word, and the
Chinese one says the same with no English words but the catalogue's and the store's (ids, product
names, option values, prices, card brands)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from csagent.grounding.frame import ground
from csagent.grounding.model import CustomerView, Line, OrderView, PaymentView, Variant
from csagent.grounding.resolve import resolve_item_changes
from csagent.nlp.replies import render_phrase
from csagent.planning import plan_tasks
from csagent.replies import ask_for

KETTLE, BOOTS, BED, CLOCK = "p-kettle", "p-boots", "p-bed", "p-clock"


def _variants() -> dict[str, tuple[Variant, ...]]:
    kettles = tuple(Variant(f"k-{c}-{col}", {"capacity": c, "color": col}, p, c != "1.5L")
                    for c, p in (("1L", 50.0), ("1.5L", 60.0), ("2L", 70.0)) for col in ("black", "white"))
    boots = tuple(Variant(f"b-{s}-{m}", {"size": s, "material": m}, 100.0 + int(s), True)
                  for s in ("8", "9", "10") for m in ("leather", "synthetic"))
    beds = tuple(Variant(f"bed-{s}-{col}", {"size": s, "color": col}, 90.0, True)
                 for s, col in (("large", "beige"), ("large", "grey"), ("small", "beige")))
    clocks = tuple(Variant(f"c-{s}-{m}-{col}", {"diameter": s, "material": m, "color": col}, p, available)
                   for s, m, col, p, available in (("12 inches", "wood", "brown", 40.0, True),
                                                   ("12 inches", "metal", "black", 45.0, True),
                                                   ("16 inches", "wood", "black", 55.0, True),
                                                   ("16 inches", "wood", "brown", 55.0, True),
                                                   ("14 inches", "wood", "brown", 50.0, False)))
    return {KETTLE: kettles, BOOTS: boots, BED: beds, CLOCK: clocks}


def _line(item_id: str, product_id: str, name: str) -> Line:
    variant = next(v for v in _variants()[product_id] if v.item_id == item_id)
    return Line(item_id, product_id, name, variant.price, dict(variant.options))


def _store() -> CustomerView:
    """Kettles in a delivered and a pending order, two pet beds in one order, a wall clock alone."""
    return CustomerView("li_wei", (
        OrderView("#W1000001", "delivered", (_line("k-1L-white", KETTLE, "Electric Kettle"),
                                             _line("b-9-leather", BOOTS, "Hiking Boots")), "card_1"),
        OrderView("#W1000002", "pending", (_line("k-1L-black", KETTLE, "Electric Kettle"),), "gift_1"),
        OrderView("#W1000003", "delivered", (_line("bed-large-beige", BED, "Pet Bed"),
                                             _line("bed-large-grey", BED, "Pet Bed")), "paypal_1"),
        OrderView("#W1000004", "pending", (_line("c-12 inches-wood-brown", CLOCK, "Wall Clock"),), "card_1"),
    ), (PaymentView("card_1", "credit_card", "visa", "1234"), PaymentView("paypal_1", "paypal"),
        PaymentView("gift_1", "gift_card", balance=10.0),
        PaymentView("card_2", "credit_card", "mastercard", "9876")))


#: What a Chinese question may hold in Latin letters: what the store and the catalogue write.
CATALOGUE_WORDS = ("Electric Kettle", "Hiking Boots", "Pet Bed", "Wall Clock", "inches", "wood", "metal",
                   "black", "brown", "white", "leather", "large", "beige", "grey", "Visa", "Mastercard",
                   "PayPal")


def english_words(text: str) -> list[str]:
    """The Latin-letter words of `text` that are not ids, prices, option values nor names."""
    for word in CATALOGUE_WORDS:
        text = text.replace(word, " ")
    text = re.sub(r"#W\d+|\$[\d,.]+|\d+(?:\.\d+)?L?", " ", text)
    return re.findall(r"[A-Za-z]+", text)


# (intent, the customer's words, the order already found, today's English question)
QUESTIONS = [
    ("order_status", "where is my kettle?", None,
     "You have 2 orders with the Electric Kettle: #W1000001 (Electric Kettle, Hiking Boots, delivered); "
     "#W1000002 (Electric Kettle, pending). Which one do you mean?"),
    ("order_status", "where is my order?", None,
     "Which of your orders do you mean: #W1000001 (Electric Kettle, Hiking Boots, delivered); #W1000002 "
     "(Electric Kettle, pending); #W1000003 (Pet Bed, Pet Bed, delivered); #W1000004 (Wall Clock, pending)?"),
    ("change_items", "the wall clock in black please", "#W1000004",
     "Order #W1000004: Several versions of the Wall Clock fit; which one do you want? Available: the Wall "
     "Clock in 12 inches, metal, black ($45.00) or 16 inches, wood, black ($55.00)."),
    ("change_items", "the wall clock in 16 inches metal please", "#W1000004",
     "Order #W1000004: The Wall Clock does not come in 16 inches, metal."),
    ("change_items", "the wall clock in 14 inches please", "#W1000004",
     "Order #W1000004: The Wall Clock in 14 inches is not available right now."),
    ("change_items", "change the pet bed to small", "#W1000003",
     "Order #W1000003: It holds 2 Pet Bed items: Pet Bed (large, beige) and Pet Bed (large, grey). "
     "Which one do you mean?"),
    ("change_items", "change the kettle please", "#W1000002",
     "Order #W1000002: What would you like the Electric Kettle changed to?"),
    ("change_items", "I want to change something", "#W1000001",
     "Which items of order #W1000001 should change, and to what? Its items are: Electric Kettle (1L, white), "
     "Hiking Boots (9, leather)."),
    ("change_items", "I want the kettle in 2L", "#W1000002",
     "Which payment method should pay or receive the price difference: Visa ending 1234, PayPal, "
     "gift card ($10.00 left), Mastercard ending 9876?"),
    ("return_request", "return the pet bed", "#W1000003",
     "Order #W1000003: It holds 2 Pet Bed items: Pet Bed (large, beige) and Pet Bed (large, grey). "
     "Which one do you want to return?"),
    ("return_request", "I want to send something back", "#W1000001",
     "Which items of order #W1000001 do you want to return? Its items are: Electric Kettle (1L, white), "
     "Hiking Boots (9, leather)."),
    ("return_request", "return the boots, refund to my mastercard", "#W1000001",
     "A refund for order #W1000001 can go only to its original payment method or to a gift card on your "
     "account, not to your Mastercard ending 9876. Should it go to Visa ending 1234 or gift card "
     "($10.00 left)?"),
    ("change_payment", "change the payment method of #W1000002", "#W1000002",
     "Which payment method should order #W1000002 be paid with instead: Visa ending 1234, PayPal, "
     "Mastercard ending 9876?"),
    ("change_payment", "pay #W1000002 with my credit card instead", "#W1000002",
     "Which one should I use: Visa ending 1234, Mastercard ending 9876?"),
]


def _asked(intent: str, text: str, order_id: str | None) -> dict[str, Any]:
    entities = {"order_id": order_id} if order_id else {}
    return ground(intent, text, entities, _store(), _variants(), text)


@pytest.mark.parametrize(("intent", "text", "order_id", "english"), QUESTIONS,
                         ids=[f"{q[0]}: {q[1]}" for q in QUESTIONS])
def test_a_grounding_question_is_said_in_english_as_before_and_in_chinese(
        intent: str, text: str, order_id: str | None, english: str) -> None:
    # When grounding asks a question about the customer's own data
    entities = _asked(intent, text, order_id)
    # Then its English text is today's, and its phrase says exactly that in English
    assert entities["question"] == english
    assert render_phrase(entities["question_phrase"], "en") == english
    # And in Chinese it names the same orders, with no English word but the catalogue's
    chinese = render_phrase(entities["question_phrase"], "zh")
    assert english_words(chinese) == [], chinese
    assert set(re.findall(r"#W\d+", chinese)) == set(re.findall(r"#W\d+", english))
    assert re.findall(r"\$[\d.]+", chinese) == re.findall(r"\$[\d.]+", english)


def test_the_versions_offered_in_chinese_are_told_apart() -> None:
    # Given two versions of the wall clock that fit "in black" equally well
    entities = _asked("change_items", "the wall clock in black please", "#W1000004")
    # Then in Chinese each version's values stay together, the versions set apart by "，或"
    assert render_phrase(entities["question_phrase"], "zh") == (
        "订单 #W1000004：Wall Clock 有多个款式都符合，您想要哪一个？可选的款式：Wall Clock 有 "
        "12 inches、metal、black（$45.00），或 16 inches、wood、black（$55.00）。")


@pytest.mark.parametrize(("text", "english", "chinese"), [
    ("is there a cheaper wall clock? switch me if so", "No Wall Clock costs less than yours ($40.00).",
     "没有比您的（$40.00）更便宜的 Wall Clock。"),
    ("is the wall clock in 16 inches cheaper? switch me if so",
     "The Wall Clock in 16 inches, wood, brown costs $55.00, not less than yours ($40.00).",
     "Wall Clock（16 inches、wood、brown）的价格是 $55.00，并不比您的（$40.00）便宜。"),
])
def test_an_item_changes_problem_is_a_phrase_said_in_either_language(text: str, english: str,
                                                                      chinese: str) -> None:
    order = _store().order("#W1000004")
    assert order is not None
    # When no version fits a wish for a cheaper item
    change = resolve_item_changes(text, order, _variants()).changes[0]
    # Then the problem reads as before in English, and in Chinese from the same phrase
    assert change.problem == english
    assert change.problem_phrase is not None and render_phrase(change.problem_phrase, "zh") == chinese


def test_the_question_asked_of_a_chinese_customer_is_in_chinese() -> None:
    # Given the kettle's change asked in Chinese, with the kettle's 1.5L version out of stock
    text = "#W1000002 里的水壶能换成1.5L的吗？"
    entities = _asked("change_items", text, "#W1000002")
    # When the planner asks it back
    plan = plan_tasks([{"intent": "change_items", "text": text, "confidence": 0.9, "entities": entities}])
    [missing] = plan.missing
    # Then the reply in Chinese says it in Chinese, and in English as grounding wrote it
    assert ask_for(missing, "zh") == "订单 #W1000002：Electric Kettle（1.5L）目前没有货。"
    assert ask_for(missing, "en") == missing["question"] == \
        "Order #W1000002: The Electric Kettle in 1.5L is not available right now."


def test_a_question_kept_before_phrases_existed_is_asked_as_it_was_written() -> None:
    # Given a question waiting in a conversation saved before its phrase was kept, and one whose
    # phrase names a template there is no longer
    old = {"intent": "order_status", "parameter": "order_id", "question": "Which of your orders do you mean?"}
    renamed = {**old, "question_phrase": {"template": "ask_no_longer_there", "fields": {}}}
    # Then each is asked in its English words, in either language, never failing the reply
    assert ask_for(old, "zh") == ask_for(renamed, "zh") == "Which of your orders do you mean?"


def test_an_image_without_an_order_number_lists_the_candidates_in_chinese() -> None:
    entities = _asked("order_status", "where is my order?", None)
    missing = {"intent": "order_status", "parameter": "order_id", "from_image": True,
               "question": entities["question"], "question_phrase": entities["question_phrase"]}
    reply = ask_for(missing, "zh")
    assert reply.startswith("我没能从图片中读出订单号或物流单号。请问是您的哪个订单：#W1000001（")
    assert english_words(reply) == []


def test_a_product_not_bought_is_said_and_its_orders_listed_in_chinese() -> None:
    from csagent.understanding_local import orders_of_its_kind

    catalogue = [{"product_id": KETTLE, "name": "Electric Kettle", "category": "Kitchen"},
                 {"product_id": "p-tea", "name": "Tea Kettle", "category": "Kitchen"},
                 {"product_id": BOOTS, "name": "Hiking Boots", "category": "Footwear"}]
    # When the customer asks about a Tea Kettle, their kitchen products being electric kettles
    entities = orders_of_its_kind({"not_bought": ["Tea Kettle"]}, _store(), catalogue)
    # Then the English reads as before, and the Chinese names the product and the orders
    assert entities["question"] == (
        "I don't see the Tea Kettle in your orders. Your orders with kitchen: #W1000001 (Electric Kettle, "
        "Hiking Boots, delivered); #W1000002 (Electric Kettle, pending). Which one do you mean?")
    chinese = render_phrase(entities["question_phrase"], "zh")
    assert chinese.startswith("在您的订单中没有找到 Tea Kettle。")
    assert english_words(chinese.replace("Tea Kettle", "").replace("kitchen", "")) == []
