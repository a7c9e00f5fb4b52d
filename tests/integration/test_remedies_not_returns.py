"""Writes nobody asked for, through the real HTTP API on the tau-retail store (issue 12): a demand
for a remedy that names no return ("deal with it", "a new one that works, not a refund") proposes
no return (the team's remedy, a replacement, goes to a person); a change weighed ("just asking for
now, I haven't made up my mind", "在考虑要不要退"), or asked whether it can be done beside what it
would cost and no word of how to pay, is answered, with the price of the version asked about, not
proposed (a yes then proposes it); an exchange whose new size comes only with another colour or
material asks which, instead of picking one; and, after one question answered for two orders,
"the electric one" picks one of them (and is asked the same question). Five of these failed before
this stop's changes (the weighed exchange, the priced change, the weighed return, the new size and
"the electric one", which a development conversation in other words saw refused as out of scope).
Three pass before too and stand as controls: the demand above (no return proposed then either, in
these words; a development conversation in other words was), the replacement demanded (handed
over), and money back asked for "not a swap" (a return).

The messages are written for these tests (none is a development conversation's)."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import reply_text as _text
from api_support import say_each

from csagent.requests import REQUEST_OF

pytestmark = pytest.mark.integration

WRITES = frozenset(REQUEST_OF)  # every write a request can propose


def turns(client: Any, customer: str, *texts: str) -> list[dict[str, Any]]:
    return say_each(client, customer, *texts, prefix="remedies")


def _writes(turn: dict[str, Any]) -> list[str]:
    return [t["task_type"] for t in turn.get("tasks") or [] if t.get("task_type") in WRITES]


def test_a_demand_that_names_no_return_proposes_none(tau_api: Any) -> None:
    _, _, client = tau_api
    # daiki_moore_8567 has one Bluetooth Speaker, in #W7766102 (delivered)
    [turn] = turns(client, "daiki_moore_8567",
                   "My bluetooth speaker has crackled at every volume since the day it came. Honestly it's "
                   "rubbish and I expect you to deal with it.")
    assert turn["status"] != "awaiting_confirmation" and not _writes(turn), turn
    assert "#W7766102" in _text(turn), _text(turn)


def test_a_new_one_demanded_instead_of_money_back_goes_to_the_team(tau_api: Any) -> None:
    _, _, client = tau_api
    # emma_santos_9753 has one Bluetooth Speaker, in #W1539823 (delivered)
    [turn] = turns(client, "emma_santos_9753",
                   "The speaker I got from you stopped charging after a week. I don't want a refund, I want "
                   "a replacement that actually works, sort it out.")
    assert turn["status"] == "handed_off" and not _writes(turn), turn


def test_an_exchange_weighed_is_answered_with_the_price_of_the_version_asked_about(tau_api: Any) -> None:
    _, _, client = tau_api
    # ethan_moore_3587: #W7156413 (delivered) holds a red 10-hour Bluetooth Speaker ($315.20); the
    # blue 20-hour one without water resistance is $271.89
    [turn] = turns(client, "ethan_moore_3587",
                   "Could I exchange my bluetooth speaker for the blue one with 20 hours battery, no water "
                   "resistance? What would the difference be? Just asking for now, I haven't made up my "
                   "mind.")
    assert turn["status"] == "answered" and not _writes(turn), turn
    assert "271.89" in _text(turn), _text(turn)


def test_a_change_asked_with_its_price_is_priced_then_proposed_on_a_yes(tau_api: Any) -> None:
    _, _, client = tau_api
    # mei_gonzalez_4785: #W2052757 (pending) holds an A5 soft cover Notebook ($28.59); the A4 soft
    # cover one is $29.28
    first, second = turns(client, "mei_gonzalez_4785",
                          "Would it be possible to switch my notebook to the A4 size before it ships? "
                          "And how much more would that cost?", "ok go ahead with that")
    assert first["status"] == "answered" and not _writes(first), first
    assert "29.28" in _text(first), _text(first)
    assert second["status"] == "awaiting_confirmation" and _writes(second) == ["modify_items"], second
    assert "A4" in _text(second), _text(second)


def test_a_return_weighed_in_chinese_is_answered_not_proposed(tau_api: Any) -> None:
    _, _, client = tau_api
    # ethan_moore_3587: the speaker's order #W7156413 is delivered
    [turn] = turns(client, "ethan_moore_3587", "我在考虑要不要把那个蓝牙音箱退了。如果退的话，钱会退到哪里？")
    assert turn["status"] == "answered" and not _writes(turn), turn


def test_a_new_size_that_changes_something_else_asks_which(tau_api: Any) -> None:
    _, _, client = tau_api
    # mei_gonzalez_4785: #W7303089 (delivered) holds a large brown memory foam Pet Bed; the small ones
    # are brown polyester ($208.32) and grey fleece ($182.48)
    [turn] = turns(client, "mei_gonzalez_4785",
                   "the pet bed is way too big for my puppy, could I exchange it for a small one?")
    assert turn["status"] == "needs_clarification" and not _writes(turn), turn
    assert "polyester" in _text(turn) and "fleece" in _text(turn), _text(turn)


def test_after_one_answer_for_two_orders_the_electric_one_picks_one(tau_api: Any) -> None:
    _, _, client = tau_api
    # liam_ahmed_6523: a Tea Kettle in #W7534214 and an Electric Kettle in #W1558044, both pending;
    # "my kettle" is both, and both are answered
    first, second = turns(client, "liam_ahmed_6523", "is my kettle shipped yet?",
                          "the electric one, its a gift for my sister in jacksonville")
    assert first["status"] == "answered", first
    assert "#W7534214" in _text(first) and "#W1558044" in _text(first), _text(first)
    assert second["status"] == "answered", second
    assert "#W1558044" in _text(second) and "#W7534214" not in _text(second), _text(second)
    assert "pending" in _text(second), _text(second)


def test_control_money_back_not_a_swap_is_a_return(tau_api: Any) -> None:
    _, _, client = tau_api
    # ethan_moore_3587: the Luggage Set is in #W7156413 (delivered)
    [turn] = turns(client, "ethan_moore_3587",
                   "The luggage set takes up half my closet. I just want my money back on it, not a swap.")
    assert turn["status"] == "awaiting_confirmation" and _writes(turn) == ["return_items"], turn
