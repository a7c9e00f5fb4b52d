"""Words that change nothing: a statement checked with "correct?", a habit told ("I always forget to
change that field"), a wish to keep things as they are, an idiom of possibility ("is there any way
to ...") that points at the customer's own thing (pure functions; no I/O)."""

from __future__ import annotations

import pytest

from csagent.graph.nodes.route import _keeps_it_as_is
from csagent.nlp.entities.questions import is_general_question
from csagent.nlp.speech_acts import asks_for_change, keeps_as_is
from csagent.understanding import asked_change


def test_a_statement_checked_with_a_tag_question_keeps_no_change_for_a_later_yes() -> None:
    checked = {"intent": "change_order_address", "text": "Order #W1 is going to Pine Lane and not to my home "
               "on Broadway, correct?", "entities": {"order_id": "#W1", "asks_for_change": False,
                                                     "address": {"address1": "592 Broadway"}}}
    asked = {"intent": "return_request", "text": "if I send back the bottle, how much do I get back?",
             "entities": {"order_id": "#W1", "asks_for_change": False, "item_ids": ["b-1"]}}
    assert asked_change([checked]) is None
    kept = asked_change([asked])
    assert kept is not None and kept["intent"] == "return_request"


def test_a_change_the_customer_forgets_to_make_is_told_not_asked() -> None:
    assert not asks_for_change("I always forget to change that field")
    assert not asks_for_change("one of my orders is headed to my old apartment, I forgot to update it")
    assert asks_for_change("please change the address on my order to 5 Main St")


def test_keeping_everything_as_it_is_changes_nothing() -> None:
    assert keeps_as_is("Phew, 10 is right! Don't change anything then, that's all I needed.")
    assert keeps_as_is("Hmm, you know what, I'll keep the mountain bike after all. Don't change anything.")
    # a part after a comma keeps it too, and the route hears it whatever the reply before asked
    assert _keeps_it_as_is("oh ok thats my moms place, leave it like that then")
    assert not _keeps_it_as_is("oh ok thats my moms place, send it to my place instead")


def test_an_idiom_of_possibility_is_no_thing_a_later_it_points_back_at() -> None:
    # "is there any way to swap it": the customer's own thing, not a question in general
    assert not is_general_question("Is there any way to swap it for a small in that same red?")
    # a question in general stays one
    assert is_general_question("is there any way to get a refund faster?")
    assert is_general_question("if I return something, is it refunded right away?")


def test_a_question_about_an_order_cancelled_already_reads_it() -> None:
    from csagent.understanding_local import reconsider_intent

    # "what was in the order that got cancelled": what it held, never a cancellation asked for
    assert reconsider_intent("cancel_order", "order_items", "what was in the order that got cancelled", {},
                             names_order=False) == "order_items"
    assert reconsider_intent("cancel_order", "order_items", "please cancel the order with the lamp", {},
                             names_order=False) == "cancel_order"


def test_an_order_id_with_too_asks_the_last_question_again() -> None:
    from csagent.nlp.speech_acts import is_elliptical

    assert is_elliptical("#W3137176 too", ["#W3137176"])
    assert is_elliptical("and the lamp one as well", ["lamp"])
    assert not is_elliptical("cancel #W3137176 too", ["#W3137176"])


def test_a_list_including_some_statuses_lists_every_order() -> None:
    from csagent.planning import _status_filter

    assert _status_filter("list every order I've placed, including any old or cancelled ones") == {}
    assert _status_filter("list my cancelled orders") == {"status": "cancelled"}


def test_where_the_difference_goes_beside_an_item_change_is_part_of_it() -> None:
    from csagent.planning import _details_of_a_change

    change = {"intent": "change_items", "text": "I'd like the laptop upgraded to 32GB",
              "entities": {"order_id": "#W1"}}
    assert _details_of_a_change("policy_question", "If it works out cheaper, please refund the difference to "
                                "my gift card", {"order_id": "#W1"}, [change])
    # a question about the rule stays one
    assert not _details_of_a_change("policy_question", "can the difference go to a gift card?", {}, [change])


def test_money_back_with_the_swap_ruled_out_is_a_return() -> None:
    from csagent.understanding_local import reconsider_intent

    said = "I've decided I just want my money back on the boots, not a swap"
    read = reconsider_intent("change_items", "return_request", said, {}, names_order=False)
    assert read == "return_request"
    swapped = "can I exchange them and get the difference refunded"
    read = reconsider_intent("change_items", "return_request", swapped, {}, names_order=False)
    assert read == "change_items"


def test_an_unsure_product_question_asking_for_another_item_is_the_item_change() -> None:
    from csagent.nlp.intents import IntentPrediction
    from csagent.understanding_local.folds import requests_after_statements

    said = "lemme switch em to the black ones w brown lenses, plastic frame is cool"
    read = IntentPrediction(intent="product_info", confidence=0.527, runner_up="change_items",
                            runner_up_score=0.43, lang="en", source="embedding", probability=0.39)
    assert requests_after_statements([said], [read], None)[0].intent == "change_items"
    asked = "do the black ones come with brown lenses?"
    assert requests_after_statements([asked], [read], None)[0].intent == "product_info"


def test_an_option_named_by_the_unit_its_values_are_counted_in() -> None:
    from csagent.understanding_local import _names_an_option

    catalogue = [{"product_id": "cm", "name": "Coffee Maker",
                  "options": {"capacity": ["1 cup", "2 cups", "8 cups"], "color": ["black", "white"]}}]
    maker = [{"product_id": "cm", "name": "Coffee Maker"}]
    assert _names_an_option("W3025991 - how many cups does the coffee maker do", maker, catalogue)
    assert _names_an_option("what capacity is my coffee maker", maker, catalogue)
    assert not _names_an_option("how do i descale the coffee maker", maker, catalogue)


def test_a_no_of_something_else_opens_no_refusal() -> None:
    from csagent.graph.nodes.route import _opens_with_no

    assert not _opens_with_no("No question today, I just wanted to say the boots are fantastic. Thanks!")
    assert not _opens_with_no("ngl i dont even use the smartwatch, wanna send it back lol")
    assert _opens_with_no("hmm no, leave it")
    assert _opens_with_no("no, don't change it")


@pytest.mark.parametrize(("text", "asks"), [
    ("i still want the skateboard in it changed to the 34 inch one", True),  # "still" inside "I want"
    ("I also want the lamp sent back", True),
    ("I still want it", False),  # keeping what was bought
    ("如果我把那套化妆品退掉，能退给我多少钱？", False),  # a change supposed, what follows asked
    ("要是我换成黑色的，要补多少钱？", False),
    ("如果可以的话，能帮我取消吗？", True),  # "if possible" only softens the request
])
def test_a_change_asked_for_or_only_supposed(text: str, asks: bool) -> None:
    assert asks_for_change(text) is asks


@pytest.mark.parametrize(("text", "declines"), [
    ("don't cancel my sunglasses order or anything, just swap the headphones in it", False),  # narrower
    ("dont cancel it, only return the lamp", False),
    ("don't cancel it, just tell me where it is", True),  # no other change asked
    ("dont cancel it, i will return it later", True),  # told, not asked
])
def test_a_change_ruled_out_beside_another_asked_for(text: str, declines: bool) -> None:
    from csagent.nlp.speech_acts import declines_change

    assert declines_change(text) is declines
