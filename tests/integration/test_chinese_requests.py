"""Chinese requests grounded like English ones, through the real HTTP API on the tau-retail store
(issue 12): option words, payment methods and the saved address are read in Chinese (`nlp.gloss`,
`nlp.script.spaced`), and a Chinese question searches the English knowledge base by the English
words it holds. A template that finds nothing answers so, in either language."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from api_support import say

pytestmark = pytest.mark.integration


def test_an_order_sent_to_the_saved_address_in_chinese_is_proposed_and_written(tau_api: Any) -> None:
    from devstack.export import export_store

    driver, _, client = tau_api
    customer, order = "ava_nguyen_6986", "#W7966786"  # pending, with a Bookshelf; default: 743 Elm Avenue
    # Given a Chinese request naming the order by its bookshelf and the address by "默认地址"
    session = f"zh-saved-address-{uuid.uuid4().hex[:8]}"
    first = say(client, customer, session, "有书架的那个订单，麻烦寄到我的默认地址吧")
    # Then the address change of that order to the saved address is proposed
    assert first["status"] == "awaiting_confirmation", first["reply"]["text"]
    assert order in first["reply"]["text"] and "743 Elm Avenue" in first["reply"]["text"]
    # And "好的" writes it
    second = say(client, customer, session, "好的")
    assert second["status"] == "answered", second["reply"]["text"]
    assert export_store(driver)["orders"][order]["address"]["address1"] == "743 Elm Avenue"


def test_a_chinese_colour_wish_proposes_the_exchange_for_that_colour(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a delivered black gaming mouse / When the customer asks for it in white, in Chinese
    turn = say(client, "mei_silva_6882", f"zh-white-mouse-{uuid.uuid4().hex[:8]}",
               "我想把鼠标换成白色的，其他不变")
    # Then the exchange for the white one (same sensor and connectivity, $137.22) is proposed
    assert turn["status"] == "awaiting_confirmation", turn["reply"]["text"]
    assert "#W2640384" in turn["reply"]["text"] and "137.22" in turn["reply"]["text"]


def test_a_payment_method_ruled_out_in_chinese_is_not_the_one_proposed(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a pending order paid by gift card / When the customer says "not the gift card, my Mastercard"
    turn = say(client, "olivia_lopez_9494", f"zh-mastercard-{uuid.uuid4().hex[:8]}",
               "背包那个订单别用礼品卡付了，换成万事达卡")
    # Then paying it with the Mastercard is proposed (the gift card is what it is paid with now)
    assert turn["status"] == "awaiting_confirmation", turn["reply"]["text"]
    assert "#W8955613" in turn["reply"]["text"] and "6976" in turn["reply"]["text"]


def test_a_question_grounding_asks_a_chinese_customer_is_asked_in_chinese(tau_api: Any) -> None:
    _, _, client = tau_api
    # Given a pending order with a 1.5-litre stainless steel Tea Kettle, which comes in 2 litres in
    # three versions (none in stainless steel for an electric stove)
    # When the customer asks in Chinese for the kettle in 2 litres
    turn = say(client, "harper_khan_8862", f"zh-kettle-2l-{uuid.uuid4().hex[:8]}",
               "#W4725115 里的水壶能换成2升的吗？")
    text = turn["reply"]["text"]
    # Then which of them is asked, in Chinese, with the versions and their prices as the catalogue
    # writes them, and no English sentence around them
    assert turn["status"] == "needs_clarification", text
    assert "订单 #W4725115" in text and "您想要哪一个" in text, text
    assert "$91.78" in text and "2 liters" in text, text
    assert not re.search(r"\b(?:Order|Several|versions|which|want|Available|the)\b", text), text


def test_a_chinese_warranty_question_is_answered_from_the_english_documents(tau_api: Any) -> None:
    _, _, client = tau_api
    turn = say(client, "daiki_kim_2165", f"zh-warranty-{uuid.uuid4().hex[:8]}", "耳机的质保是多长时间？")
    assert turn["status"] == "answered", turn["reply"]["text"]
    assert "1 year" in turn["reply"]["text"]


def test_a_gift_card_balance_asked_without_a_gift_card_says_there_is_none(tau_api: Any) -> None:
    _, _, client = tau_api
    turn = say(client, "noah_wilson_5178", f"no-gift-card-{uuid.uuid4().hex[:8]}",
               "what's the balance on my gift card?")
    assert "There is no gift card on your account" in turn["reply"]["text"], turn["reply"]["text"]
