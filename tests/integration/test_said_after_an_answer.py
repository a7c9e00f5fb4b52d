"""What a customer says after an answer, and what points at another order, through the real HTTP
API on the tau-retail store (issue 12): "and the other camera?" is the other order holding one,
"the other order with a perfume in it too" the same change of another order, "the one that came
on its own" the listed order holding nothing else, "Not the grill one!" any order but the grill's,
and "kill that one pls" the order just found; a change asked of both orders not yet shipped is
proposed for both; a new address written out after an address change was asked about asks for
that change; "No need to change anything. Thanks!" asks nothing; and a return asked about for an
item the store takes back only unopened is answered with that condition (a return proposed, with
it too).

The messages are written for these tests (none is a development conversation's), about customers
whose orders make each reading the only right one."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import ask as ask_turn
from api_support import new_session

pytestmark = pytest.mark.integration


def ask(client: Any, customer: str, text: str, session: str | None = None) -> tuple[str, str]:
    return ask_turn(client, customer, text, session, prefix="after")


def test_the_other_product_after_an_order_is_the_other_order_holding_it(tau_api: Any) -> None:
    _, _, client = tau_api
    session = new_session("after")
    # harper_santos_8115: #W6629830 and #W4941028, both pending, each with a Digital Camera
    status, reply = ask(client, "harper_santos_8115", "wheres #W6629830 at", session)
    assert status == "answered" and "#W6629830" in reply, reply
    status, reply = ask(client, "harper_santos_8115", "and the other camera?", session)
    assert status == "answered", reply
    assert "#W4941028" in reply and "#W6629830" not in reply, reply


def test_an_address_written_out_after_asking_about_the_change_proposes_it(tau_api: Any) -> None:
    _, _, client = tau_api
    session = new_session("after")
    # anya_garcia_3271: #W6436609 pending, shipping to 615 Laurel Lane, Philadelphia
    status, reply = ask(client, "anya_garcia_3271", "is it still possible to change where #W6436609 goes?",
                        session)
    assert status == "answered" and "615 Laurel Lane" in reply, reply
    status, reply = ask(client, "anya_garcia_3271", "22 Walnut Street, Philadelphia PA 19103", session)
    assert status == "awaiting_confirmation", reply
    assert "#W6436609" in reply and "22 Walnut Street" in reply, reply


def test_a_change_ruled_out_beside_thanks_asks_nothing(tau_api: Any) -> None:
    _, _, client = tau_api
    session = new_session("after")
    # anya_garcia_3271 has more than one order
    status, reply = ask(client, "anya_garcia_3271", "which card did I pay #W6436609 with?", session)
    assert status == "answered" and "#W6436609" in reply, reply
    status, reply = ask(client, "anya_garcia_3271",
                        "Great, that's the one I hoped. No need to change anything. Thanks a lot!", session)
    assert status == "answered", reply
    assert "Which of your orders" not in reply, reply


def test_a_return_asked_about_gets_the_condition_the_item_is_taken_back_on(tau_api: Any) -> None:
    _, _, client = tau_api
    # ethan_moore_3587: #W6353188 delivered, a Perfume (taken back only unopened)
    status, reply = ask(client, "ethan_moore_3587",
                        "I haven't opened the perfume from #W6353188. Would I still be able to send it back?")
    assert status == "answered", reply
    assert "unopened" in reply, reply


def test_a_return_proposed_says_the_condition_the_item_is_taken_back_on(tau_api: Any) -> None:
    _, _, client = tau_api
    status, reply = ask(client, "ethan_moore_3587",
                        "please return the perfume from #W6353188 to my visa, it's still sealed")
    assert status == "awaiting_confirmation" and "Return from order #W6353188" in reply, reply
    assert "unopened" in reply, reply


def test_a_change_asked_of_both_orders_not_yet_shipped_is_proposed_for_both(tau_api: Any) -> None:
    _, _, client = tau_api
    # emma_smith_8564: #W2417020 and #W3614011 pending, both to 243 Hillcrest Drive
    status, reply = ask(client, "emma_smith_8564", "Could you please change the shipping address on both "
                        "of my orders that haven't shipped yet to 77 Bay Street, Unit 4, Boston, MA 02110?")
    assert status == "awaiting_confirmation", reply
    assert "#W2417020" in reply and "#W3614011" in reply and "77 Bay Street" in reply, reply


def test_the_order_that_came_on_its_own_is_picked_from_those_listed(tau_api: Any) -> None:
    _, _, client = tau_api
    session = new_session("after")
    # aarav_anderson_8794: #W4316152 holds two Tea Kettles only; #W9311069 a Tea Kettle among others
    status, reply = ask(client, "aarav_anderson_8794", "I want to return my tea kettle", session)
    assert status == "needs_clarification" and "#W4316152" in reply and "#W9311069" in reply, reply
    status, reply = ask(client, "aarav_anderson_8794", "the one that came on its own. keep the other",
                        session)
    assert status == "awaiting_confirmation", reply
    assert "Return from order #W4316152" in reply and "#W9311069" not in reply, reply


def test_the_same_change_of_the_other_order_too(tau_api: Any) -> None:
    _, _, client = tau_api
    # mei_patel_7272: #W9583042 and #W4082615 pending, each with a Perfume
    status, reply = ask(client, "mei_patel_7272", "Cancel #W9583042 please. And the other order with a "
                        "perfume in it too. I don't need any of it anymore.")
    assert status == "awaiting_confirmation", reply
    assert "Cancel order #W9583042" in reply and "Cancel order #W4082615" in reply, reply


def test_the_order_ruled_out_by_its_product_is_not_the_one_changed(tau_api: Any) -> None:
    _, _, client = tau_api
    # evelyn_lopez_5487: #W1890669 (Cycling Helmet) and #W3007862 (Running Shoes, Grill) pending
    status, reply = ask(client, "evelyn_lopez_5487", "Could you cancel my order that hasn't shipped? "
                        "Not the grill one! I ordered it by mistake.")
    assert status == "awaiting_confirmation", reply
    assert "Cancel order #W1890669" in reply and "#W3007862" not in reply, reply


def test_kill_that_one_after_asking_which_order_holds_it_cancels_that_order(tau_api: Any) -> None:
    _, _, client = tau_api
    # olivia_jackson_1219: the Hiking Boots are only in #W3168895 (pending)
    status, reply = ask(client, "olivia_jackson_1219",
                        "which order has the hiking boots? kill that one pls, dont need it anymore")
    assert status == "awaiting_confirmation", reply
    assert "Cancel order #W3168895" in reply, reply


def test_a_cancellation_ruled_out_beside_a_question_keeps_the_order_it_names(tau_api: Any) -> None:
    _, _, client = tau_api
    # evelyn_lopez_5487: the Grill is in #W3007862 (pending) only
    status, reply = ask(client, "evelyn_lopez_5487",
                        "dont cancel my grill order!! just tell me if its shipped yet")
    assert status == "answered" and "#W3007862" in reply, reply


def test_not_the_one_with_another_product_the_other_one_picks_from_those_listed(tau_api: Any) -> None:
    _, _, client = tau_api
    session = new_session("after")
    # aarav_anderson_8794: Tea Kettles in #W4316152 (alone) and #W9311069 (with a Bookshelf)
    status, reply = ask(client, "aarav_anderson_8794", "I want to return my tea kettle", session)
    assert status == "needs_clarification", reply
    status, reply = ask(client, "aarav_anderson_8794",
                        "Not the one that came with the bookshelf - the other one.", session)
    assert status == "awaiting_confirmation" and "Return from order #W4316152" in reply, reply
