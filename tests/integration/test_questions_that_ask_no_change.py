"""Messages that name a change without asking for it, through the real HTTP API on the tau-retail
store (issue 12): nothing is proposed for them. A wish denied ("I don't want to lose it") is no
request; "it go to my home address?" asks where an order goes; "I might send the boots back" only
weighs a return; "I don't want a refund, I want the one I ordered" asks for no return; a refund
asked to go to a card the account does not hold asks where it may go; an item told opened in
another sentence than the return's is answered with the rule for opened items; "Can you look what I
really order?" asks to look it up; a shipped order asked to go "to my address" gets the rule; money
asked back for an item that never came gets the rule for missing items, not a return.

The messages are written for these tests (none is a development conversation's), about customers
whose orders make each reading the only right one."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import ask as ask_turn

pytestmark = pytest.mark.integration


def ask(client: Any, customer: str, text: str) -> tuple[str, str]:
    return ask_turn(client, customer, text, None, prefix="nochange")


def test_a_wish_denied_beside_a_gift_card_question_proposes_no_cancellation(tau_api: Any) -> None:
    _, _, client = tau_api
    # chen_ahmed_3232: a gift card, one pending order (#W8268544) and one delivered
    status, reply = ask(client, "chen_ahmed_3232",
                        "hi, my gift card, it have end date? I have small money on it and I don't want "
                        "to lose it.")
    assert status != "awaiting_confirmation", reply
    assert "Cancel order" not in reply, reply


def test_asking_whether_an_order_goes_to_the_home_address_changes_nothing(tau_api: Any) -> None:
    _, _, client = tau_api
    # ivan_kim_7727: #W6443279 (pending) ships to 626 Spruce Street; the account's: 712 Chestnut Street
    status, reply = ask(client, "ivan_kim_7727",
                        "my order #W6443279, it go to my home address? I think I saw other address "
                        "when I order")
    assert status == "answered", reply
    assert "626 Spruce Street" in reply, reply


def test_a_return_only_weighed_gets_its_figures_not_a_proposal(tau_api: Any) -> None:
    _, _, client = tau_api
    # isabella_sanchez_2068: #W1713682 delivered, the Hiking Boots at $244.34
    status, reply = ask(client, "isabella_sanchez_2068", "I'm keeping the rest of that delivery, but I "
                        "might send the hiking boots back. What would the refund for only them be? "
                        "It's order #W1713682.")
    assert status == "answered", reply
    assert "244.34" in reply, reply


def test_money_back_ruled_out_for_a_wrong_item_is_no_return(tau_api: Any) -> None:
    _, _, client = tau_api
    # yara_li_8961: #W2497857 delivered (Luggage Set, Smart Watch)
    status, reply = ask(client, "yara_li_8961", "I opened the box from #W2497857 and the smart watch is the "
                        "wrong one, a silver one, but I ordered gold. Honestly I don't want my money back, I "
                        "just want the watch I actually ordered.")
    assert status != "awaiting_confirmation", reply
    assert "Return from" not in reply, reply


def test_a_refund_asked_onto_a_card_not_on_the_account_asks_where_it_may_go(tau_api: Any) -> None:
    _, _, client = tau_api
    # ivan_santos_6635: PayPal only; #W6893533 delivered (Garden Hose, Wireless Earbuds), paid with it
    status, reply = ask(client, "ivan_santos_6635", "I'd like to return the garden hose from #W6893533, "
                        "never used. Could the refund go to a new Visa I'm getting rather than the PayPal "
                        "I paid with?")
    assert status != "awaiting_confirmation", reply
    assert "original payment method" in reply and "PayPal" in reply, reply


def test_an_item_told_opened_in_another_sentence_gets_the_rule(tau_api: Any) -> None:
    _, _, client = tau_api
    # isabella_sanchez_2068: #W1713682 delivered, with a Makeup Kit (returned only unopened)
    status, reply = ask(client, "isabella_sanchez_2068", "Hello, I have open the makeup kit from "
                        "#W1713682 but the colour is not for me. Is possible to send it back and get the "
                        "money?")
    assert status == "answered", reply
    assert "unopened" in reply, reply


def test_asking_to_look_up_what_was_ordered_proposes_no_exchange(tau_api: Any) -> None:
    _, _, client = tau_api
    # fatima_anderson_7445: #W1842597 delivered, Running Shoes in size 9
    status, reply = ask(client, "fatima_anderson_7445", "The running shoes I receive are size 9, but I think "
                        "I order size 10. Can you look order #W1842597 what I really order?")
    assert status == "answered", reply
    assert "Exchange in order" not in reply and "size: 9" in reply, reply


def test_a_shipped_orders_address_asked_to_be_the_accounts_gets_the_rule(tau_api: Any) -> None:
    _, _, client = tau_api
    # emma_nguyen_6662: #W9397272 processed (shipped), going to Dallas; the account's address is in Denver
    status, reply = ask(client, "emma_nguyen_6662", "Order #W9397272, why is it going to Dallas? I live in "
                        "Denver. Please change it to my address.")
    assert status == "answered", reply
    assert "can no longer be changed" in reply, reply


def test_money_asked_for_an_item_that_never_came_proposes_no_return(tau_api: Any) -> None:
    _, _, client = tau_api
    # evelyn_wilson_8460: #W8042635 delivered, with two Jigsaw Puzzles
    status, reply = ask(client, "evelyn_wilson_8460", "only one jigsaw puzzle came in #W8042635 and I paid "
                        "for two. send me the other one or give me the money for it back")
    assert status == "answered", reply
    assert "Return from" not in reply and "investigation" in reply, reply
