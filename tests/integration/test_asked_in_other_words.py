"""Requests in words the examples hold less of, through the real HTTP API on the tau-retail store
(issue 12): in Chinese, "退掉" sends items back whatever colours describe them, "多久换一次" asks how
often, "我的订单都" asks about every order, "颜色和材质都不变" keeps those options and "英尺" is feet;
a statement beside "someone who can actually do something" does not outweigh the request for a
person; a cancellation only weighed, then "if I did, how much would I get back?", is answered with
the amount, with no question of why.

The messages are written for these tests (none is a development conversation's), about customers
whose orders make each reading the only right one."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import ask as ask_turn
from api_support import new_session, say

pytestmark = pytest.mark.integration


def ask(client: Any, customer: str, text: str) -> tuple[str, str]:
    return ask_turn(client, customer, text, None, prefix="words")


def test_tuidiao_sends_the_items_back_whatever_colours_describe_them(tau_api: Any) -> None:
    _, _, client = tau_api
    # liam_muller_2272: #W6818211 (delivered) holds a blue Cycling Helmet and a black Laptop; a gift card
    status, reply = ask(client, "liam_muller_2272",
                        "我想把蓝色的头盔和那台黑色的笔记本电脑一起退掉，钱退回礼品卡就行。")
    assert status == "awaiting_confirmation", reply
    assert "#W6818211" in reply and "退货" in reply and "换货" not in reply, reply
    assert "219.88" in reply and "2701.89" in reply, reply


def test_how_often_a_part_is_replaced_asks_no_change(tau_api: Any) -> None:
    _, _, client = tau_api
    # sofia_li_9219: one Air Purifier, in #W8855135 (pending)
    status, reply = ask(client, "sofia_li_9219", "我买的空气净化器，滤网多久需要换一次？")
    assert status == "answered", reply
    assert "换成" not in reply, reply


def test_every_order_asked_about_in_chinese_lists_them_all(tau_api: Any) -> None:
    _, _, client = tau_api
    # emma_smith_8564: three orders (#W5605613 delivered, #W2417020 and #W3614011 pending)
    status, reply = ask(client, "emma_smith_8564", "我的订单现在都到哪一步了？")
    assert status == "answered", reply
    assert all(order in reply for order in ("#W5605613", "#W2417020", "#W3614011")), reply


def test_options_said_unchanged_in_chinese_stay_and_feet_are_read(tau_api: Any) -> None:
    _, _, client = tau_api
    # mei_kovacs_8020: a Bookshelf (metal, black, 6 ft) in #W7800651 (pending); metal at 4 ft comes
    # in black and brown
    status, reply = ask(client, "mei_kovacs_8020",
                        "我订单里那个黑色的金属书架，我想换成4英尺高的，颜色和材质都不变，差价用PayPal。")
    assert status == "awaiting_confirmation", reply
    assert "(metal, black, 4 ft)" in reply, reply


def test_a_statement_beside_asking_for_someone_does_not_outweigh_it(tau_api: Any) -> None:
    _, _, client = tau_api
    # emma_smith_8564: #W5605613 delivered
    session = new_session("words")
    say(client, "emma_smith_8564", session, "Where exactly did you deliver #W5605613?")
    body = say(client, "emma_smith_8564", session, "That's my OLD address! It's been a week. I want this "
               "investigated by someone who can actually do something.")
    assert body["status"] == "handed_off", body["reply"]["text"]


def test_a_cancellation_only_weighed_then_how_much_is_answered_with_the_amount(tau_api: Any) -> None:
    _, _, client = tau_api
    # harper_thomas_9402: #W7425646 (pending: Yoga Mat, Smart Thermostat), paid $368.15 by Visa
    status, reply = ask(client, "harper_thomas_9402", "I'm weighing up whether to cancel my order with the "
                        "yoga mat and the thermostat. If I did, how much would I get back?")
    assert status == "answered", reply
    assert "368.15" in reply, reply
    assert "why" not in reply, reply
