"""Grounding: the customer's words resolved against their own orders, payment methods and the
catalogue's variants (pure functions, a small hand-made store)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from csagent.domain.actions import PendingAction
from csagent.grounding.frame import ground, pick_candidate, purchase_intent
from csagent.grounding.model import CustomerView, Line, OrderView, PaymentView, Variant
from csagent.grounding.options import find_option_values
from csagent.grounding.resolve import resolve_item_changes, resolve_payment

BOOTS = "p-boots"
KETTLE = "p-kettle"
CHAIR = "p-chair"


def _variants() -> dict[str, tuple[Variant, ...]]:
    boots = tuple(
        Variant(
            f"b-{size}-{material}-{water}",
            {"size": size, "material": material, "waterproof": water},
            100.0 + int(size),
            available=not (size == "9" and material == "synthetic"),
        )
        for size in ("7", "8", "9", "12")
        for material in ("leather", "synthetic")
        for water in ("yes", "no")
    )
    kettles = tuple(
        Variant(f"k-{cap}-{colour}", {"capacity": cap, "color": colour}, 50.0, True)
        for cap in ("1L", "1.5L", "2L")
        for colour in ("black", "white")
    )
    chairs = tuple(
        Variant(f"c-{colour}-{arm}", {"color": colour, "armrest": arm}, 300.0, True)
        for colour in ("black", "blue")
        for arm in ("fixed", "none", "adjustable")
    )
    return {BOOTS: boots, KETTLE: kettles, CHAIR: chairs}


def _line(variant: Variant, product_id: str, name: str) -> Line:
    return Line(variant.item_id, product_id, name, variant.price, dict(variant.options))


def _store() -> CustomerView:
    v = _variants()
    boots = next(x for x in v[BOOTS] if x.item_id == "b-12-leather-yes")
    kettle = next(x for x in v[KETTLE] if x.item_id == "k-1L-white")
    chair_a = next(x for x in v[CHAIR] if x.item_id == "c-black-fixed")
    chair_b = next(x for x in v[CHAIR] if x.item_id == "c-blue-none")
    return CustomerView(
        customer_id="ann",
        orders=(
            OrderView(
                "#W0000001",
                "delivered",
                (_line(boots, BOOTS, "Hiking Boots"), _line(kettle, KETTLE, "Electric Kettle")),
                "card_1",
            ),
            OrderView(
                "#W0000002",
                "pending",
                (_line(chair_a, CHAIR, "Office Chair"), _line(chair_b, CHAIR, "Office Chair")),
                "paypal_1",
            ),
            OrderView("#W0000003", "pending", (_line(kettle, KETTLE, "Electric Kettle"),), "card_1"),
        ),
        payment_methods=(
            PaymentView("card_1", "credit_card", "visa", "1234"),
            PaymentView("paypal_1", "paypal"),
            PaymentView("gift_1", "gift_card", balance=52.0),
        ),
    )


def test_a_size_change_keeps_every_other_option() -> None:
    # Given delivered boots in size 12, leather, waterproof
    order = _store().order("#W0000001")
    assert order is not None
    # When the customer asks for a size 7 in their own words
    changes = resolve_item_changes("the hiking boots in size 12 -> size 7 please", order, _variants())
    # Then the size-7 leather waterproof variant is chosen, and nothing else changes
    assert [(c.line.item_id, c.new.item_id if c.new else None) for c in changes.changes] == [
        ("b-12-leather-yes", "b-7-leather-yes")
    ]


def test_negated_yes_no_option_and_a_kept_dimension() -> None:
    order = _store().order("#W0000001")
    assert order is not None
    changes = resolve_item_changes(
        "swap the boots for synthetic non-waterproof ones, same size", order, _variants()
    )
    assert changes.changes[0].new is not None
    assert changes.changes[0].new.item_id == "b-12-synthetic-no"


def test_an_unavailable_variant_is_a_problem_not_a_guess() -> None:
    order = _store().order("#W0000001")
    assert order is not None
    changes = resolve_item_changes("change the boots to size 9 synthetic", order, _variants())
    assert changes.changes[0].new is None
    assert "not available" in (changes.problems()[0])


@pytest.mark.parametrize(("order_id", "text", "expected"), [
    # the order's only product, pointed at by "it"
    ("#W0000003", "could you change it to the 2L one in black?", [("k-1L-white", "k-2L-black")]),
    # the one product of the order whose options the words name ("synthetic" fits only the boots)
    ("#W0000001", "my walking shoes from leather to synthetic please",
     [("b-12-leather-yes", "b-12-synthetic-yes")]),
])
def test_an_item_named_by_its_options_alone_is_the_one_they_fit(order_id: str, text: str,
                                                                 expected: list[tuple[str, str]]) -> None:
    order = _store().order(order_id)
    assert order is not None
    changes = resolve_item_changes(text, order, _variants())
    assert [(c.line.item_id, c.new.item_id if c.new else None) for c in changes.changes] == expected


def test_options_that_fit_two_products_alike_name_no_item() -> None:
    # Given boots and a kettle, and words naming nothing either has more of than the other
    order = _store().order("#W0000001")
    assert order is not None
    # Then nothing is guessed
    assert resolve_item_changes("change it to the other one please", order, _variants()).changes == ()


@pytest.mark.parametrize("text", ["swap the boots for size 8 rather than size 12",
                                  "I'd like the boots in size 8 instead of size 12"])

def test_what_follows_rather_than_or_instead_of_is_the_item_as_it_is(text: str) -> None:
    order = _store().order("#W0000001")
    assert order is not None
    change = resolve_item_changes(text, order, _variants()).changes[0]
    assert change.new is not None and change.new.item_id == "b-8-leather-yes"


def _helmet_order() -> tuple[OrderView, dict[str, tuple[Variant, ...]]]:
    """A white S helmet with medium ventilation, of a product with no white M in medium."""
    def helmet(size: str, colour: str, vent: str, price: float) -> Variant:
        options = {"size": size, "color": colour, "ventilation": vent}
        return Variant(f"h-{size.lower()}-{colour}-{vent}", options, price, True)

    helmets = (helmet("S", "white", "medium", 180.0), helmet("M", "white", "low", 192.65),
               helmet("M", "blue", "medium", 199.0))
    order = OrderView("#W0000009", "pending", (_line(helmets[0], "p-helmet", "Cycling Helmet"),), "card_1")
    return order, {"p-helmet": helmets}


@pytest.mark.parametrize(("text", "new_item"), [
    # what they keep by name stays; what they did not name may change for it
    ("I want the same white helmet but size M please", "h-m-white-low"),
    ("the cycling helmet in size M, same colour", "h-m-white-low"),
    ("can i change the cycling helmet to a size M? still want white", "h-m-white-low"),
    ("could I swap the cycling helmet for the same one in blue, size M?", "h-m-blue-medium"),  # blue asked
])
def test_options_kept_by_name_stay_and_the_others_may_change(text: str, new_item: str) -> None:
    # ("... size M? still want the white one": a wish to keep, after the change, is no pivot)
    order, variants = _helmet_order()
    change = resolve_item_changes(text, order, variants).changes[0]
    assert change.new is not None and change.new.item_id == new_item


def test_a_value_the_item_already_has_named_in_the_wish_is_kept() -> None:
    # Given a white S helmet in medium, and an M in white (low) and an M in blue (medium) on sale
    order, variants = _helmet_order()
    # When the wish names the new size beside the colour it already has
    wish = "swap the cycling helmet for the white one in size M"
    change = resolve_item_changes(wish, order, variants).changes[0]
    # Then the white M is chosen, though the blue M keeps as many of the other options
    assert change.new is not None and change.new.item_id == "h-m-white-low"


def test_no_variant_with_what_they_keep_by_name_is_the_answer_not_another_offer() -> None:
    order, variants = _helmet_order()
    # "size M, same ventilation": the only M in medium is blue; the colour was not kept by name
    change = resolve_item_changes("the helmet in size M, same ventilation", order, variants).changes[0]
    assert change.new is not None and change.new.item_id == "h-m-blue-medium"
    # "in blue, same size": there is no blue S, so no blue M is offered in its place
    change = resolve_item_changes("the cycling helmet in blue, same size", order, variants).changes[0]
    assert change.new is None and not change.options
    assert change.problem is not None and "not available" in change.problem


def test_the_same_item_again() -> None:
    order = _store().order("#W0000001")
    assert order is not None
    changes = resolve_item_changes("exchange the kettle for the exact same one", order, _variants())
    assert changes.changes[0].new is not None and changes.changes[0].new.item_id == "k-1L-white"


def test_an_item_only_mentioned_is_not_changed() -> None:
    # "only the kettle, not the boots": the boots are named but not asked to change
    order = _store().order("#W0000001")
    assert order is not None
    changes = resolve_item_changes("only the kettle: make it 2L. not the boots", order, _variants())
    assert [(c.line.product_id, c.new.item_id if c.new else None) for c in changes.changes] == [
        (KETTLE, "k-2L-white")
    ]


@pytest.mark.parametrize("text", [
    "the kettle that's coming with my boots - I want the black one instead",
    "the kettle I ordered along with the hiking boots, make it black please",
    "in my order with the boots there is a white kettle. Could you change it to black?",
])
def test_a_product_that_only_says_which_order_is_not_an_item_to_change(text: str) -> None:
    # Given an order of boots and a kettle, and words naming the boots only to say which order
    order = _store().order("#W0000001")
    assert order is not None
    # When the item changes are read
    changes = resolve_item_changes(text, order, _variants())
    # Then the kettle changes, with the wish said after the boots; the boots are not asked about
    assert [(c.line.product_id, c.new.item_id if c.new else None) for c in changes.changes] == [
        (KETTLE, "k-1L-black")
    ]


def test_two_of_the_same_product_told_apart_by_their_options() -> None:
    order = _store().order("#W0000002")
    assert order is not None
    changes = resolve_item_changes(
        "the blue office chair with no armrests, I want adjustable armrests instead", order, _variants()
    )
    assert [(c.line.item_id, c.new.item_id if c.new else None) for c in changes.changes] == [
        ("c-blue-none", "c-blue-adjustable")
    ]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("put it on my PayPal", "paypal_1"),
        ("the visa ending in 1234", "card_1"),
        ("use my gift card", "gift_1"),
        ("my gift card, not PayPal", "gift_1"),
        ("the original payment method", "card_1"),
        # a wish denied a few words before a method rules it out
        ("I do NOT want the money going back on that Visa. Put it on my gift card.", "gift_1"),
        ("i dont want to use my paypal for this, the visa please", "card_1"),
    ],
)
def test_payment_methods_in_the_customers_words(words: str, expected: str) -> None:
    store = _store()
    choice = resolve_payment(words, store, store.order("#W0000001"))
    assert choice.method is not None and choice.method.payment_method_id == expected


def test_no_payment_named_is_not_guessed() -> None:
    assert resolve_payment("please change it", _store()).method is None


def test_one_order_with_the_product_is_found_without_an_id() -> None:
    # Given one order with boots
    entities = ground("order_status", "where are my hiking boots", {}, _store(), _variants())
    # Then it is used, and the reply may name it
    assert entities["order_id"] == "#W0000001"
    assert entities["grounded_orders"] == ["#W0000001"]


def test_what_follows_a_contrast_is_what_the_clause_is_about() -> None:
    # "the boots came fine but where is my office chair?": the chair's order, not the boots'
    entities = ground("order_status", "the hiking boots came fine but where is my office chair??", {},
                      _store(), _variants())
    assert entities["order_id"] == "#W0000002"


def test_a_return_on_a_found_order_naming_no_item_asks_which() -> None:
    entities = ground("return_request", "i want to send something back from #W0000001",
                      {"order_id": "#W0000001"}, _store(), _variants())
    assert "item_ids" not in entities
    assert "Which items of order #W0000001" in entities["question"]
    assert "Hiking Boots" in entities["question"] and "Electric Kettle" in entities["question"]


@pytest.mark.parametrize(("text", "kind"), [
    ("take the office chair out of my pending order, keep the rest", "removal"),
    # an option word beside the removal ("blue") asks for no change to it
    ("remove only the blue office chair from my pending order and keep everything else", "removal"),
    ("can you add a second office chair to my pending order", "addition"),
    # one more of an item, which the words read as that same item again
    ("Could I add another one of those electric kettles to order #W0000003?", "addition"),
    ("change the office chair in my pending order to the blue one", None),
])
def test_an_item_taken_out_or_added_is_no_change_of_options(text: str, kind: str | None) -> None:
    order_id = "#W0000003" if "#W0000003" in text else "#W0000002"
    entities = ground("change_items", text, {"order_id": order_id}, _store(), _variants())
    assert entities.get("not_an_option_change") == kind


def test_a_thing_put_into_an_order_is_an_addition_whether_or_not_the_catalogue_has_it() -> None:
    from csagent.grounding.frame import adds_or_removes_an_item

    # "a lock" is no product of the catalogue, but it is put into the order named
    assert adds_or_removes_an_item("Can you add a lock to that order before it goes out?",
                                   {"order_id": "#W0000002"}, _store())
    assert not adds_or_removes_an_item("Can you tell me what is in that order?", {"order_id": "#W0000002"},
                                       _store())


def test_several_orders_are_listed_back() -> None:
    entities = ground("order_status", "where is my electric kettle", {}, _store(), _variants())
    assert "order_id" not in entities
    assert entities["order_candidates"] == ["#W0000001", "#W0000003"]
    assert "#W0000001" in entities["question"] and "#W0000003" in entities["question"]


def test_the_status_an_action_needs_picks_the_order() -> None:
    # A return needs a delivered order: of the two orders with a kettle, only one is delivered
    entities = ground("return_request", "return the electric kettle", {}, _store(), _variants())
    assert entities["order_id"] == "#W0000001"


def test_an_item_change_is_an_exchange_on_a_delivered_order() -> None:
    entities = ground(
        "change_items",
        "exchange the kettle on #W0000001 for the black one, PayPal for the difference",
        {"order_id": "#W0000001"},
        _store(),
        _variants(),
    )
    assert entities["item_action"] == "exchange_items"
    assert entities["item_ids"] == ["k-1L-white"] and entities["new_item_ids"] == ["k-1L-black"]
    assert entities["payment_method_id"] == "paypal_1"


def test_an_item_change_is_a_modification_on_a_pending_order() -> None:
    entities = ground(
        "change_items",
        "change the kettle to 2L, visa ending 1234",
        {"order_id": "#W0000003"},
        _store(),
        _variants(),
    )
    assert entities["item_action"] == "modify_items"
    assert entities["new_item_ids"] == ["k-2L-white"]


def test_an_item_change_naming_no_payment_settles_the_difference_through_the_orders_own_method() -> None:
    # Given a pending order paid by Visa, and a change that names no payment method
    entities = ground("change_items", "change the kettle to 2L please", {"order_id": "#W0000003"},
                      _store(), _variants())
    # Then the proposal uses the order's own card (which the confirmation names), nothing is asked
    assert entities["payment_method_id"] == "card_1" and "question" not in entities


def test_a_gift_card_short_of_the_difference_is_no_default_the_customer_chooses() -> None:
    store = _store()
    pricey = tuple(replace(v, price=200.0) if v.item_id == "k-2L-white" else v for v in _variants()[KETTLE])
    order = replace(store.order("#W0000003"), paid_with="gift_1")  # $52 left, $150 to pay
    store = replace(store, orders=(order,))
    entities = ground("change_items", "change the kettle to 2L please", {"order_id": "#W0000003"},
                      store, {**_variants(), KETTLE: pricey})
    assert "payment_method_id" not in entities
    assert entities["question"].startswith("Which payment method should pay or receive the price difference")


@pytest.mark.parametrize("text", [
    "can the helmet be changed to blue or black, whichever you have, with the same ventilation and size?",
    "the cycling helmet in M in the exact same colour and ventilation",
])
def test_dimensions_kept_by_name_hold_for_every_choice_and_none_fitting_is_said(text: str) -> None:
    # Given a white S helmet (medium) and no M nor S in white-medium or blue-S-medium
    order, variants = _helmet_order()
    change = resolve_item_changes(text, order, variants).changes[0]
    # Then no variant that changes what they kept is proposed: that none fits is the answer
    assert change.new is None and not change.options and change.problem


def test_a_value_named_in_the_wish_as_the_item_has_it_is_required_not_a_tie_breaker() -> None:
    # Given a red XL tee, and no red M (a blue M keeps the other options)
    def tee(size: str, colour: str) -> Variant:
        return Variant(f"t-{size}-{colour}", {"color": colour, "size": size, "fit": "crew"}, 40.0, True)

    tees = (tee("XL", "red"), tee("M", "blue"), tee("L", "red"))
    order = OrderView("#W0000010", "delivered", (_line(tees[0], "p-tee", "T-Shirt"),), "card_1")
    # When the wish asks for an M in red
    wish = "can I swap the t-shirt for an M in red?"
    change = resolve_item_changes(wish, order, {"p-tee": tees}).changes[0]
    # Then the blue M is not proposed in its place
    assert change.new is None and change.problem == "The T-Shirt does not come in red, M."


def test_a_possessive_purchase_is_not_a_catalogue_question() -> None:
    assert (
        purchase_intent(
            "product_availability", "order_status", "why hasn't my hiking boots shipped", _store()
        )
        == "order_status"
    )
    assert (
        purchase_intent("product_availability", "order_status", "do you sell hiking boots", _store())
        == "product_availability"
    )


def test_option_words_come_from_the_values() -> None:
    hits = find_option_values(
        "the 1.5 L one in black", {"capacity": ["1L", "1.5L", "2L"], "color": ["black", "white"]}
    )
    assert [(h.key, h.value) for h in hits] == [("capacity", "1.5L"), ("color", "black")]


def test_an_ip_rating_is_named_in_everyday_words() -> None:
    # "the waterproof ones" of earbuds rated IPX4 / IPX7: the IPX7 (submersible) ones
    dims = {"water resistance": ["IPX4", "IPX7", "not resistant"], "color": ["black", "white"]}
    hits = find_option_values("can i swap my black earbuds for the waterproof ones?", dims)
    assert [(h.key, h.value) for h in hits] == [("color", "black"), ("water resistance", "IPX7")]
    hits = find_option_values("the sweat resistant white ones", dims)
    assert [(h.key, h.value) for h in hits] == [("water resistance", "IPX4"), ("color", "white")]


def test_a_range_names_its_option_without_the_unit() -> None:
    weights = {"weight range": ["5-25 lbs", "30-50 lbs", "55-75 lbs"]}
    assert [h.value for h in find_option_values("the 30-50 one", weights)] == ["30-50 lbs"]
    # A bare number is no "10 hours": only a range says enough without its unit
    assert find_option_values("size 10 please", {"battery life": ["10 hours", "8 hours"]}) == []


def test_feet_and_foot_name_the_ft_of_an_option() -> None:
    lengths = {"length": ["25ft", "50ft", "100ft"]}
    assert [h.value for h in find_option_values("the hose in 100 feet", lengths)] == ["100ft"]
    heights = {"height": ["4 ft", "5 ft", "6 ft"]}
    assert [h.value for h in find_option_values("the five-shelf... no, the 5 foot one", heights)] == ["5 ft"]


def test_products_each_in_an_order_of_their_own_ask_about_each_order() -> None:
    # Given boots only in #W0000001 and office chairs only in #W0000002
    entities = ground("order_status", "where are the hiking boots and the office chair?", {}, _store(),
                      _variants(), "where are the hiking boots and the office chair?")
    # Then both orders are asked about, not "which one do you mean?"
    assert entities["order_ids"] == ["#W0000001", "#W0000002"]
    assert "question" not in entities


def test_options_named_elsewhere_in_the_message_tell_the_orders_apart() -> None:
    # Given kettles in two orders, the white 1L in both: the black one is in neither
    text, message = "has the electric kettle shipped yet?", "has the electric kettle shipped yet? the 1L one"
    entities = ground("order_status", text, {}, _store(), _variants(), message)
    assert entities.get("order_candidates") == ["#W0000001", "#W0000003"]  # nothing tells them apart


@pytest.mark.parametrize(("text", "expected"), [
    ("has the black 2L electric kettle shipped?", "#W0000006"),
    ("has the white 2L electric kettle shipped?", "#W0000007"),
    ("has the 2L electric kettle shipped?", None),  # two orders hold a 2L one: asked
])
def test_the_item_with_the_most_options_named_is_the_one_meant(text: str, expected: str | None) -> None:
    # Given kettles in three orders: a black 1L, a black 2L, a white 2L
    kettles = {v.item_id: v for v in _variants()[KETTLE]}
    orders = tuple(OrderView(order_id, "pending", (_line(kettles[item], KETTLE, "Electric Kettle"),),
                             "card_1")
                   for order_id, item in (("#W0000005", "k-1L-black"), ("#W0000006", "k-2L-black"),
                                          ("#W0000007", "k-2L-white")))
    store = replace(_store(), orders=orders)
    # When the customer names the kettle by two of its options
    entities = ground("order_status", text, {}, store, _variants())
    # Then the order whose kettle has both is the one meant, not every order with one of them
    assert entities.get("order_id") == expected
    if expected is None:
        assert entities["order_candidates"] == ["#W0000006", "#W0000007"]


def test_a_clause_pointing_back_is_about_the_product_named_before_it() -> None:
    # Given a message naming the office chair, then asking of "that", then naming the boots
    message = ("The office chair has been great but the armrest cracked. Is that covered by the "
               "warranty? And have the hiking boots arrived?")
    # When the clause naming no product is grounded
    entities = ground("warranty", "Is that covered by the warranty?", {}, _store(), _variants(), message)
    # Then "that" is the chair, named before it (its order), not the boots named after it
    assert entities["order_id"] == "#W0000002"


def test_paying_with_one_of_their_methods_is_not_a_new_address() -> None:
    from csagent.grounding.frame import address_intent

    store = _store()
    assert address_intent("change_order_address", "put the order with the boots on my visa instead",
                           store) == "change_payment"
    assert address_intent("change_order_address", "send the boots order to my office instead",
                          store) == "change_order_address"
    assert address_intent("change_order_address", "ship the chair to my visa billing address",
                          store) == "change_order_address"


def test_an_item_pointed_at_by_what_it_is_like_is_the_customers_own() -> None:
    from csagent.grounding.frame import describes_an_owned_item

    store = _store()  # a white 1L electric kettle, no black one
    assert describes_an_owned_item("is the white electric kettle easy to clean?", store)
    assert not describes_an_owned_item("is the black electric kettle easy to clean?", store)
    assert not describes_an_owned_item("is the electric kettle easy to clean?", store)  # nothing told


def test_fixing_the_address_beside_an_order_named_is_that_orders() -> None:
    from csagent.grounding.frame import address_intent

    message = "my order #W0000002 is going to Charlotte!! Fix the address right now please"
    assert address_intent("update_default_address", "Fix the address right now please", _store(),
                          message=message) == "change_order_address"
    message = "cancel #W0000002. and update my address to 12 Main St, Austin, TX 78701"
    assert address_intent("update_default_address", "update my address to 12 Main St, Austin, TX 78701",
                          _store(), message=message) == "update_default_address"


def test_whether_something_shipped_is_asked_of_the_order_that_holds_it() -> None:
    store = _store()
    assert purchase_intent("product_availability", None, "has the office chair shipped yet?", store) \
        == "order_status"
    assert purchase_intent("product_availability", None, "do you have the office chair in blue?", store) \
        == "product_availability"


def test_a_clause_without_a_product_takes_the_one_the_message_names() -> None:
    # Given "The hiking boots. Tracking number please" split in two clauses
    entities = ground(
        "tracking",
        "Tracking number please",
        {},
        _store(),
        _variants(),
        "The hiking boots. Tracking number please",
    )
    # Then the tracking question is about the order with the boots
    assert entities["order_id"] == "#W0000001"


class _Intents:
    """A stand-in classifier: every clause gets the intent its first word names."""

    def classify_many(self, pieces: list[str]) -> list[object]:
        from csagent.nlp.intents import IntentPrediction

        labels = {"where": "order_status", "exchange": "change_items", "return": "return_request"}
        return [
            IntentPrediction(labels.get(p.split()[0].lower(), "out_of_scope"), 0.8, None, 0.0) for p in pieces
        ]


def test_the_local_understanding_grounds_each_clause_in_the_customers_view() -> None:
    from csagent.understanding_local import LocalUnderstanding

    # Given the customer's view and the catalogue's variants wired into the local understanding
    understanding = LocalUnderstanding(
        classifier=_Intents(),
        catalogue=lambda: [],
        customer_view=lambda _customer: _store(),
        variants=_variants,
    )
    # When the customer asks for an exchange in their own words
    result = understanding.understand(
        "exchange the kettle on #W0000001 for the black one, PayPal for the difference",
        {"customer_id": "ann"},
    )
    # Then the clause carries the grounded exchange, ready to propose
    entities = result.clauses[0].entities
    assert (
        entities["item_action"],
        entities["item_ids"],
        entities["new_item_ids"],
        entities["payment_method_id"],
    ) == ("exchange_items", ["k-1L-white"], ["k-1L-black"], "paypal_1")
    assert entities["asks_for_change"] is True


class _StatusIntents(_Intents):
    """Every clause read as an order-status question, as the examples may read a statement."""

    def classify_many(self, pieces: list[str]) -> list:
        from csagent.nlp.intents import IntentPrediction

        return [IntentPrediction("order_status", 0.8, None, 0.0) for _ in pieces]


@pytest.mark.parametrize(("text", "intent"), [
    ("my hiking boots leak water after one walk in the rain", "complaint"),  # delivered: what happened
    ("my office chair hasn't shipped yet", "order_status"),  # pending, and said of the order
    ("my hiking boots", "order_status"),  # too few words to tell of anything
])
def test_a_statement_about_a_delivered_product_tells_what_went_wrong(text: str, intent: str) -> None:
    from csagent.understanding_local import LocalUnderstanding

    catalogue = [{"product_id": BOOTS, "name": "Hiking Boots"}, {"product_id": CHAIR, "name": "Office Chair"},
                 {"product_id": KETTLE, "name": "Electric Kettle"}]
    understanding = LocalUnderstanding(classifier=_StatusIntents(), catalogue=lambda: catalogue,
                                       customer_view=lambda _customer: _store(), variants=_variants)
    result = understanding.understand(text, {"customer_id": "ann"})
    assert result.clauses[0].intent == intent


class _TellThenWarranty(_Intents):
    """A statement read as a complaint, the question after it as a warranty question."""

    def classify_many(self, pieces: list[str]) -> list:
        from csagent.nlp.intents import IntentPrediction

        return [IntentPrediction("warranty" if "warranty" in p else "complaint", 0.8, None, 0.0)
                for p in pieces]


def test_a_question_pointing_back_at_a_statement_carries_what_it_told() -> None:
    from csagent.understanding_local import LocalUnderstanding

    catalogue = [{"product_id": BOOTS, "name": "Hiking Boots"}]
    understanding = LocalUnderstanding(classifier=_TellThenWarranty(), catalogue=lambda: catalogue,
                                       customer_view=lambda _customer: _store(), variants=_variants)
    # Given a statement of what happened to the boots, then a question pointing back at it
    result = understanding.understand(
        "my dog chewed the laces off my hiking boots 💀 does the warranty cover that", {"customer_id": "ann"})
    # Then the question carries the statement, for the documents to be asked with it
    question = result.clauses[-1]
    assert question.intent == "warranty"
    assert question.entities["told"] == "my dog chewed the laces off my hiking boots 💀"
    # And a question naming its own product carries nothing
    result = understanding.understand("my dog chewed the laces off my hiking boots. does the warranty cover "
                                      "the hiking boots?", {"customer_id": "ann"})
    assert "told" not in result.clauses[-1].entities


class _ProductQuestions(_Intents):
    def classify_many(self, pieces: list[str]) -> list:
        from csagent.nlp.intents import IntentPrediction

        return [IntentPrediction("product_info", 0.8, None, 0.0) for _ in pieces]


@pytest.mark.parametrize(("text", "options"), [
    ("ok and how many liters does the large one hold", {"size": "large"}),
    ("How much is the navy one?", {"color": "navy"}),
])
def test_the_one_a_question_describes_by_its_options_is_the_product_just_talked_about(
        text: str, options: dict[str, str]) -> None:
    from csagent.understanding_local import LocalUnderstanding

    catalogue = [{"product_id": "p-pack", "name": "Backpack",
                  "options": {"size": ["small", "medium", "large"], "color": ["grey", "navy", "black"]}}]
    understanding = LocalUnderstanding(classifier=_ProductQuestions(), catalogue=lambda: catalogue,
                                       customer_view=lambda _customer: _store(), variants=_variants)
    # Given a last turn about the backpack, and a question naming no product, only a version of it
    state = {"customer_id": "ann", "memory": {"last_products": ["p-pack"]}}
    entities = understanding.understand(text, state).clauses[-1].entities
    # Then the question is about the backpack, in the version its words name
    assert [(p["product_id"], p["options"]) for p in entities["products"]] == [("p-pack", options)]
    # And without the backpack talked about, or with a value it does not come in, it names none
    assert not understanding.understand(text, {"customer_id": "ann"}).clauses[-1].entities.get("products")
    odd = understanding.understand("How much is the purple one?", state).clauses[-1].entities
    assert not odd.get("products")


class _AddressIntents(_Intents):
    def classify_many(self, pieces: list[str]) -> list:
        from csagent.nlp.intents import IntentPrediction

        return [IntentPrediction("change_order_address", 0.8, None, 0.0) for _ in pieces]


@pytest.mark.parametrize(("text", "intent"), [
    ("请问我的订单会寄到哪个地址？", "order_status"),  # "which address will my order go to?"
    ("请把我的订单改寄到公司", "change_order_address"),  # "please send my order to the office instead"
])
def test_a_chinese_question_where_an_order_goes_changes_nothing(text: str, intent: str) -> None:
    from csagent.understanding_local import LocalUnderstanding

    understanding = LocalUnderstanding(classifier=_AddressIntents(), catalogue=lambda: [],
                                       customer_view=lambda _customer: _store(), variants=_variants)
    assert understanding.understand(text, {"customer_id": "ann"}).clauses[0].intent == intent


class _CancelIntents(_Intents):
    def classify_many(self, pieces: list[str]) -> list:
        from csagent.nlp.intents import IntentPrediction

        return [IntentPrediction("cancel_order" if p.lower().startswith("cancel") else "policy_question",
                                 0.8, None, 0.0) for p in pieces]


def test_a_change_pointing_back_at_another_persons_order_gets_the_rule_not_the_customers_order() -> None:
    from csagent.understanding_local import LocalUnderstanding

    understanding = LocalUnderstanding(classifier=_CancelIntents(), catalogue=lambda: [],
                                       customer_view=lambda _customer: _store(), variants=_variants)
    # Given a message about a kettle on someone else's account, then "cancel it"
    result = understanding.understand("My wife ordered a kettle on her account. Cancel it.",
                                      {"customer_id": "ann"})
    # Then "cancel it" is about her order: the rule, not a cancellation of the customer's own kettle
    last = result.clauses[-1]
    assert (last.intent, last.entities) == ("policy_question", {"another_persons": True})


def test_a_cancellation_of_a_product_in_orders_none_of_which_is_pending_gets_each_orders_rule() -> None:
    from csagent.understanding_local import LocalUnderstanding

    kettle = _variants()[KETTLE][0]
    lines = (_line(kettle, KETTLE, "Electric Kettle"),)
    view = CustomerView(customer_id="ann", orders=(OrderView("#W0000041", "delivered", lines, "card_1"),
                                                    OrderView("#W0000042", "processed", lines, "card_1")))
    understanding = LocalUnderstanding(classifier=_CancelIntents(), catalogue=lambda: [],
                                       customer_view=lambda _customer: view, variants=_variants)
    # Given two orders with a kettle, one delivered and one on its way: whichever is meant, it can no
    # longer be cancelled
    clause = understanding.understand("cancel the electric kettle please", {"customer_id": "ann"}).clauses[0]
    # Then each is answered (its rule), and the customer is not asked which
    assert clause.entities.get("order_ids") == ["#W0000041", "#W0000042"]
    assert "question" not in clause.entities
    # while with a pending one among them, which one is still asked
    pending = CustomerView(customer_id="ann", orders=(OrderView("#W0000041", "delivered", lines, "card_1"),
                                                       OrderView("#W0000043", "pending", lines, "card_1")))
    understanding = LocalUnderstanding(classifier=_CancelIntents(), catalogue=lambda: [],
                                       customer_view=lambda _customer: pending, variants=_variants)
    asked = understanding.understand("cancel the electric kettle please", {"customer_id": "ann"}).clauses[0]
    assert "order_ids" not in asked.entities


def _pending(action: str, **proposal: object) -> list[PendingAction]:
    """The change proposed, as the graph state's pending action reads (`graph.state.pending_actions`)."""
    return [PendingAction.model_validate({"action": action, "proposal": {"action": action, **proposal}})]


def _proposed(action: str, item_ids: list[str], **args: object) -> list[PendingAction]:
    return _pending(action, order_id="#W0000001",
                    args={"order_id": "#W0000001", "item_ids": item_ids, **args})


def test_a_change_of_mind_at_confirmation_narrows_the_proposal_to_the_named_items() -> None:
    from csagent.grounding.frame import narrow_pending

    # Given a proposed exchange of the boots and the kettle
    pending = _proposed("exchange_items", ["b-12-leather-yes", "k-1L-white"],
                        new_item_ids=["b-8-leather-yes", "k-2L-white"], payment_method_id="card_1")
    # When the customer says only the boots
    narrowed = narrow_pending("actually, only the boots", pending, _store())
    # Then the exchange is proposed again with the boots and their new size alone
    assert narrowed == [("change_items", {
        "order_id": "#W0000001", "item_ids": ["b-12-leather-yes"], "new_item_ids": ["b-8-leather-yes"],
        "payment_method_id": "card_1", "asks_for_change": True, "grounded_orders": ["#W0000001"],
        "item_action": "exchange_items"})]


def test_another_payment_method_named_at_confirmation_is_the_proposal_again_with_it() -> None:
    from csagent.grounding.frame import amend_pending

    # Given a proposed payment change of the chair order (paid with PayPal) to the Visa
    pending = _pending("change_payment", args={"order_id": "#W0000002", "payment_method_id": "card_1"})
    # When the customer says "actually no, the gift card"
    amended = amend_pending("actually no, the gift card", pending, _store(), _variants())
    # Then the change is proposed again with the gift card
    assert amended == [("change_payment", {"order_id": "#W0000002", "payment_method_id": "gift_1",
                                           "asks_for_change": True, "grounded_orders": ["#W0000002"]})]
    # And naming the method proposed, or the one the order is paid with, amends nothing
    assert amend_pending("yes, the visa", pending, _store(), _variants()) == []
    assert amend_pending("no, keep it on paypal", pending, _store(), _variants()) == []
    # Nor does "my gift card" for a proposal that already uses the gift card (not "card": the Visa)
    on_gift_card = _pending("change_payment", args={"order_id": "#W0000002", "payment_method_id": "gift_1"})
    assert amend_pending("yes. Please put it on my gift card.", on_gift_card, _store(), _variants()) == []


@pytest.mark.parametrize("text", ["yes, both of them", "what's the refund time?", "the boots and the kettle"])
def test_words_naming_all_or_none_of_the_proposed_items_narrow_nothing(text: str) -> None:
    from csagent.grounding.frame import narrow_pending

    pending = _proposed("return_items", ["b-12-leather-yes", "k-1L-white"], payment_method_id="card_1")
    assert narrow_pending(text, pending, _store()) == []


def test_keeping_one_item_returns_the_other() -> None:
    from csagent.grounding.frame import narrow_pending

    pending = _proposed("return_items", ["b-12-leather-yes", "k-1L-white"], payment_method_id="card_1")
    narrowed = narrow_pending("I'll keep the kettle, just return the boots", pending, _store())
    assert [(intent, e["item_ids"]) for intent, e in narrowed] == [("return_request", ["b-12-leather-yes"])]


@pytest.mark.parametrize(("text", "statuses"), [
    ("which of my orders haven't shipped?", ("pending",)),
    ("which have shipped", ("processed", "delivered")),
    ("what haven't I received yet?", ("pending", "processed")),
    ("the one that's on its way", ("processed",)),
    ("which orders are not cancelled and also not delivered yet?", ("pending", "processed")),
    ("我有哪些订单还没发货？", ("pending",)),
    ("show me all my orders", None),
    # "waiting to be sent" is not yet sent, whatever "sent" alone says
    ("which of my orders are still waiting to be sent out?", ("pending",)),
    ("if it has not gone out yet", ("pending",)),
    # a subject that counts nothing negates its verb, words away from the status
    ("Three orders and NOT ONE of them has shipped", ("pending",)),
    ("none of my orders have shipped", ("pending",)),
    ("my orders have shipped", ("processed", "delivered")),
    # an arrival still to come is of an order not yet delivered
    ("when will my wall clock arrive?", ("pending", "processed")),
    ("挂钟什么时候到？", ("pending", "processed")),
    ("has my order arrived", ("delivered",)),
    # where an order is being sent, not how far it has got
    ("which address is the order with the lamp being shipped to?", None),
    ("is my order going to be sent to Denver", None),
    ("has it been sent yet", ("processed", "delivered")),
])
def test_status_words_keep_their_negation(text: str, statuses: tuple[str, ...] | None) -> None:
    from csagent.grounding.status import statuses_described

    assert statuses_described(text) == statuses


def test_the_one_order_in_the_status_asked_about_is_found_without_a_product() -> None:
    # Given two pending orders and one delivered
    # When a tracking question names no product / Then the one order that has shipped is used
    found = ground("tracking", "what's my tracking number?", {}, _store(), _variants(), "")
    assert found["order_id"] == "#W0000001"


def test_several_orders_in_that_status_are_listed_back_or_all_answered_for_orders() -> None:
    question = ground("order_status", "has my order that hasn't shipped been processed yet?", {}, _store(),
                      _variants(), "")
    assert question["order_candidates"] == ["#W0000002", "#W0000003"] and "question" in question
    both = ground("order_status", "where are my orders that haven't shipped?", {}, _store(), _variants(), "")
    assert both["order_ids"] == ["#W0000002", "#W0000003"] and "question" not in both
    # a quantifier asks about several as a plural does
    anything = ground("order_status", "is anything of mine still not shipped?", {}, _store(), _variants(), "")
    assert anything["order_ids"] == ["#W0000002", "#W0000003"] and "question" not in anything


def test_a_statement_that_asks_nothing_is_not_grounded_by_status() -> None:
    assert ground("order_status", "my order came from your warehouse", {}, _store(), _variants(), "") == {}


def test_ruling_out_the_whole_order_returns_the_item_alone() -> None:
    from csagent.grounding.resolve import resolve_return_lines

    order = _store().order("#W0000001")
    assert order is not None
    lines = resolve_return_lines("only the kettle, not the whole order", order)
    assert [x.name for x in lines or []] == ["Electric Kettle"]
    # and the product that only says which order is meant is not returned
    lines = resolve_return_lines("just the kettle from the order with the hiking boots", order)
    assert [x.name for x in lines or []] == ["Electric Kettle"]


@pytest.mark.parametrize(("text", "new_item"), [
    # the wish is there: the fallback is not used
    ("change the boots to size 8, if there's no size 8 then size 7", "b-8-leather-yes"),
    # size 9 leather is there, synthetic is not: "if there's no ..." falls back
    ("change the boots to size 9 synthetic; if there's no synthetic one, leather is fine", "b-9-leather-yes"),
    ("swap the boots for size 9 synthetic, otherwise size 8", "b-8-synthetic-yes"),
    ("the boots in size 9 synthetic or size 7", "b-7-synthetic-yes"),
    # the colour the item has, named as the wish's first choice, with "if not" for the other: the
    # other (there is no synthetic 9)
    ("can you switch the boots to a size 9? synthetic if you have it, if not leather is fine",
     "b-9-leather-yes"),
    # a "then" closing a sentence that names no condition opens no fallback: the wish after it is one
    ("Okay, maybe my mistake then. Can I exchange the boots for size 8, synthetic?", "b-8-synthetic-yes"),
])
def test_a_fallback_is_used_only_when_the_wish_is_not_available(text: str, new_item: str) -> None:
    assert _new_items(text) == [new_item]


def _new_items(text: str) -> list[str | None]:
    """Each item change the text asks of order 1: the new item's id, or why there is none."""
    order = _store().order("#W0000001")
    assert order is not None
    changes = resolve_item_changes(text, order, _variants()).changes
    return [c.new.item_id if c.new else c.problem for c in changes]


def test_no_fallback_that_fits_leaves_the_problem_stated() -> None:
    order = _store().order("#W0000001")
    assert order is not None
    changes = resolve_item_changes("the boots in size 9 synthetic, if not then size 10", order, _variants())
    assert changes.changes[0].new is None and "not available" in (changes.changes[0].problem or "")


@pytest.mark.parametrize(("text", "new_item"), [
    ("my boots are too small, I need a size up", None),        # 12 is the largest: nothing bigger
    ("the boots run big, one size smaller please", "b-9-leather-yes"),
    ("two sizes down on the boots", "b-8-leather-yes"),
])
def test_a_size_step_moves_along_the_products_sizes(text: str, new_item: str | None) -> None:
    order = _store().order("#W0000001")
    assert order is not None
    changes = resolve_item_changes(text, order, _variants())
    got = changes.changes[0].new.item_id if changes.changes and changes.changes[0].new else None
    assert got == new_item


@pytest.mark.parametrize(("text", "new_item"), [
    ("I'd like a bigger kettle, same colour", "k-1.5L-white"),          # 1L -> 1.5L
    ("the kettle with the largest capacity please", "k-2L-white"),
    ("swap the kettle for a bigger one in black", "k-1.5L-black"),
    ("the boots in size 8 if that's cheaper", "b-8-leather-yes"),      # $108 < $112
])
def test_comparatives_move_an_item_along_its_products_values(text: str, new_item: str) -> None:
    assert _new_items(text) == [new_item]


def test_a_cheaper_wish_that_is_not_cheaper_is_told_not_made() -> None:
    order = _store().order("#W0000001")
    assert order is not None
    # every kettle costs the same: the black one, as the kettle is otherwise, is not cheaper
    changes = resolve_item_changes("switch the kettle to black if it's cheaper", order, _variants())
    assert changes.changes[0].new is None
    assert changes.changes[0].problem == \
        "The Electric Kettle in 1L, black costs $50.00, not less than yours ($50.00)."
    # a cheaper boot keeping leather and waterproof: three sizes fit equally, so the customer picks
    changes = resolve_item_changes("I want cheaper boots, still leather", order, _variants())
    assert changes.changes[0].new is None
    fitting = {v.item_id for v in changes.changes[0].options}
    assert fitting == {"b-7-leather-yes", "b-8-leather-yes", "b-9-leather-yes"}


def test_a_comparative_on_options_without_an_order_asks() -> None:
    order = _store().order("#W0000002")
    assert order is not None
    changes = resolve_item_changes("a bigger office chair, the black one", order, _variants())
    assert [c.problem for c in changes.changes] == ["What would you like the Office Chair changed to?"]


def test_products_named_in_chinese_find_the_order() -> None:
    from csagent.grounding.resolve import product_mentions

    store = _store()
    assert [m.name for m in product_mentions("登山靴那个订单到哪了？", store.products())] == ["Hiking Boots"]
    found = ground("order_status", "登山靴那个订单到哪了？", {}, store, _variants(), "")
    assert found["order_id"] == "#W0000001"


def test_a_payment_method_named_in_chinese() -> None:
    choice = resolve_payment("差价用礼品卡付", _store())
    assert choice.method is not None and choice.method.payment_method_id == "gift_1"


def test_changing_an_orders_payment_names_the_method_it_moves_to() -> None:
    # Given order 2, paid with PayPal / When the customer names both methods
    text = "move my chair order from PayPal to my Visa"
    found = ground("change_payment", text, {}, _store(), _variants(), "")
    # Then the Visa is the new method, not the PayPal it moves from
    assert found["payment_method_id"] == "card_1"


@pytest.mark.parametrize("read_as", ["account_info", "out_of_scope"])
def test_a_clause_misread_as_another_request_is_the_item_change_its_words_ask_for(read_as: str) -> None:
    from csagent.grounding.frame import item_change_intent

    # Given "... the boots in size 8 instead. Use my card ending 1234 for the difference." with the
    # payment clause read as an account question (or nothing at all)
    text = "the boots from that order in size 8 instead please, use my card ending 1234 for the difference"
    intent = item_change_intent(read_as, text, {"order_id": "#W0000001"}, _store(), _variants())
    # Then it is the item change
    assert intent == "change_items"


def test_a_wish_pointing_back_at_boots_the_message_named_as_theirs_is_their_change() -> None:
    from csagent.grounding.frame import item_change_intent

    text = "so the hiking boots i already got are a lil tight. can i get em in an 8 instead?"
    # "em" points back at the boots the sentence before named as theirs: the boots changed to an 8
    assert item_change_intent("product_availability", text, {"order_id": "#W0000001"}, _store(), _variants(),
                              "can i get em in an 8 instead?") == "change_items"
    # while the same question with no purchase named asks the store's range
    assert item_change_intent("product_availability", "can i get em in an 8 instead?", {}, _store(),
                              _variants(), "can i get em in an 8 instead?") == "product_availability"


def test_the_order_holding_every_product_named_is_the_one_meant() -> None:
    # Given kettles in two orders, one of them with the hiking boots too
    entities = ground("order_status", "where is the electric kettle in my order with the hiking boots", {},
                      _store(), _variants())
    # Then the order with both is the one meant; the kettle alone still lists both orders
    assert entities["order_id"] == "#W0000001"
    alone = ground("order_status", "where is my electric kettle", {}, _store(), _variants())
    assert alone["order_candidates"] == ["#W0000001", "#W0000003"]


def test_a_fallback_keeping_every_other_option_comes_before_the_wish_changing_them() -> None:
    # Given a 750ml blue bottle; green comes only in 500ml, red in 750ml too
    bottle = "p-bottle"
    variants = {bottle: tuple(
        Variant(f"w-{cap}-{colour}", {"capacity": cap, "color": colour}, 40.0 + len(cap), True)
        for cap, colour in (("750ml", "blue"), ("500ml", "green"), ("750ml", "red"), ("500ml", "red")))}
    line = Line("w-750ml-blue", bottle, "Water Bottle", 43.0, {"capacity": "750ml", "color": "blue"})
    order = OrderView("#W0000009", "pending", (line,), "card_1")
    # When the customer wants the same bottle in green, or else red
    fallback = resolve_item_changes("the water bottle, same but in green. if no green then red", order,
                                    variants)
    wish_only = resolve_item_changes("the water bottle in green please", order, variants)
    # Then red keeps the capacity and wins; with no fallback named, green is the wish
    assert [c.new.item_id for c in fallback.changes if c.new] == ["w-750ml-red"]
    assert [c.new.item_id for c in wish_only.changes if c.new] == ["w-500ml-green"]


@pytest.mark.parametrize(("answer", "expected"), [
    ("not the one with the hiking boots, the other one", "#W0000003"),
    ("the one with the hiking boots", "#W0000001"),
    ("not the one with the hiking boots", "#W0000003"),
    ("the other one", None),  # nothing says which the other is
    ("The one with number #W0000003, please.", "#W0000003"),  # an id of one of those listed
    ("#W0000002 I think", None),  # an id not among those listed picks none of them
])
def test_an_answer_ruling_out_a_listed_order_picks_the_other(answer: str, expected: str | None) -> None:
    # Given the two orders with a kettle listed back
    store = _store()
    candidates = [o for o in store.orders if o.order_id in ("#W0000001", "#W0000003")]
    # When the customer answers
    chosen = pick_candidate(answer, candidates)
    # Then the order the words leave is the one meant
    assert (chosen.order_id if chosen else None) == expected


def test_a_product_named_only_to_rule_its_order_out_does_not_choose_it() -> None:
    # Given kettles in two orders, one with the hiking boots too
    entities = ground("order_status", "not the one with the hiking boots, where is my electric kettle", {},
                      _store(), _variants())
    # Then the boots rule their order out: the other kettle order is the one meant
    assert entities["order_id"] == "#W0000003"


@pytest.mark.parametrize(("answer", "expected"), [
    ("the black one not the white one", "#W0000005"),
    ("not the white one", "#W0000005"),
    ("the white one", "#W0000004"),
    ("not the white one, not the black one", None),  # every order ruled out: ask again
])
def test_an_option_named_after_a_negation_rules_its_order_out(answer: str, expected: str | None) -> None:
    # Given two kettle orders listed back, a white kettle in one and a black kettle in the other
    kettles = {v.item_id: v for v in _variants()[KETTLE]}
    white, black = (_line(kettles[item], KETTLE, "Electric Kettle") for item in ("k-1L-white", "k-1L-black"))
    candidates = [OrderView("#W0000004", "delivered", (white,), "card_1"),
                  OrderView("#W0000005", "delivered", (black,), "card_1")]
    # When the customer answers
    chosen = pick_candidate(answer, candidates)
    # Then the negated colour rules its order out and the other is chosen
    assert (chosen.order_id if chosen else None) == expected


@pytest.mark.parametrize(("answer", "expected"), [
    ("the waterproof ones", "#W0000004"),
    ("the ones that aren't waterproof", "#W0000005"),
])
def test_a_yes_no_option_picks_the_order_whose_item_has_it(answer: str, expected: str) -> None:
    # Given two boot orders listed back, waterproof boots in one and others in the other
    boots = {v.item_id: v for v in _variants()[BOOTS]}
    dry, wet = (_line(boots[item], BOOTS, "Hiking Boots") for item in ("b-12-leather-yes", "b-12-leather-no"))
    candidates = [OrderView("#W0000004", "pending", (dry,), "card_1"),
                  OrderView("#W0000005", "pending", (wet,), "card_1")]
    # When the customer answers by that option / Then the order whose boots have it is the one meant
    chosen = pick_candidate(answer, candidates)
    assert (chosen.order_id if chosen else None) == expected


@pytest.mark.parametrize(("answer", "expected"), [
    ("Not the one going to 985 Pine Lane, the other one.", "#W0000007"),
    ("the one going to denver please", "#W0000007"),
    ("the one for 985 pine lane", "#W0000006"),
    # the street without its number
    ("The one that went to the Pine Lane address please.", "#W0000006"),
])
def test_an_order_can_be_told_apart_by_where_it_ships(answer: str, expected: str) -> None:
    # Given two pending orders with the same kettle, shipping to different addresses
    white = next(v for v in _variants()[KETTLE] if v.item_id == "k-1L-white")
    kettle = _line(white, KETTLE, "Electric Kettle")
    candidates = [OrderView("#W0000006", "pending", (kettle,), "card_1",
                            {"address1": "985 Pine Lane", "city": "Phoenix"}),
                  OrderView("#W0000007", "pending", (kettle,), "card_1",
                            {"address1": "12 Elm Street", "city": "Denver"})]
    # When the customer describes one by its address
    chosen = pick_candidate(answer, candidates)
    # Then that order (or, negated, the other) is the one meant
    assert chosen is not None and chosen.order_id == expected


def _order_of(order_id: str, *names: str) -> OrderView:
    lines = tuple(Line(f"{order_id}-{n}", f"p-{n}", n, 10.0, {}) for n in names)
    return OrderView(order_id, "pending", lines, "card_1")


@pytest.mark.parametrize(("text", "candidates", "meant"), [
    # the negation reaches over its whole description, up to the dash
    ("Not the one in the big order with the dumbbells and the skateboard - the other one, where the "
     "tablet's on its own", (("#W1", "Skateboard", "Dumbbell Set", "Tablet"), ("#W2", "Tablet")), "#W2"),
    # "the electric kettle" is the Electric Kettle, not the other order's Tea Kettle
    ("Not the one with just the electric kettle - the other one, with the helmet",
     (("#W1", "Electric Kettle"), ("#W2", "Cycling Helmet", "Tea Kettle")), "#W2"),
    # a product both orders hold rules neither out
    ("not the one with the tablet, the one with the skateboard",
     (("#W1", "Skateboard", "Tablet"), ("#W2", "Tablet")), "#W1"),
])
def test_a_negated_description_rules_out_the_order_it_describes(
    text: str, candidates: tuple[tuple[str, ...], ...], meant: str
) -> None:
    from csagent.grounding.frame import pick_candidate

    chosen = pick_candidate(text, [_order_of(*c) for c in candidates])
    assert chosen is not None and chosen.order_id == meant


@pytest.mark.parametrize(("intent", "text", "expected"), [
    # a general-sounding question about changing something the customer bought is about that change
    ("policy_question", "if I return the kettle and the boots, how much will I get back in total?",
     "return_request"),
    ("product_info", "can we exchange the boots for another size?", "change_items"),
    ("policy_question", "I'd like to cancel the office chair", "cancel_order"),
    # the store's rules in general, or a product the customer never bought: as read
    ("policy_question", "what's your return policy for kettles?", "policy_question"),
    ("policy_question", "if I return a tablet, how long does the refund take?", "policy_question"),
    # an order read stays an order read
    ("order_status", "if I return the kettle, where do I send it?", "order_status"),
])
def test_a_change_named_for_a_purchase_is_that_change(intent: str, text: str, expected: str) -> None:
    from csagent.grounding.frame import change_intent

    assert change_intent(intent, text, _store()) == expected


@pytest.mark.parametrize(("text", "dims", "found"), [
    ("is the 1 litre version cheaper", {"capacity": ["1L", "1.5L"]}, [("capacity", "1L")]),
    ("the 1.5 liters one", {"capacity": ["1 liter", "1.5 liters"]}, [("capacity", "1.5 liters")]),
    # two-letter sizes are no English word: named alone; one-letter ones and numbers need a cue
    ("the black XL cotton one", {"size": ["S", "L", "XL", "XXL"]}, [("size", "XL")]),
    ("I need 9 not 8", {"size": ["8", "9"]}, [("size", "9"), ("size", "8")]),
    ("I bought 2 of them in 8 colours", {"size": ["2", "9"]}, []),
])
def test_option_values_are_named_in_everyday_forms(text: str, dims: dict, found: list) -> None:
    from csagent.grounding.options import find_option_values

    assert [(h.key, h.value) for h in find_option_values(text, dims)] == found


def test_an_item_change_in_a_clause_that_names_no_order_finds_the_order_its_words_describe() -> None:
    from csagent.grounding.frame import item_change_intent

    # "the boots ... I need 8 not 12. Please change, and pay the difference with my card": the
    # last clause, read as a payment change, names no order; the boots' order is the one meant
    text = ("I got the wrong size of hiking boots, I need 8 not 12. Please change, pay the difference "
            "with my card")
    assert item_change_intent("change_payment", text, {}, _store(), _variants()) == "change_items"


def test_both_items_of_an_order_of_two_are_both_returned() -> None:
    from csagent.grounding.resolve import resolve_return_lines

    order = _store().order("#W0000001")  # the boots and the kettle
    assert order is not None
    lines = resolve_return_lines("I would like to return both items, refund to my PayPal", order)
    assert [x.name for x in lines or []] == ["Hiking Boots", "Electric Kettle"]


def test_an_order_named_by_nothing_but_the_conversation_is_the_one_just_talked_about() -> None:
    # Given two pending orders, and a conversation last about order 3
    store = _store()
    found = ground("cancel_order", "ok then just cancel it, no longer needed", {}, store, _variants(), "",
                   recent="#W0000003")
    assert found["order_id"] == "#W0000003" and "question" not in found
    # "the other one" is the pending order it was not about
    other = ground("cancel_order", "and cancel the other order too", {}, store, _variants(), "",
                   recent="#W0000003")
    assert other["order_id"] == "#W0000002"
    # without a conversation, both are listed back
    assert ground("cancel_order", "cancel my pending order", {}, store, _variants(), "")["order_candidates"] \
        == ["#W0000002", "#W0000003"]


def test_other_things_are_not_the_other_order() -> None:
    # "there's other stuff in there I need" speaks of the order's other items, not another order
    found = ground("cancel_order", "wait no dont cancel, theres other stuff in there i need", {}, _store(),
                   _variants(), "", recent="#W0000003")
    assert found["order_id"] == "#W0000003"


def test_a_bare_size_after_then_or_or_is_the_fallback_size() -> None:
    # Given size 9 synthetic not available / When the fallback names only a number after "then"
    # Then that number is the size ("if size 9 isn't there, then 7")
    assert _new_items("the boots in size 9 synthetic. if size 9 is not have, then 7") == ["b-7-synthetic-yes"]


@pytest.mark.parametrize(("text", "item"), [
    ("return only the blue chair, not the black one", "c-blue-none"),
    ("I want to return the chair without armrests", "c-blue-none"),
    ("return the black one of the two chairs", "c-black-fixed"),
])
def test_the_option_words_pick_one_of_two_lines_of_a_product_to_return(text: str, item: str) -> None:
    from csagent.grounding.resolve import resolve_return_lines

    # Given an order with two office chairs, black (fixed arms) and blue (no arms)
    order = _store().order("#W0000002")
    assert order is not None
    # When the return names one by its options, or rules the other out / Then that one alone
    lines = resolve_return_lines(text, order)
    assert [x.item_id for x in lines or []] == [item]


def test_both_lines_of_a_product_are_returned_when_no_option_tells_them_apart() -> None:
    from csagent.grounding.resolve import resolve_return_lines

    order = _store().order("#W0000002")
    assert order is not None
    assert [x.item_id for x in resolve_return_lines("return both chairs", order) or []] == [
        "c-black-fixed", "c-blue-none"]


def test_another_version_asked_at_confirmation_amends_the_proposed_change() -> None:
    from csagent.grounding.frame import amend_pending

    # Given a proposed exchange of the kettle for the black 1L one
    pending = _proposed("exchange_items", ["k-1L-white"], new_item_ids=["k-1L-black"],
                        payment_method_id="card_1")
    # When the customer asks for the 2L black one instead, without naming the kettle
    amended = amend_pending("hmm, actually make it the 2L black one", pending, _store(), _variants())
    # Then the same exchange is proposed again with that version
    assert [(intent, e["item_ids"], e["new_item_ids"]) for intent, e in amended] == [
        ("change_items", ["k-1L-white"], ["k-2L-black"])]
    # And a plain yes amends nothing
    assert amend_pending("yes please", pending, _store(), _variants()) == []
    # while another item's change joins the proposal (an order's items are exchanged once)
    joined = amend_pending("and the boots in size 8 too", pending, _store(), _variants())
    assert [(intent, e["item_ids"], e["new_item_ids"], e["payment_method_id"]) for intent, e in joined] == [
        ("change_items", ["k-1L-white", "b-12-leather-yes"], ["k-1L-black", "b-8-leather-yes"], "card_1")]
    # and one that cannot be placed is a request of its own
    assert amend_pending("and the boots in size 9 synthetic", pending, _store(), _variants()) == []


@pytest.mark.parametrize("text", [
    "You sent me the wrong boots, not what I picked. Please return them, no exchange.",
    "The boots were not as described. I don't want a replacement, just return them.",
])
def test_a_negation_that_describes_the_item_or_declines_a_remedy_keeps_nothing(text: str) -> None:
    from csagent.grounding.resolve import resolve_return_lines

    order = _store().order("#W0000001")  # the boots and the kettle
    assert order is not None
    # "not what I picked" says what is wrong with the boots; "no replacement" says how to settle it
    assert [x.name for x in resolve_return_lines(text, order) or []] == ["Hiking Boots"]
    # while "not the boots" still keeps them out
    assert [x.name for x in resolve_return_lines("not the boots, only the kettle", order) or []] == [
        "Electric Kettle"]


def test_a_status_asked_about_does_not_pick_the_order_a_status_describing_it_does() -> None:
    # Given the kettle in a delivered order (1) and in a pending one (3)
    store = _store()
    # When the customer asks whether it has shipped, the answer is not presumed: both are listed back
    asked = ground("order_status", "has my kettle shipped yet?", {}, store, _variants(), "")
    assert asked["order_candidates"] == ["#W0000001", "#W0000003"]
    # When the status says which order is meant, that order is the one
    described = ground("order_status", "is the kettle in my pending order here yet?", {}, store,
                       _variants(), "")
    assert described["order_id"] == "#W0000003"
    assert ground("order_status", "where is the kettle that hasn't shipped", {}, store, _variants(),
                  "")["order_id"] == "#W0000003"


def test_an_option_of_any_item_of_a_listed_order_picks_it() -> None:
    # Given two listed orders: order 2 holds two office chairs, a black one and then a blue one;
    # order 1 the boots and the kettle
    store = _store()
    candidates = [store.order("#W0000001"), store.order("#W0000002")]
    assert all(candidates)
    # When the customer answers with the colour of order 2's first chair (its second item's colour
    # must not hide it)
    picked = pick_candidate("the black one", [c for c in candidates if c is not None])
    # Then that order is the one meant
    assert picked is not None and picked.order_id == "#W0000002"


def test_a_return_of_an_order_holding_one_item_needs_no_question_about_the_items() -> None:
    # Given an order with one item only (#W0000003: the kettle)
    # When the customer asks to return "it"
    entities = ground("return_request", "I'd like to return it please", {"order_id": "#W0000003"},
                      _store(), _variants())
    # Then that item is the one returned, and nothing is asked
    assert entities["item_ids"] == ["k-1L-white"]
    assert "question" not in entities


def test_return_it_means_the_product_the_conversation_just_named_in_that_order() -> None:
    # Given a conversation that just talked about the boots of #W0000001 (boots and a kettle)
    # When the customer says "return it"
    entities = ground("return_request", "actually I want to return it", {"order_id": "#W0000001"},
                      _store(), _variants(), recent="#W0000001", recent_products=[BOOTS])
    # Then the boots are returned, not asked about
    assert entities["item_ids"] == ["b-12-leather-yes"]
    # And without that context, the customer is asked which items
    asked = ground("return_request", "actually I want to return it", {"order_id": "#W0000001"},
                   _store(), _variants())
    assert "item_ids" not in asked and "Which items" in asked["question"]


def test_return_it_about_a_product_the_order_holds_twice_is_asked_about() -> None:
    # Given two office chairs in #W0000002, just talked about (a pending order, so only a question)
    entities = ground("return_request", "return it", {"order_id": "#W0000002"}, _store(), _variants(),
                      recent="#W0000002", recent_products=[CHAIR])
    # Then "it" picks neither chair
    assert "item_ids" not in entities


def test_it_is_the_order_just_talked_about_even_when_its_status_does_not_allow_the_change() -> None:
    # Given a conversation about the delivered #W0000001; the customer's only pending orders are others
    # When the customer asks where "it" ships to (read as an address change question)
    entities = ground("change_order_address", "what address does it ship to?", {}, _store(), _variants(),
                      recent="#W0000001")
    # Then it is #W0000001, whose status the planner then explains
    assert entities["order_id"] == "#W0000001"
    # And the "it" of "is it possible" points at nothing: the order comes from the status, as before
    general = ground("change_order_address", "is it possible to change the address?", {}, _store(),
                     _variants(), recent="#W0000001")
    assert general.get("order_id") != "#W0000001"


def test_an_everyday_plural_name_is_not_read_into_its_singular() -> None:
    # Given the catalogue's Dumbbell Set ("weights" in everyday words) and Office Chair
    from csagent.grounding.resolve import product_mentions

    catalogue = [{"product_id": "p-dumbbells", "name": "Dumbbell Set", "options": {}},
                 {"product_id": "p-chair", "name": "Office Chair", "options": {}}]
    # When a question about the chair's weight limit, and one about weights, are read
    limit = product_mentions("what's the weight limit on the office chair?", catalogue)
    weights = product_mentions("do you sell weights?", catalogue)
    # Then the weight limit is about the chair alone; "weights" are the dumbbells
    assert [m.name for m in limit] == ["Office Chair"]
    assert [m.name for m in weights] == ["Dumbbell Set"]


@pytest.mark.parametrize(("text", "intent"), [
    ("please change the address for my office chair to 12 Main St, Springfield, IL 62704",
     "change_order_address"),
    ("new address for #W0000002: 12 Main St, Springfield, IL 62704", "change_order_address"),
    ("change my default address to 12 Main St, Springfield, IL 62704", "update_default_address"),
    ("change my address to 12 Main St, Springfield, IL 62704", "update_default_address"),
])
def test_an_address_change_naming_a_purchase_is_that_orders_address(text: str, intent: str) -> None:
    from csagent.grounding.frame import address_intent

    # Given an address change read as the account's default address
    # When it names something the customer bought, or an order, and not the account
    # Then it is the order's address; the account's when the words say so or name nothing
    assert address_intent("update_default_address", text, _store()) == intent


def test_a_category_is_named_by_a_distinctive_word_of_its_name() -> None:
    from csagent.grounding.resolve import category_mentions

    # Given products in Pet Supplies, Toys & Games and Office
    catalogue = [{"product_id": "1", "name": "Pet Bed", "category": "Pet Supplies"},
                 {"product_id": "2", "name": "Jigsaw Puzzle", "category": "Toys & Games"},
                 {"product_id": "3", "name": "Office Chair", "category": "Office"}]
    # Then "pet stuff" and "toys" name their categories; "send it to my office" names none
    assert category_mentions("yall got any pet stuff?", catalogue) == ["Pet Supplies"]
    assert category_mentions("what toys do you have for kids?", catalogue) == ["Toys & Games"]
    assert category_mentions("send it to my office instead", catalogue) == []


def test_a_none_value_is_read_beside_its_dimension_and_not_as_a_bare_word() -> None:
    # Given a light bulb's connectivity: Bluetooth, Wi-Fi or none
    dims = {"connectivity": ["Bluetooth", "Wi-Fi", "none"]}
    # Then "connectivity none" names the value; "none of them" does not
    assert [h.value for h in find_option_values("change it to connectivity none, not Bluetooth", dims)] == [
        "none", "Bluetooth"]
    assert [h.value for h in find_option_values("none of them pair over bluetooth", dims)] == ["Bluetooth"]


@pytest.mark.parametrize(("text", "another"), [
    ("Could you check the status of my husband's order?", True),
    ("where is my friends package", True),
    ("can you cancel her order", True),
    ("我老公的订单到哪了", True),
    ("where is my order?", False),
    ("my husband says the order is late", False),
])
def test_someone_elses_order_is_told_apart_from_the_customers(text: str, another: bool) -> None:
    from csagent.grounding.frame import about_another_persons

    assert about_another_persons(text) is another


def test_an_english_word_is_not_read_as_a_misspelt_product_name() -> None:
    from csagent.grounding.resolve import product_mentions

    # Given the Garden Hose ("hose") and the Hiking Boots
    catalogue = [{"product_id": "p-hose", "name": "Garden Hose", "options": {}},
                 {"product_id": "p-boots", "name": "Hiking Boots", "options": {}}]
    # Then "those" is a word, not a misspelt hose; "hoze" is a misspelt hose
    assert [m.name for m in product_mentions("Those boots are nothing like the pictures", catalogue)] == [
        "Hiking Boots"]
    assert [m.name for m in product_mentions("my garden hoze leaks", catalogue)] == ["Garden Hose"]


@pytest.mark.parametrize(("text", "returned"), [
    ("return the kettle but keep the hiking boots", ["Electric Kettle"]),
    ("keep the hiking boots but return the kettle", ["Electric Kettle"]),
    ("the boots I'm keeping, return the kettle", ["Electric Kettle"]),
    ("return everything except the hiking boots", ["Electric Kettle"]),
    ("don't send back the boots, only the kettle", ["Electric Kettle"]),
    # a negation that describes the item keeps nothing
    ("the kettle does not suit me, I want to return it", ["Electric Kettle"]),
    # "keeping everything else" says which item alone goes back
    ("I'm keeping everything else, but I might send the kettle back", ["Electric Kettle"]),
    # "everything else stays" after the item keeps the rest, not the item named
    ("I'd like to return only the kettle. Everything else stays.", ["Electric Kettle"]),
    ("send back the kettle, the rest can stay", ["Electric Kettle"]),
    ("return everything else, I keep the hiking boots", ["Electric Kettle"]),
    # "that's all of it" says the list is complete, not "everything"
    ("the kettle, that's all of it", ["Electric Kettle"]),
])
def test_a_return_leaves_out_what_the_customer_keeps(text: str, returned: list[str]) -> None:
    from csagent.grounding.resolve import resolve_return_lines

    # Given the delivered order with the hiking boots and a kettle
    order = _store().order("#W0000001")
    assert order is not None
    # Then only the items the words return are returned
    assert [x.name for x in resolve_return_lines(text, order) or []] == returned


def test_it_in_a_return_points_back_to_a_product_named_in_another_clause() -> None:
    # Given the delivered order with the boots and the kettle
    store = _store()
    message = "I've had the kettle for a bit and it does not suit me. I would like to return it"
    # When the return clause says only "it"
    found = ground("return_request", "I would like to return it", {"order_id": "#W0000001"}, store,
                   _variants(), message)
    # Then "it" is the kettle the message named
    assert found.get("item_ids") == ["k-1L-white"]


@pytest.mark.parametrize(("text", "flagged"), [
    ("I opened the makeup kit and tried it, but I don't like it. I'd like to return it", ["Makeup Kit"]),
    ("The perfume I open already and use, but not like. I can return it?", ["Makeup Kit"]),
    ("I'd like to return the makeup kit, it's unopened", []),
    ("return the makeup kit please, I haven't opened it", []),
    ("return the makeup kit please", []),  # nothing says it was opened
    # a negation a few words before the word that says it was opened
    ("regret the makeup kit, havent even opened it, can i send it back", []),
    ("the makeup kit is the wrong shade, I didn't even break the seal", []),
    ("I didn't like the makeup kit after I tried it", ["Makeup Kit"]),
])
def test_an_item_taken_back_only_unopened_is_flagged_when_the_words_say_it_was_opened(
        text: str, flagged: list[str]) -> None:
    from csagent.grounding.frame import opened_but_returnable_only_unopened

    kit = Line("m-1", "p-kit", "Makeup Kit", 261.4, {})
    kettle = Line("k-1", "p-kettle", "Electric Kettle", 94.0, {})
    assert opened_but_returnable_only_unopened(text, [kit, kettle]) == flagged


def test_the_returns_page_names_the_products_taken_back_only_unopened() -> None:
    import json
    from importlib import resources

    # The rule's products are data beside the grounding; the store's page is where customers read it
    rules = json.loads(resources.files("csagent.grounding").joinpath("data/return_conditions.json")
                       .read_text("utf-8"))
    page = resources.files("csagent.knowledge").joinpath("docs/returns-refunds.md").read_text("utf-8")
    rule = next(p for p in page.split("\n\n") if "hygiene" in p.lower())
    for name in rules["unopened_only"] + rules["unused_only"]:
        assert name in rule


@pytest.mark.parametrize(("text", "intent"), [
    ("I need to cancel one of my orders", "cancel_order"),     # a change of one of them
    ("which of my orders can I still cancel?", "order_list"),  # a question for the list
])
def test_a_change_said_of_one_of_my_orders_is_that_change(text: str, intent: str) -> None:
    from csagent.grounding.frame import change_intent

    assert change_intent("order_list", text, _store()) == intent


@pytest.mark.parametrize(("text", "named"), [
    ("just wanna send it back n get a refund", "return_request"),  # a phrasal verb, its object between
    ("if I give back only the hiking boots, how much do I get?", "return_request"),
    ("exchange for 7", "change_items"),
    ("I sent it back last week", None),
])
def test_the_change_a_customer_names_in_everyday_verbs(text: str, named: str | None) -> None:
    from csagent.grounding.frame import named_change

    assert named_change(text) == named


def test_a_refund_question_naming_a_return_to_make_is_that_return_but_not_one_already_made() -> None:
    from csagent.grounding.frame import change_intent

    store = _store()
    # "the kettle came busted. just wanna send it back n get a refund": the clause, and the message
    assert change_intent("refund_status", "just wanna send it back n get a refund", store,
                         "the kettle came busted. just wanna send it back n get a refund") == "return_request"
    assert change_intent("refund_status", "I returned the kettle last week, where's my refund?",
                         store) == "refund_status"


def test_a_terse_exchange_beside_the_product_it_is_about_is_that_exchange() -> None:
    # Given "wrong size on the hiking boots. exchange for 7." about the delivered boots (size 12)
    from csagent.grounding.resolve import resolve_item_changes

    order = _store().order("#W0000001")
    assert order is not None
    changes = resolve_item_changes("wrong size on the hiking boots. exchange for 8", order, _variants())
    # Then the boots go to size 8, the rest of their options kept
    assert [c.new.options.get("size") for c in changes.changes if c.new] == ["8"]


HOME = {"address1": "217 Hickory Lane", "address2": "Suite 646", "city": "San Antonio", "state": "TX",
        "zip": "78252", "country": "USA"}
SISTER = {"address1": "12 Elm Street", "city": "Denver", "state": "CO", "zip": "80201", "country": "USA"}
OFFICE = {"address1": "5 Harbor Road", "city": "Denver", "state": "CO", "zip": "80202", "country": "USA"}


def _addresses() -> CustomerView:
    kettle = _variants()[KETTLE][0]
    lines = (_line(kettle, KETTLE, "Electric Kettle"),)
    return CustomerView(customer_id="ann", default_address=HOME, orders=(
        OrderView("#W0000001", "pending", lines, "card_1", address=SISTER),
        OrderView("#W0000002", "delivered", lines, "card_1", address=OFFICE),
        OrderView("#W0000003", "delivered", lines, "card_1", address=HOME)))


def test_an_address_of_the_customers_is_found_by_its_street_or_its_city() -> None:
    view = _addresses()
    # the account's address and the orders', once each
    assert [a["address1"] for a in view.known_addresses()] == ["217 Hickory Lane", "12 Elm Street",
                                                                "5 Harbor Road"]
    assert view.address_named("send it to my san antonio place instead") == HOME
    assert view.address_named("the hickory lane one please") == HOME
    # a city with two of the customer's addresses in it names neither; its street names one
    assert view.address_named("ship it to my Denver address") is None
    assert view.address_named("to the Harbor Road one in Denver") == OFFICE
    # where the order goes now is not where it should go: "it's going to Denver, send it to Elm St"
    assert view.address_named("it's going to 12 Elm Street, I want it at Harbor Road",
                               besides=SISTER) == OFFICE
    assert view.address_named("send it to my new flat on Main Street") is None


class _AccountIntents(_Intents):
    def classify_many(self, pieces: list[str]) -> list:
        from csagent.nlp.intents import IntentPrediction

        return [IntentPrediction("change_items" if p.startswith("change") else "account_info", 0.6, None, 0.0)
                for p in pieces]


@pytest.mark.parametrize("text", ["wrong. use my default one", "change it to my default one"])
def test_the_default_one_asked_for_after_an_orders_address_is_the_accounts_address(text: str) -> None:
    from csagent.understanding_local import LocalUnderstanding

    understanding = LocalUnderstanding(classifier=_AccountIntents(), catalogue=lambda: [],
                                       customer_view=lambda _customer: _addresses(), variants=_variants)
    # Given the last turn about where the pending order #W0000001 goes (the sister's, in Denver)
    state = {"customer_id": "ann", "memory": {"last_order_id": "#W0000001"}}
    clause = understanding.understand(text, state).clauses[-1]
    # Then the order is asked to go to the address saved on the account, no item changed
    address = clause.entities.get("address", {}).get("address1")
    assert (clause.intent, clause.entities.get("order_id"), address) == (
        "change_order_address", "#W0000001", "217 Hickory Lane")
    # while a question about the default address asks for nothing
    asked = understanding.understand("what is my default one?", state).clauses[-1]
    assert asked.intent == "account_info"


def test_an_order_address_change_that_names_only_the_account_is_the_accounts() -> None:
    from csagent.grounding.frame import address_intent

    view = _store()
    # "can you put my new address on the account?" read as an order's address change: the account's
    assert address_intent("change_order_address", "can you put my new address on the account?",
                          view) == "update_default_address"
    # ... unless an order is in view: the clause's own, or one the message names elsewhere
    assert address_intent("change_order_address", "send it to the address on my account", view,
                          order_named=True) == "change_order_address"
    assert address_intent("change_order_address", "send it to the address on my account", view,
                          message="the office chair order is going to my old flat. send it to the address "
                                  "on my account") == "change_order_address"


class _MoneyAndAddressIntents(_Intents):
    """Clauses read as a refund question ("I want ...") or an account question ("send ...")."""

    def classify_many(self, pieces: list[str]) -> list:
        from csagent.nlp.intents import IntentPrediction

        labels = {"i": "refund_status", "send": "account_info"}
        return [IntentPrediction(labels.get(p.split()[0].lower(), "out_of_scope"), 0.8, None, 0.0)
                for p in pieces]


def _understood(text: str, view: CustomerView):
    from csagent.understanding_local import LocalUnderstanding

    understanding = LocalUnderstanding(classifier=_MoneyAndAddressIntents(), catalogue=lambda: [],
                                       customer_view=lambda _customer: view, variants=_variants)
    return understanding.understand(text, {"customer_id": "ann"})


def test_money_back_asked_for_a_delivered_order_is_a_return() -> None:
    # Given "I want my money back for #W0000001", a delivered order, read as a refund question
    (clause,) = _understood("I want my money back for #W0000001 on my visa", _store()).clauses
    # Then it is a return of that order: a delivered order has no refund until something goes back
    assert (clause.intent, clause.entities["order_id"]) == ("return_request", "#W0000001")


def test_money_back_asked_before_the_order_is_picked_is_a_return_when_each_candidate_was_delivered() -> None:
    # Given two delivered orders with the boots, and one pending with the kettle
    boots = next(x for x in _variants()[BOOTS] if x.item_id == "b-12-leather-yes")
    kettle = next(x for x in _variants()[KETTLE] if x.item_id == "k-1L-white")
    view = CustomerView(customer_id="ann", orders=(
        OrderView("#W0000001", "delivered", (_line(boots, BOOTS, "Hiking Boots"),), "card_1"),
        OrderView("#W0000002", "delivered", (_line(boots, BOOTS, "Hiking Boots"),), "card_1"),
        OrderView("#W0000003", "pending", (_line(kettle, KETTLE, "Electric Kettle"),), "card_1"),
        OrderView("#W0000004", "delivered", (_line(kettle, KETTLE, "Electric Kettle"),), "card_1"),
    ), payment_methods=(PaymentView("card_1", "credit_card", "visa", "1234"),))
    # When money back is asked for the boots, read as a refund question
    (clause,) = _understood("I want my money back for the hiking boots", view).clauses
    # Then it is a return, of the one the customer will pick
    assert clause.intent == "return_request"
    assert clause.entities["order_candidates"] == ["#W0000001", "#W0000002"]
    # A kettle may be in a pending order, whose money comes back by cancelling: still asked as read
    (clause,) = _understood("I want my money back for the kettle", view).clauses
    assert clause.intent == "refund_status"


def test_an_order_is_sent_to_the_customers_own_address_named_by_its_city() -> None:
    # Given "send #W0000001 to my San Antonio address", read as an account question
    (clause,) = _understood("send #W0000001 to my San Antonio address please", _addresses()).clauses
    # Then it is a change of that order's address, to the account's address in San Antonio
    assert (clause.intent, clause.entities["address"]["address1"]) == ("change_order_address",
                                                                       "217 Hickory Lane")


def test_an_order_is_never_sent_where_it_already_goes() -> None:
    # Given the order going to Denver (12 Elm Street) and "send #W0000001 to my Elm Street place"
    (clause,) = _understood("send #W0000001 to my Elm Street place", _addresses()).clauses
    # Then no address is taken from the words, and the clause stays what it was read as
    assert "address" not in clause.entities and clause.intent == "account_info"


def test_two_of_one_product_that_the_words_do_not_tell_apart_are_asked_about() -> None:
    from csagent.grounding.resolve import read_return_lines, resolve_return_lines

    view = _store()
    chairs = view.order("#W0000002")
    assert chairs is not None
    # Given an order holding a black and a blue office chair
    # Then "the office chair" is a guess between them, and the question lists both
    assert [x.item_id for x in read_return_lines("return the office chair", chairs)[1]] == [
        "c-black-fixed", "c-blue-none"]
    asked = ground("return_request", "I want to return the office chair", {"order_id": "#W0000002"}, view,
                   _variants())
    assert "item_ids" not in asked
    assert "Office Chair (black, fixed) and Office Chair (blue, none)" in asked["question"]
    # ... while "the blue one", or both, are no guess
    assert read_return_lines("return the blue office chair", chairs)[1] == []
    assert [x.item_id for x in resolve_return_lines("return the blue office chair", chairs) or []] == [
        "c-blue-none"]
    assert read_return_lines("return both office chairs", chairs)[1] == []


def test_an_item_change_between_two_of_one_product_asks_which_unless_only_one_would_change() -> None:
    chairs = _store().order("#W0000002")
    assert chairs is not None
    # "adjustable armrests" would change either chair: which one is asked
    (change,) = resolve_item_changes("change the office chair to adjustable armrests", chairs,
                                     _variants()).changes
    assert change.new is None and change.undecided and "2 Office Chair items" in (change.problem or "")
    # "a bigger size" can change only the size-7 boots (12 is the biggest there is)
    v = {x.item_id: x for x in _variants()[BOOTS]}
    boots = OrderView("#W9", "delivered", (_line(v["b-12-leather-yes"], BOOTS, "Hiking Boots"),
                                          _line(v["b-7-leather-yes"], BOOTS, "Hiking Boots")), "card_1")
    (change,) = resolve_item_changes("the hiking boots in a bigger size please", boots, _variants()).changes
    assert (change.line.item_id, change.new.item_id if change.new else None) == ("b-7-leather-yes",
                                                                                   "b-8-leather-yes")


def _kettles(*orders: tuple[str, str, str]) -> CustomerView:
    """Orders (id, status, kettle colour) of one kettle each."""
    v = {x.item_id: x for x in _variants()[KETTLE]}
    return CustomerView(customer_id="ann", orders=tuple(
        OrderView(order_id, status, (_line(v[f"k-1L-{colour}"], KETTLE, "Electric Kettle"),), "card_1")
        for order_id, status, colour in orders))


def test_the_items_options_or_a_live_status_pick_the_order_a_product_is_in() -> None:
    from csagent.grounding.frame import find_order

    view = _kettles(("#W1", "delivered", "white"), ("#W2", "processed", "black"))
    # "my black kettle": of two orders with a kettle, the one whose kettle is black
    assert find_order("tracking", "where is my black kettle", {}, view)["order_id"] == "#W2"
    # "not the white one" rules the white one's order out, nothing more
    assert find_order("tracking", "my kettle, not the white one", {}, view)["order_id"] == "#W2"
    # the colour telling nothing apart: both are listed
    assert find_order("tracking", "where is my kettle", {}, view)["order_candidates"] == ["#W1", "#W2"]
    # a cancelled order is nowhere: "where is it?" is about the live one ...
    view = _kettles(("#W1", "cancelled", "white"), ("#W2", "processed", "white"))
    assert find_order("order_status", "where is my kettle", {}, view)["order_id"] == "#W2"
    # ... unless the words ask about the cancelled one
    assert find_order("order_status", "my cancelled kettle order", {}, view)["order_id"] == "#W1"


class _AddressChanges(_Intents):
    """Every clause read as an order's address change."""

    def classify_many(self, pieces: list[str]) -> list:
        from csagent.nlp.intents import IntentPrediction

        return [IntentPrediction("change_order_address", 0.8, None, 0.0) for _ in pieces]


def test_an_address_change_with_neither_an_address_nor_a_word_for_a_change_asks_where_it_goes() -> None:
    from csagent.understanding_local import LocalUnderstanding

    understanding = LocalUnderstanding(classifier=_AddressChanges(), catalogue=lambda: [],
                                       customer_view=lambda _customer: _addresses(), variants=_variants)

    def intent(text: str) -> str:
        (clause,) = understanding.understand(text, {"customer_id": "ann"}).clauses
        return clause.intent

    assert intent("wat adress is #W0000001 going to") == "order_status"
    assert intent("I want to check the address for order #W0000001") == "order_status"
    assert intent("please change the address of #W0000001") == "change_order_address"
    assert intent("send #W0000001 to my San Antonio address instead") == "change_order_address"


def test_a_refund_named_to_a_method_the_policy_rules_out_is_asked_again_among_the_allowed() -> None:
    view = _store()  # #W0000001 (delivered) was paid with the Visa; the account has a gift card too
    asked = ground("return_request", "return the kettle from #W0000001, refund to my paypal",
                   {"order_id": "#W0000001"}, view, _variants())
    assert "payment_method_id" not in asked and asked["asked_for"] == "payment_method_id"
    assert "not to your PayPal" in asked["question"] and "Visa ending 1234 or gift card" in asked["question"]
    # the gift card, or the order's own card, are where a refund may go: nothing to ask
    for said, method in (("to my gift card", "gift_1"), ("to my visa", "card_1")):
        found = ground("return_request", f"return the kettle from #W0000001, refund {said}",
                       {"order_id": "#W0000001"}, view, _variants())
        assert (found.get("payment_method_id"), found.get("question")) == (method, None)


def test_a_refund_named_to_a_method_not_on_the_account_is_never_sent_elsewhere_quietly() -> None:
    view = _store()  # Visa, PayPal and a gift card on the account; no Mastercard
    wish = "return the kettle from #W0000001 and put the money on my new Mastercard"
    asked = ground("return_request", wish, {"order_id": "#W0000001"}, view, _variants())
    assert "payment_method_id" not in asked and asked["ruled_out"]
    assert "not to a payment method that is not on your account" in asked["question"]
    # naming no method at all: the original one, which the proposal names
    found = ground("return_request", "return the kettle from #W0000001", {"order_id": "#W0000001"}, view,
                   _variants())
    assert "question" not in found


def test_the_answer_naming_a_payment_method_continues_the_request_that_asked_for_one() -> None:
    from csagent.understanding_local import LocalUnderstanding

    understanding = LocalUnderstanding(classifier=_Intents(), catalogue=lambda: [],
                                       customer_view=lambda _customer: _store(), variants=_variants)
    waiting = {"intent": "return_request", "parameter": "payment_method_id", "text": "return the kettle",
               "entities": {"order_id": "#W0000001"}}
    # "ok fine, PayPal then", read as out of scope, still gives the method asked for
    read = understanding.understand("ok fine, PayPal then", {"customer_id": "ann", "awaiting": [waiting]})
    assert {c.entities.get("payment_method_id") for c in read.clauses} == {"paypal_1"}
    # with nothing asked, the words are read as they are
    read = understanding.understand("ok fine, PayPal then", {"customer_id": "ann"})
    assert not any(c.entities.get("payment_method_id") for c in read.clauses)


def test_products_joined_by_and_before_a_keep_verb_are_all_kept() -> None:
    from csagent.grounding.resolve import resolve_return_lines

    v = _variants()
    order = OrderView("#W8", "delivered", (
        _line(v[BOOTS][0], BOOTS, "Hiking Boots"), _line(v[KETTLE][0], KETTLE, "Electric Kettle"),
        _line(v[CHAIR][0], CHAIR, "Office Chair")), "card_1")
    returned = resolve_return_lines("I want to return the boots - kettle and chair are staying", order)
    assert [x.name for x in returned or []] == ["Hiking Boots"]
    returned = resolve_return_lines("I want to return the boots and the kettle - the chair is staying", order)
    assert [x.name for x in returned or []] == ["Hiking Boots", "Electric Kettle"]
    # a comma alone joins nothing: "return the kettle, the chair I keep"
    returned = resolve_return_lines("return only the kettle, the chair I keep", order)
    assert [x.name for x in returned or []] == ["Electric Kettle"]


@pytest.mark.parametrize(("intent", "text", "read_as"), [
    # no word about the order: the product's pages and options answer it
    ("product_info", "can I descale my kettle with vinegar?", "product_info"),
    # an option of their own kettle (the 1L white one) named after it: what they bought answers it
    ("product_info", "is my kettle the 1L one?", "order_items"),
    # another version is a catalogue question still
    ("product_info", "do you have my kettle in 2L?", "product_info"),
    # where, when, what was paid, a change: the order
    ("product_info", "when does my kettle arrive?", "order_status"),
    ("product_info", "whats the holdup with my kettle?", "order_status"),
    ("product_availability", "any way to trade my kettle for a lamp?", "order_status"),
    # what their own item is: the order's items, option by option
    ("product_info", "what colour was the kettle I bought?", "order_items"),
    # a statement about it is no question about the product
    ("product_info", "my kettle is the 1L one", "order_status"),
    # read as the order's status for the possessive, but asking what the product does
    ("order_status", "ok dumb q but does my kettle turn itself off or nah", "product_info"),
    ("order_status", "how long does my kettle take to boil?", "product_info"),
    # ... and not when it asks where the order is, in any words
    ("order_status", "is my kettle coming this week?", "order_status"),
    ("order_status", "is the kettle I ordered on its way?", "order_status"),
    ("order_status", "wat address is my kettle going to", "order_status"),
    ("order_status", "can you check on my kettle for me please?", "order_status"),
    ("order_status", "What is the deal with my kettle?", "order_status"),
])
def test_a_question_about_a_purchased_products_features_is_about_the_product(
        intent: str, text: str, read_as: str) -> None:
    assert purchase_intent(intent, "order_status", text, _store()) == read_as


def test_cancelling_one_of_two_of_a_product_is_a_partial_cancellation() -> None:
    view = _store()  # #W0000002 (pending) holds a black and a blue office chair
    found = ground("cancel_order", "I want the black office chair cancelled", {"order_id": "#W0000002"},
                   view, _variants())
    assert found["partial_items"] == ["Office Chair"]
    # ... but "the order with the black chair" only says which order
    found = ground("cancel_order", "please cancel the order with the black office chair",
                   {"order_id": "#W0000002"}, view, _variants())
    assert "partial_items" not in found
    # naming the product of an order of one kettle says which order, nothing more
    found = ground("cancel_order", "cancel my kettle order", {"order_id": "#W0000003"}, view, _variants())
    assert "partial_items" not in found


def _with_addresses() -> CustomerView:
    store = _store()
    cities = {"#W0000001": "Dallas", "#W0000002": "Charlotte", "#W0000003": "Charlotte"}
    orders = tuple(replace(o, address={"address1": "1 Main St", "city": cities[o.order_id],
                                       "state": "TX" if cities[o.order_id] == "Dallas" else "NC"})
                   for o in store.orders)
    return replace(store, orders=orders)


@pytest.mark.parametrize(("text", "expected"), [
    # what an order came to (the boots 112.00 and the kettle 50.00), or one item's price
    ("I see 162.00 on my statement, which order is that?", ["#W0000001"]),
    ("what did I buy for $300.00", ["#W0000002"]),
    # the city an order ships to, or every other city when denied
    ("anything of mine going to dallas?", ["#W0000001"]),
    ("which of my orders are being sent to 1 Main St in Dallas?", ["#W0000001"]),
    ("which of my orders are not going to my home in NC?", ["#W0000001"]),  # a state, in capitals
    ("which of my orders are NOT going to my place in Dallas?", ["#W0000002", "#W0000003"]),
    # the method that paid
    ("which ones went on PayPal?", ["#W0000002"]),
    ("which orders did I pay with my visa", ["#W0000001", "#W0000003"]),
    # facts together narrow each other
    ("which of the ones I paid with visa go to Charlotte?", ["#W0000003"]),
    # no fact named: nothing to say
    ("which of my orders are late?", None),
])
def test_orders_picked_out_by_an_amount_a_city_or_the_method_that_paid(
        text: str, expected: list[str] | None) -> None:
    from csagent.grounding.facts import orders_by_facts

    found = orders_by_facts(text, _with_addresses())
    assert (None if found is None else [o.order_id for o in found]) == expected


def test_a_question_about_which_order_takes_the_facts_of_the_message() -> None:
    from csagent.grounding.frame import find_order

    view = _with_addresses()
    # the amount is in the sentence before the question
    found = find_order("order_items", "From which order is this money?", {}, view,
                       message="I see 162.00 coming back to my card. From which order is this money?")
    assert found["order_id"] == "#W0000001" and found["grounded"]["by"] == "facts"
    # several orders fit: each is answered
    found = find_order("order_status", "are my Charlotte orders pending?", {}, view)
    assert found["order_ids"] == ["#W0000002", "#W0000003"]


def test_keeping_the_rest_in_another_clause_makes_a_cancellation_partial() -> None:
    view = _store()  # #W0000001 holds hiking boots and a kettle
    message = ("I don't need the kettle anymore, but the boots and the rest I still want. "
               "Can you just cancel the kettle part?")
    found = ground("cancel_order", "Can you just cancel the kettle part?", {"order_id": "#W0000001"}, view,
                   _variants(), message)
    assert found["partial_items"] == ["Electric Kettle"]
    # while "the kettle order" only says which order
    found = ground("cancel_order", "cancel the kettle order", {"order_id": "#W0000001"}, view, _variants(),
                   "cancel the kettle order, keep the rest of my orders as they are")
    assert "partial_items" not in found


def test_the_item_described_after_the_change_verb_is_the_one_changed() -> None:
    # Given an order with a black chair (fixed armrests) and a blue one (no armrests), both named first
    order = _store().order("#W0000002")
    assert order is not None
    text = ("I got two office chairs, a black and a blue. I'd like to swap the black one with fixed "
            "armrests for a blue one with adjustable armrests.")
    # When the change is read / Then the black one becomes the blue one with adjustable armrests
    change = resolve_item_changes(text, order, _variants()).changes[0]
    assert (change.line.item_id, change.new and change.new.item_id) == ("c-black-fixed", "c-blue-adjustable")


def _with_cancelled(*extra: OrderView) -> CustomerView:
    """The hand-made store with cancelled orders added (refunded when they were cancelled)."""
    store = _store()
    return replace(store, orders=(*store.orders, *extra))


def test_a_refund_question_is_about_the_order_that_has_one() -> None:
    # Given two pending orders, one delivered and one cancelled
    kettle = next(x for x in _variants()[KETTLE] if x.item_id == "k-2L-black")
    store = _with_cancelled(OrderView("#W0000004", "cancelled", (_line(kettle, KETTLE, "Electric Kettle"),)))
    # When a refund question names no order and no product
    found = ground("refund_status", "did the refund go through?", {}, store, _variants(), "")
    # Then the cancelled order, the only one with a refund, is the one asked about
    assert found["order_id"] == "#W0000004"


def test_a_refund_question_about_both_is_answered_for_each_cancelled_order() -> None:
    # Given two cancelled orders beside the others
    kettle = next(x for x in _variants()[KETTLE] if x.item_id == "k-2L-black")
    store = _with_cancelled(OrderView("#W0000004", "cancelled", (_line(kettle, KETTLE, "Electric Kettle"),)),
                            OrderView("#W0000005", "cancelled", (_line(kettle, KETTLE, "Electric Kettle"),)))
    # When the question is about both, or the total
    both = ground("refund_status", "did both refunds go through?", {}, store, _variants(), "")
    total = ground("refund_status", "how much did I get back in total?", {}, store, _variants(), "")
    # Then each cancelled order is answered, nothing is asked back
    assert both["order_ids"] == total["order_ids"] == ["#W0000004", "#W0000005"]
    assert "question" not in both and "question" not in total


def test_an_amount_to_the_cent_tells_one_order_apart() -> None:
    from csagent.grounding.facts import order_of_amount

    # Given the store's orders: a kettle at $50.00 in two orders, the chairs' order at $600.00
    store = _store()
    # When an amount names the chairs' total / the price both kettle orders share / nothing
    # Then the one order, or none
    assert order_of_amount("I see 600.00 coming back to my PayPal", store) == "#W0000002"
    assert order_of_amount("you charged me 50.00 twice", store) is None
    assert order_of_amount("what's this 12.34 charge?", store) is None


def test_status_words_narrow_the_orders_a_payment_method_paid() -> None:
    from csagent.grounding.frame import orders_named_by_facts

    # Given the Visa paid for a delivered order and a pending one
    store = _store()
    # When the words name the method and a status
    delivered = orders_named_by_facts("order_status", "did my delivered order go on my visa?", {}, store)
    none_fit = orders_named_by_facts("change_payment", "pay my cancelled order with my visa", {}, store)
    # Then the status picks among them; with none in that status, the facts name no order
    assert delivered is not None and delivered["order_id"] == "#W0000001"
    assert none_fit is None


def test_an_order_found_by_its_product_and_a_full_address_to_send_it_to_is_an_address_change() -> None:
    from csagent.understanding_local import LocalUnderstanding

    class _OrderReads(_Intents):
        def classify_many(self, pieces: list[str]) -> list[object]:
            from csagent.nlp.intents import IntentPrediction

            return [IntentPrediction("order_status", 0.8, None, 0.0) for _ in pieces]

    # Given words read as an order question that find the order by its product and give a full address
    chair = {"product_id": CHAIR, "name": "Office Chair", "options": {}}
    understanding = LocalUnderstanding(classifier=_OrderReads(), catalogue=lambda: [chair],
                                       customer_view=lambda _customer: _store(), variants=_variants)
    text = ("The order with the office chair, please send it to other address: "
            "12 Main St, Springfield, IL 62704")
    # When it is understood
    clause = understanding.understand(text, {"customer_id": "ann"}).clauses[0]
    # Then the order with the chairs is to go to that address
    assert (clause.intent, clause.entities["order_id"]) == ("change_order_address", "#W0000002")
    assert clause.entities["address"]["zip"] == "62704"


def test_money_back_without_a_word_for_another_item_is_no_item_change() -> None:
    from csagent.grounding.frame import item_change_intent

    # Given a delivered order with a white kettle, and words naming the black one the customer ordered
    refund = "You sent the wrong kettle, I ordered the black one. I don't want it, I want a refund to my card"
    swap = "You sent the wrong kettle, I ordered the black one. Please swap it"
    # When each is read as a possible item change
    read = {text: item_change_intent("return_request", text, {"order_id": "#W0000001"}, _store(), _variants())
            for text in (refund, swap)}
    # Then money back asked for is the return it was read as; another item asked for is an exchange
    assert read == {refund: "return_request", swap: "change_items"}


@pytest.mark.parametrize(("text", "asks"), [
    ("#W0000001 - kettle 1L or not?", True),  # an option of the order's kettle: what the item is
    ("#W0000001 - has the kettle shipped?", False),  # the order's progress
    ("#W0000001 - the kettle is 1L.", False),  # told, not asked
])
def test_a_question_with_an_option_of_the_orders_item_asks_what_the_item_is(text: str, asks: bool) -> None:
    from csagent.grounding.frame import asks_an_items_option

    order = _store().order("#W0000001")
    products = [{"product_id": KETTLE, "name": "Electric Kettle", "options": {"capacity": "1L"}}]
    assert asks_an_items_option(text, order, products) is asks
    # a product the order does not hold asks nothing of it
    assert asks_an_items_option(text, order, [{**products[0], "product_id": CHAIR}]) is False


def test_a_longer_chinese_name_of_another_product_is_not_read_as_the_shorter_one() -> None:
    from csagent.grounding.resolve import product_mentions

    owned = [{"product_id": "w1", "name": "Wristwatch"}]
    # "智能手表" (smart watch) holds "手表" (watch): a customer who owns only a wristwatch is not
    # talking about it
    assert product_mentions("我的智能手表屏幕卡住不动了", owned) == []
    assert [m.name for m in product_mentions("我的手表不走了", owned)] == ["Wristwatch"]


def test_the_address_an_order_should_go_to_does_not_name_the_order_already_going_there() -> None:
    from csagent.grounding.frame import find_order

    v = _variants()
    kettle = next(x for x in v[KETTLE] if x.item_id == "k-1L-white")
    phoenix = {"address1": "463 Park Avenue", "city": "Phoenix", "state": "AZ", "zip": "85002"}
    view = CustomerView(customer_id="ann", orders=(
        OrderView("#W0000010", "processed", (_line(kettle, KETTLE, "Electric Kettle"),), "card_1", phoenix),
        OrderView("#W0000011", "pending", (), "card_1",
                  {"address1": "1 Elm St", "city": "Austin", "state": "TX"}),
    ), payment_methods=(PaymentView("card_1", "credit_card", "visa", "1234"),))
    # Given "send it to 463 Park Avenue, Phoenix, AZ 85002" (where the processed order already goes)
    text = "please change the shipping address to 463 Park Avenue, Phoenix, AZ 85002"
    entities = {"address": {**phoenix, "country": "USA"}}
    # When the order is found for the address change
    found = find_order("change_order_address", text, entities, view)
    # Then it is the pending order, not the one that already ships to Phoenix
    assert found.get("order_id") == "#W0000011"


def test_a_word_naming_two_products_of_the_order_asks_which_is_returned() -> None:
    from csagent.grounding.resolve import read_return_lines

    electric = Line("e1", "p-electric", "Electric Kettle", 158.90, {"capacity": "1.5L"})
    tea = Line("t1", "p-tea", "Tea Kettle", 102.02, {"material": "stainless steel"})
    order = OrderView("#W0000020", "delivered", (electric, tea), "paypal_1")
    # "return my kettle": both are kettles; which one is asked, never both sent back
    assert read_return_lines("i wanna return my kettle, it's too loud", order) == ([], [electric, tea])
    # "both kettles", or the full name, say which
    assert read_return_lines("return both kettles", order) == ([electric, tea], [])
    assert read_return_lines("return the tea kettle", order) == ([tea], [])


def test_a_person_who_stays_somewhere_keeps_no_item_out_of_the_return() -> None:
    from csagent.grounding.resolve import read_return_lines

    mouse = Line("m1", "p-mouse", "Gaming Mouse", 152.74, {"color": "white"})
    chair = Line("c1", "p-chair", "Office Chair", 431.07, {"color": "black"})
    order = OrderView("#W0000021", "delivered", (mouse, chair), "card_1")
    # Given the item named in a sentence about the nephew's visit
    text = ("I bought that white gaming mouse for my nephew when he was staying with us and he already "
            "has the same one. could I send it back?")
    # Then the mouse is what goes back: "staying" is the nephew's, not the mouse's
    assert read_return_lines(text, order) == ([mouse], [])
    # while an item that stays is still kept out
    assert read_return_lines("the office chair stays, send the gaming mouse back", order) == ([mouse], [])


def test_a_weak_general_clause_naming_only_how_to_pay_is_the_detail_of_the_change_beside_it() -> None:
    from csagent.understanding import Clause
    from csagent.understanding_local.passes import payment_details_folded

    change = Clause("can i swap my black earbuds for the waterproof ones?", "change_items", 0.75,
                    {"order_id": "#W1", "payment_method_id": "paypal_1"})
    detail = Clause("paypal for the diff", "policy_question", 0.48, {})
    assert payment_details_folded([change, detail]) == [change]
    # a question about payments stays one, and so does a detail with no change that settles a payment
    asked = Clause("does paypal cost extra?", "policy_question", 0.48, {})
    assert payment_details_folded([change, asked]) == [change, asked]
    unsettled = Clause("can i swap my black earbuds?", "change_items", 0.75, {"order_id": "#W1"})
    assert payment_details_folded([unsettled, detail]) == [unsettled, detail]


class _Complaints(_Intents):
    """Every clause read as a complaint."""

    def classify_many(self, pieces: list[str]) -> list:
        from csagent.nlp.intents import IntentPrediction

        return [IntentPrediction("complaint", 0.8, None, 0.0) for _ in pieces]


def test_the_charges_a_complaint_names_are_the_orders_that_came_to_them() -> None:
    from csagent.understanding_local import LocalUnderstanding

    # Given three orders, a kettle ($50.00), a chair ($300.00) and boots with a kettle ($162.00)
    v = {x.item_id: x for variants in _variants().values() for x in variants}
    kettle, chair, boots = (_line(v["k-1L-white"], KETTLE, "Electric Kettle"),
                            _line(v["c-black-fixed"], CHAIR, "Office Chair"),
                            _line(v["b-12-leather-yes"], BOOTS, "Hiking Boots"))
    view = CustomerView(customer_id="ann", orders=(
        OrderView("#W1", "pending", (kettle,), "card_1"), OrderView("#W2", "pending", (chair,), "card_1"),
        OrderView("#W3", "delivered", (boots, kettle), "card_1")))
    understanding = LocalUnderstanding(classifier=_Complaints(), catalogue=lambda: [],
                                       customer_view=lambda _customer: view, variants=_variants)
    # When a complaint names two charges, to the cent, and no order
    (clause,) = understanding.understand("you charged my card 300.00 and then ANOTHER 162.00",
                                         {"customer_id": "ann"}).clauses
    # Then it stays a complaint, about the two orders that came to those amounts (not the kettle's)
    assert (clause.intent, clause.entities["order_ids"]) == ("complaint", ["#W2", "#W3"])


def test_status_words_a_question_asks_about_never_pick_the_order() -> None:
    from csagent.grounding.frame import find_order

    # Given two orders with a kettle, one delivered, one pending
    view = _kettles(("#W1", "delivered", "white"), ("#W2", "pending", "white"))
    # When the status is asked after a dash, or in the clause before one that points back at it
    dashed = find_order("order_status", "just wondering about the kettle I ordered - has it shipped yet?",
                        {}, view)
    message = "Has my kettle shipped? My partner keeps asking me about it"
    pointing_back = find_order("order_status", "My partner keeps asking me about it", {}, view, message)
    # Then "shipped" is the question, not which order is meant: both are listed back
    assert dashed["order_candidates"] == pointing_back["order_candidates"] == ["#W1", "#W2"]
    # while status words that describe the order still pick it
    assert find_order("order_status", "is the kettle in my pending order coming soon", {}, view)[
        "order_id"] == "#W2"



def test_a_method_the_customer_stopped_using_or_refused_is_not_where_the_refund_goes() -> None:
    view = _store()  # #W0000001 was paid with the Visa; PayPal and a gift card on the account too
    for wish in ("return the kettle from #W0000001. Could the refund go onto my Mastercard? "
                 "I've stopped using PayPal these days",
                 "return the kettle from #W0000001 but don't put the money back on the card I paid with, "
                 "send it to a new Amex I just got"):
        asked = ground("return_request", wish, {"order_id": "#W0000001"}, view, _variants())
        assert "payment_method_id" not in asked and asked["ruled_out"], wish
        assert "not to a payment method that is not on your account" in asked["question"]


def test_a_money_difference_asked_back_is_no_return() -> None:
    from csagent.grounding.frame import change_intent

    view = _store()
    assert change_intent("policy_question", "please give me back the difference for the kettle", view) \
        == "policy_question"
    assert change_intent("policy_question", "I want to send back the kettle", view) == "return_request"


def test_an_item_named_only_by_its_own_option_is_returned_and_a_kept_one_is_not() -> None:
    view = _store()  # #W0000002 holds a black chair with fixed arms and a blue one with none
    found = ground("return_request", "I'll keep the black one. Send back the blue one.",
                   {"order_id": "#W0000002"}, view, _variants())
    assert found.get("item_ids") == ["c-blue-none"]


def test_a_degree_word_tells_two_items_of_one_product_apart() -> None:
    from csagent.grounding.resolve import read_return_lines

    small = Variant("k-1L-black", {"capacity": "1L", "color": "black"}, 50.0, True)
    large = Variant("k-2L-black", {"capacity": "2L", "color": "black"}, 60.0, True)
    order = OrderView("#W9", "delivered", (_line(small, KETTLE, "Electric Kettle"),
                                           _line(large, KETTLE, "Electric Kettle")), "card_1")
    assert read_return_lines("return the bigger electric kettle", order) == ([order.lines[1]], [])
    assert read_return_lines("return the smaller electric kettle", order) == ([order.lines[0]], [])
    chosen, undecided = read_return_lines("return the electric kettle", order)
    assert len(undecided) == 2  # no degree: asked which


def test_an_address_change_to_where_the_order_already_goes_changes_nothing() -> None:
    home = {"address1": "12 Main St", "address2": "", "city": "Springfield", "state": "IL", "zip": "62704",
            "country": "USA"}
    kettle = _line(_variants()[KETTLE][0], KETTLE, "Electric Kettle")
    view = CustomerView("ann", orders=(OrderView("#W5", "pending", (kettle,), "card_1", home),),
                        payment_methods=(PaymentView("card_1", "credit_card", "visa", "1234"),))
    same = ground("change_order_address", "leave it going to my home address",
                  {"order_id": "#W5", "address": {**home, "address1": "12  main st"}}, view, _variants())
    assert same.get("already_ships_there") == same["address"]
    moved = ground("change_order_address", "send it to 9 Elm St", {"order_id": "#W5", "address": {
        **home, "address1": "9 Elm St", "zip": "62701"}}, view, _variants())
    assert "already_ships_there" not in moved


def test_words_put_as_a_question_lend_no_variant_to_a_clause_that_asks_for_nothing() -> None:
    from csagent.grounding.frame import item_change_intent

    view = _store()  # #W0000003 (pending) holds a 1L white kettle
    message = "my kettle from #W0000003, does it come in black? I want to put it on the shelf"
    assert item_change_intent("out_of_scope", message, {"order_id": "#W0000003"}, view, _variants(),
                              "I want to put it on the shelf") == "out_of_scope"
    wish = "my kettle from #W0000003. I want it in black instead"
    assert item_change_intent("out_of_scope", wish, {"order_id": "#W0000003"}, view, _variants(),
                              "I want it in black instead") == "change_items"


def test_a_contraction_names_no_letter_size() -> None:
    assert find_option_values("let's not, it's fine", {"size": ["S", "M", "L"]}) == []
    assert [h.value for h in find_option_values("in S please", {"size": ["S", "M", "L"]})] == ["S"]


def test_a_letter_after_the_names_its_size() -> None:
    sizes = {"size": ["S", "M", "L"], "color": ["black", "red"]}
    assert [h.value for h in find_option_values("I need the M in same black color", sizes)] == ["M", "black"]
    assert find_option_values("I need a m8 to help", {"size": ["S", "M", "L"]}) == []



@pytest.mark.parametrize(("text", "speaks"), [
    ("can you say me the status of the dumbbells I buy?", True),   # a learner's present tense
    ("the kettle i order last week", True),
    ("can I buy another dumbbell set?", False),                    # a purchase still to make
    ("how much are the dumbbells?", False),
])
def test_the_thing_i_buy_is_a_purchase_made(text: str, speaks: bool) -> None:
    from csagent.grounding.frame import speaks_of_a_purchase

    assert speaks_of_a_purchase(text) is speaks


def test_the_one_not_kept_of_two_items_of_a_product_is_the_one_returned() -> None:
    from csagent.grounding.resolve import read_return_lines

    wet = Variant("s-blue-yes", {"color": "blue", "water resistance": "yes"}, 90.0, True)
    dry = Variant("s-blue-no", {"color": "blue", "water resistance": "no"}, 80.0, True)
    order = OrderView("#W8", "delivered", (_line(wet, "p-speaker", "Bluetooth Speaker"),
                                           _line(dry, "p-speaker", "Bluetooth Speaker")), "card_1")
    text = ("I ended up with two blue speakers, one waterproof and one not. I'd like to keep the waterproof "
            "one and send the other back")
    assert read_return_lines(text, order) == ([order.lines[1]], [])
    # nothing kept by its options: which one is asked
    assert len(read_return_lines("send back one of the blue speakers", order)[1]) == 2


@pytest.mark.parametrize("wish", ["same colour just medium please", "the same blue one but medium"])
def test_a_word_for_two_options_is_read_as_the_one_the_store_has(wish: str) -> None:
    # Given a blue S helmet with high ventilation, the store having it in M (high) but in no blue
    # version with medium ventilation: "medium" names ventilation medium, and is an everyday word
    # for size M
    helmets = tuple(
        Variant(f"h-{size}-{colour}-{vent}", {"size": size, "color": colour, "ventilation": vent},
                150.0 + 10 * "SML".index(size), available=not (vent == "medium" and colour == "blue"))
        for size in "SML" for colour in ("blue", "red") for vent in ("high", "medium"))
    helmet = next(h for h in helmets if h.item_id == "h-S-blue-high")
    order = OrderView("#W0000001", "pending", (_line(helmet, "helmet", "Cycling Helmet"),), "card_1")
    # When the customer asks for "medium"
    (change,) = resolve_item_changes(wish, order, {"helmet": helmets}).changes
    # Then the helmet becomes the blue M, the reading that names a version there is
    assert change.new is not None and change.new.item_id == "h-M-blue-high"


def test_a_word_for_two_options_keeps_its_own_reading_when_that_version_is_there() -> None:
    helmets = tuple(
        Variant(f"h-{size}-{vent}", {"size": size, "ventilation": vent}, 150.0, True)
        for size in "SM" for vent in ("high", "medium"))
    order = OrderView("#W0000001", "pending", (_line(helmets[0], "helmet", "Cycling Helmet"),), "card_1")
    (change,) = resolve_item_changes("make it medium please", order, {"helmet": helmets}).changes
    assert change.new is not None and change.new.options == {"size": "S", "ventilation": "medium"}


_CATALOGUE = [
    {"product_id": BOOTS, "name": "Hiking Boots", "category": "Footwear", "options": {}},
    {"product_id": "p-sneakers", "name": "Sneakers", "category": "Footwear", "options": {}},
    {"product_id": KETTLE, "name": "Electric Kettle", "category": "Home & Kitchen", "options": {}},
    {"product_id": CHAIR, "name": "Office Chair", "category": "Office", "options": {}},
    {"product_id": "p-laptop", "name": "Laptop", "category": "Electronics", "options": {}},
]


def _without_boots() -> CustomerView:
    """Ann's orders with the boots taken out: a kettle delivered, chairs and a kettle pending."""
    store = _store()
    first = replace(store.orders[0], lines=store.orders[0].lines[1:])
    sneakers = replace(store.orders[0].lines[0], product_id="p-sneakers", name="Sneakers", item_id="s-1")
    return replace(store, orders=(first, *store.orders[1:],
                                  OrderView("#W0000004", "delivered", (sneakers,), "card_1")))


def test_an_order_asked_about_by_a_product_never_bought_is_asked_among_the_orders_of_its_kind() -> None:
    from csagent.understanding_local import LocalUnderstanding

    # Given a customer whose only footwear is sneakers, asking where their hiking boots are
    understanding = LocalUnderstanding(classifier=_Intents(), catalogue=lambda: _CATALOGUE,
                                       customer_view=lambda _customer: _without_boots(), variants=_variants)
    (clause,) = understanding.understand("where are my hiking boots?", {"customer_id": "ann"}).clauses
    # Then they are told none of their orders holds them, and asked if the sneakers order is meant
    assert clause.intent == "order_status"
    assert clause.entities["order_candidates"] == ["#W0000004"]
    assert clause.entities["question"].startswith("I don't see the Hiking Boots in your orders. Your order "
                                                   "with footwear: #W0000004 (Sneakers, delivered).")
    # And a product of a kind they never bought: which of their orders, as for any order unnamed
    (clause,) = understanding.understand("where is my laptop?", {"customer_id": "ann"}).clauses
    assert clause.entities["question"].startswith(
        "I don't see the Laptop in your orders. Which of your orders")
    # A message that names the order says which, whatever product it names
    first = understanding.understand("where is my laptop? order #W0000003", {"customer_id": "ann"}).clauses[0]
    assert "not_bought" not in first.entities and "I don't see" not in str(first.entities.get("question"))


@pytest.mark.parametrize(("reply", "picked"), [("yes", True), ("yep that one", True), ("no", False),
                                               ("yes, and cancel my other order too please", False)])
def test_a_yes_picks_the_one_order_offered(reply: str, picked: bool) -> None:
    order = _store().orders[0]
    assert (pick_candidate(reply, [order]) is order) is picked


def test_what_their_own_item_is_asked_is_answered_by_its_order() -> None:
    # "wat color is the tablet i got?": read as a catalogue question, about the product
    assert purchase_intent("product_info", None, "wat color is the kettle i got?", _store(),
                           about_a_product=True) == "order_items"
    assert purchase_intent("product_info", None, "does my kettle switch itself off?", _store(),
                           about_a_product=True) == "product_info"


def test_a_word_naming_two_products_names_the_one_the_customer_bought() -> None:
    from csagent.nlp.entities.products import ProductMention
    from csagent.understanding_local import _owned_of_ambiguous

    electric = ProductMention(KETTLE, "Electric Kettle", 1.0, "kettle", (4, 10), {"color": "white"}, True)
    tea = ProductMention("p-tea", "Tea Kettle", 1.0, "kettle", (4, 10), {}, True)
    # Ann's kettles are Electric Kettles (one white): "my kettle" is one of those
    assert _owned_of_ambiguous("the kettle I got leaks", [electric, tea], _store()) == [electric]
    # a question about the catalogue is not about theirs
    assert _owned_of_ambiguous("do you sell a kettle?", [electric, tea], _store()) == []
    # both bought: the one whose item has the options named, else neither
    tea_line = Line("t-1", "p-tea", "Tea Kettle", 40.0, {"material": "glass"})
    view = replace(_store(), orders=(*_store().orders,
                                     OrderView("#W0000009", "delivered", (tea_line,), "card_1")))
    assert _owned_of_ambiguous("the white kettle I got leaks", [electric, tea], view) == [electric]
    plain = replace(electric, options={})
    assert _owned_of_ambiguous("the kettle I got leaks", [plain, tea], view) == []


@pytest.mark.parametrize(("clause", "products", "puts_or_takes"), [
    ("Could you please add a yoga mat to my pending order?", ["Yoga Mat"], True),
    ("can you put one kettle more inside it?", ["Electric Kettle"], True),
    ("can u throw another pair of boots into my order", ["Hiking Boots"], True),
    ("could you take the kettle off the pending order?", ["Electric Kettle"], True),
    # no product, no container, nothing asked, or nothing of theirs taken out
    ("can you put the refund on my card?", [], False),
    ("do you sell a kettle I could add to my kitchen?", ["Electric Kettle"], False),
    ("I put the kettle in the cupboard", ["Electric Kettle"], False),
    ("can you take the laptop off my order?", ["Laptop"], False),
])
def test_an_item_put_into_or_taken_out_of_an_order_is_asked_for(
        clause: str, products: list[str], puts_or_takes: bool) -> None:
    from csagent.grounding.frame import adds_or_removes_an_item

    entities = {"products": [{"product_id": n, "name": n} for n in products]}
    assert adds_or_removes_an_item(clause, entities, _store()) is puts_or_takes


def test_a_clause_pointing_back_is_about_the_order_of_the_product_it_carries() -> None:
    from csagent.grounding.frame import find_order

    # "... my boots leak, is it still under warranty": "it" carried the boots from the clause before
    message = "did my office chairs ship? also my boots leak, is it still under warranty"
    boots = {"product_id": BOOTS, "name": "Hiking Boots", "surface": "boots", "carried": True}
    carried = {"products": [boots]}
    found = find_order("warranty", "is it still under warranty", carried, _store(), message)
    assert found["order_id"] == "#W0000001"


@pytest.mark.parametrize(("clause", "surface", "theirs"), [
    ("could u tell me the status of my hiking boots", "hiking boots", True),
    ("please cancel my new blue running shoes order", "running shoes", True),
    ("where is the laptop I ordered?", "laptop", True),
    ("cancel my pending order (long story involving my cat and the keyboard)", "keyboard", False),
    ("do you sell a laptop for my son?", "laptop", False),
])
def test_a_product_is_spoken_of_as_theirs(clause: str, surface: str, theirs: bool) -> None:
    from csagent.understanding_local import _named_as_theirs

    assert _named_as_theirs(clause, [{"surface": surface}]) is theirs


@pytest.mark.parametrize(("text", "asked"), [
    ("what did the kettle cost me", ["kettle"]),
    ("what size were the hiking boots and what did the kettle cost", ["boots", "kettle"]),
    # a product that only says which order it is is not asked about
    ("what's in the order with the kettle?", []),
    ("what's in my kettle order?", []),
    ("what did I order with the kettle?", []),
])
def test_the_items_a_question_about_an_order_asks_about(text: str, asked: list[str]) -> None:
    from csagent.grounding.resolve import items_asked_about

    # Given the delivered order with the hiking boots and a kettle
    order = _store().order("#W0000001")
    assert order is not None
    # Then the items asked about are those the question is about, not those naming the order
    ids = {"boots": BOOTS, "kettle": KETTLE}
    assert items_asked_about(text, order) == [ids[a] for a in asked]


@pytest.mark.parametrize(("text", "without"), [
    ("total on my pending order?", "total on my order?"),
    ("what did the order that's on its way cost", "what did the order that's cost"),
    ("我还没发货的订单一共多少钱", "我 的订单一共多少钱"),
])
def test_what_is_asked_of_an_order_picked_by_its_status_is_read_without_the_status(text: str,
                                                                                   without: str) -> None:
    from csagent.grounding.status import without_status_words

    assert without_status_words(text) == without


@pytest.mark.parametrize(("text", "new"), [
    # an option said to be fine is accepted in the wish ("Synthetic is fine." asks for it)
    ("Could I change the boots to a size 7? Synthetic is fine.", "b-7-synthetic-yes"),
    # an item said to be fine is kept as it is, and names no wish for the one changed
    ("I'd like the boots in size 8. The kettle is fine.", "b-8-leather-yes"),
])
def test_a_sentence_saying_something_is_fine_keeps_an_item_but_accepts_an_option(text: str, new: str) -> None:
    from csagent.grounding.resolve import resolve_item_changes

    order = _store().order("#W0000001")
    assert order is not None
    changes = resolve_item_changes(text, order, _variants())
    read = [(c.line.name, c.new.item_id if c.new else None) for c in changes.changes]
    assert read == [("Hiking Boots", new)]


def _two_speakers_and_a_lamp() -> OrderView:
    speaker = "p-speaker"
    return OrderView("#W0000009", "delivered", (
        Line("s-wet", speaker, "Bluetooth Speaker", 289.69,
             {"color": "blue", "battery life": "10 hours", "water resistance": "yes"}),
        Line("s-dry", speaker, "Bluetooth Speaker", 305.45,
             {"color": "blue", "battery life": "10 hours", "water resistance": "no"}),
        Line("l-1", "p-lamp", "Desk Lamp", 150.0, {"color": "black"}),
    ), "card_1")


@pytest.mark.parametrize(("text", "returned"), [
    # a yes/no option read with its own "not" is not negated a second time
    ("send back the blue speaker that is NOT waterproof", ["s-dry"]),
    ("return the speaker that isn't waterproof", ["s-dry"]),
    ("return the waterproof speaker", ["s-wet"]),
    # the options outside the keeping words pick the line returned, those inside it the one kept
    ("please return the waterproof speaker, keep the non-waterproof one", ["s-wet"]),
    ("I'll keep the waterproof speaker, return the one without water resistance", ["s-dry"]),
    # a keeping denied is a return said
    ("The lamp flickers. I'm not keeping it, refund it please", ["l-1"]),
])
def test_the_lines_returned_are_read_with_their_negations_and_what_is_kept(
        text: str, returned: list[str]) -> None:
    from csagent.grounding.resolve import read_return_lines

    lines, undecided = read_return_lines(text, _two_speakers_and_a_lamp())
    assert [x.item_id for x in lines] == returned and not undecided


@pytest.mark.parametrize(("text", "asks"), [
    ("send it back and send me the right one", True),
    ("can I swap it for a medium?", True),
    # a word asking another item that a negation just before rules out asks none
    ("honestly it's not worth the hassle of a swap, I'd just like to send it back", False),
    ("no exchange please, just my money back", False),
])
def test_another_item_asked_unless_ruled_out(text: str, asks: bool) -> None:
    from csagent.grounding.frame import asks_another_item

    assert asks_another_item(text) is asks


def test_a_product_named_as_what_a_thing_is_for_is_not_what_the_words_are_about() -> None:
    from csagent.grounding.frame import not_what_it_is_for
    from csagent.grounding.resolve import product_mentions

    products = [{"product_id": "p1", "name": "Backpack", "options": {}},
                {"product_id": "p2", "name": "Laptop", "options": {}}]
    text = "can i get the backpack in large instead, its for my 17 inch laptop"
    kept = not_what_it_is_for(text, product_mentions(text, products))
    assert [m.name for m in kept] == ["Backpack"]
    # named otherwise, it is
    text = "can i get the backpack in large, and is my laptop shipped?"
    kept = not_what_it_is_for(text, product_mentions(text, products))
    assert {m.name for m in kept} == {"Backpack", "Laptop"}


def test_a_kept_option_that_makes_the_wish_unavailable_offers_the_versions_with_the_wish() -> None:
    # Given synthetic size-12 boots, and no synthetic size 9 in stock
    v = _variants()
    synthetic = next(x for x in v[BOOTS] if x.item_id == "b-12-synthetic-yes")
    order = OrderView("#W0000009", "delivered", (_line(synthetic, BOOTS, "Hiking Boots"),), "card_1")
    # When the customer asks for a 9, keeping the material if it can be kept
    changes = resolve_item_changes("swap the hiking boots for a size 9, same synthetic if you have it",
                                   order, v)
    # Then nothing is chosen for them, and the size 9 that there is is offered
    change = changes.changes[0]
    assert change.new is None and [o.item_id for o in change.options] == ["b-9-leather-yes"]


def test_the_card_of_a_gift_card_is_no_credit_card() -> None:
    # Given an order paid with the gift card (the one a payment change replaces is left out)
    store = _store()
    gift_paid = CustomerView(customer_id=store.customer_id, orders=(
        OrderView("#W0000009", "pending", (Line("i-9", BOOTS, "Hiking Boots", {}, 100.0),),
                  paid_with="gift_1"),
    ), payment_methods=store.payment_methods)
    # When "my gift card" is named with it left out / Then no credit card is read for it
    choice = resolve_payment("can my order go on my gift card instead?", gift_paid,
                             gift_paid.order("#W0000009"), exclude="gift_1")
    assert choice.method is None and not choice.candidates
    # (a card said plainly still is one)
    assert resolve_payment("put it on my card", gift_paid, exclude="gift_1").method is not None


def _visa_only() -> CustomerView:
    """An account holding one Visa, with one pending order paid with it."""
    return CustomerView(customer_id="bo", orders=(
        OrderView("#W0000021", "pending", (Line("i-21", BOOTS, "Hiking Boots", 100.0, {}),), "card_1"),
    ), payment_methods=(PaymentView("card_1", "credit_card", "visa", "1234"),))


@pytest.mark.parametrize(("words", "missing"), [
    ("Is possible to pay the order with PayPal and not with my Visa card?", "PayPal"),
    ("put it on my amex", "American Express"),
    ("could it go on my gift card instead", "gift card"),
    ("use my Mastercard", "Mastercard"),
    ("move it to my visa", None),  # held
    ("not with my PayPal, the visa", None),  # ruled out, not asked for
    ("please change the payment", None),  # none named
])
def test_a_method_the_account_holds_none_of_is_named_as_the_customer_would_say_it(words: str,
                                                                                 missing: str | None) -> None:
    from csagent.grounding.resolve import method_not_held

    assert method_not_held(words, _visa_only()) == missing


def test_a_payment_change_to_a_method_the_account_lacks_proposes_nothing() -> None:
    # Given an account with only the Visa the order is paid with
    # When the customer asks to pay it with PayPal instead (ruling the Visa out)
    found = ground("change_payment",
                   "Is possible to pay the order W0000021 with PayPal and not with my Visa card?",
                   {"order_id": "#W0000021"}, _visa_only(), {}, "")
    # Then the method is said to be missing, and no method (not the Visa it is paid with) is chosen
    assert found.get("method_not_held") == "PayPal" and "payment_method_id" not in found
    # And with PayPal on the account, the change is to it
    store = _store()
    held = ground("change_payment", "can I pay order W0000003 with PayPal and not with my Visa card?",
                  {"order_id": "#W0000003"}, store, _variants(), "")
    assert held.get("payment_method_id") == "paypal_1" and not held.get("method_not_held")


@pytest.mark.parametrize("words", [
    "could you please split the payment so that half goes on my Visa and half on my PayPal?",
    "I'd like half on my visa and the other half on a gift card, please",
])
def test_a_payment_asked_to_be_split_between_methods_proposes_nothing(words: str) -> None:
    found = ground("change_payment", words, {"order_id": "#W0000003"}, _store(), _variants(), "")
    assert found.get("split_asked") is True and "payment_method_id" not in found
    # (one method, named plainly, is a change)
    plain = ground("change_payment", "pay it with my paypal instead", {"order_id": "#W0000003"}, _store(),
                   _variants(), "")
    assert plain.get("payment_method_id") == "paypal_1" and not plain.get("split_asked")


def test_cancelling_an_item_picked_by_its_options_is_a_partial_cancellation() -> None:
    # Given order 2, pending, with a black office chair and a blue one
    # When the customer asks to cancel "the black one"
    found = ground("cancel_order", "Cancel the black one, now.", {"order_id": "#W0000002"}, _store(),
                   _variants(), "Order #W0000002 has TWO office chairs in it. Cancel the black one, now.")
    # Then it is one item of the order: the planner says a cancellation is of the whole order
    assert found.get("partial_items") == ["Office Chair"]
    # (the order named by its product is the whole order)
    whole = ground("cancel_order", "cancel the order with the kettle", {"order_id": "#W0000003"}, _store(),
                   _variants(), "")
    assert not whole.get("partial_items")


class _TrackingIntents(_Intents):
    """Every clause read as a tracking question."""

    def classify_many(self, pieces: list[str]) -> list:
        from csagent.nlp.intents import IntentPrediction

        return [IntentPrediction("tracking", 0.8, None, 0.0) for _ in pieces]


def _two_shipped() -> CustomerView:
    """Two orders on their way (processed) and one delivered."""
    boots = Line("i-b", BOOTS, "Hiking Boots", 100.0, {})
    kettle = Line("i-k", KETTLE, "Electric Kettle", 50.0, {})
    return CustomerView(customer_id="cy", orders=(
        OrderView("#W0000031", "processed", (boots,), "card_1"),
        OrderView("#W0000032", "processed", (kettle,), "card_1"),
        OrderView("#W0000033", "delivered", (kettle,), "card_1"),
    ), payment_methods=(PaymentView("card_1", "credit_card", "visa", "1234"),))


@pytest.mark.parametrize(("text", "each"), [
    ("which of my orders are on the way? and the tracking number of each?", True),
    ("我有哪些订单在路上？各自的快递单号是多少？", True),
    ("which of my orders are on the way? and the tracking number?", False),  # one of them: which, asked
])
def test_a_question_asked_of_each_order_that_fits_is_asked_of_each(text: str, each: bool) -> None:
    from csagent.understanding_local import LocalUnderstanding

    # Given two orders on their way (and one delivered)
    understanding = LocalUnderstanding(classifier=_TrackingIntents(), catalogue=lambda: [],
                                       customer_view=lambda _customer: _two_shipped(), variants=_variants)
    # When, after asking which orders are on their way, a tracking question asks of "each"
    entities = understanding.understand(text, {"customer_id": "cy"}).clauses[-1].entities
    # Then each of them is asked about, no question back; without "each", which one is asked
    if each:
        assert entities["order_ids"] == ["#W0000031", "#W0000032"] and not entities.get("question")
    else:
        assert entities.get("question") and not entities.get("order_ids")


class _ChangeIntents(_Intents):
    """Every clause read as an item change."""

    def classify_many(self, pieces: list[str]) -> list:
        from csagent.nlp.intents import IntentPrediction

        return [IntentPrediction("change_items", 0.85, None, 0.0) for _ in pieces]


@pytest.mark.parametrize(("text", "intent"), [
    # what they bought, told, every option theirs: it asks nothing
    ("I ordered the white 1L electric kettle and I'm really pleased with it", "smalltalk"),
    # what they bought, to be changed into something else: the change
    ("I want to change the white kettle that I ordered to a black one please", "change_items"),
])
def test_a_purchase_told_is_a_change_when_it_is_to_be_changed_to_something(text: str, intent: str) -> None:
    from csagent.understanding_local import LocalUnderstanding

    understanding = LocalUnderstanding(classifier=_ChangeIntents(), catalogue=lambda: [],
                                       customer_view=lambda _customer: _store(), variants=_variants)
    assert understanding.understand(text, {"customer_id": "ann"}).clauses[0].intent == intent


def test_a_question_pointing_back_at_the_last_answer_asks_its_question_again() -> None:
    from csagent.understanding_local import LocalUnderstanding

    # Given the last turn answered "how long is the warranty on it?"
    understanding = LocalUnderstanding(classifier=_Intents(), catalogue=lambda: [],
                                       customer_view=lambda _customer: _store(), variants=_variants)
    state = {"customer_id": "ann", "memory": {"last_question": "warranty",
                                              "last_question_text": "how long is the warranty on it?"}}
    # When "Would that include damage from limescale?" is read as nothing of the store's
    clause = understanding.understand("Would that include damage from limescale?", state).clauses[-1]
    # Then it is the warranty question again, about what "that" points back at
    assert clause.intent == "warranty" and clause.text.startswith("how long is the warranty on it?")
    # while a statement pointing back asks nothing of it
    told = understanding.understand("That was quick, thanks", state).clauses[-1]
    assert told.intent != "warranty"


def test_an_address_given_after_a_change_of_where_orders_go_is_where_they_go() -> None:
    from csagent.understanding import Clause
    from csagent.understanding_local.passes import address_of_the_order_change

    change = Clause("I need to change address for all my orders what are not shipped yet",
                    "change_order_address", 0.8, {"order_ids": ["#W1", "#W2"], "asks_for_change": True})
    cedar = {"address1": "55 Cedar Road", "city": "Houston", "state": "TX", "zip": "77002", "country": "USA"}
    given = Clause("New address is 55 Cedar Road, Houston TX 77002, USA", "update_default_address", 0.6,
                   {"address": cedar})
    # Given the address in a sentence of its own: one change, of the orders, to that address
    [merged] = address_of_the_order_change([change, given])
    assert (merged.intent, merged.entities["address"], merged.entities["order_ids"]) == (
        "change_order_address", cedar, ["#W1", "#W2"])
    # while the account named is a change of the account too
    account = Clause("and make 55 Cedar Road, Houston TX 77002 my default address", "update_default_address",
                     0.8, {"address": cedar})
    assert address_of_the_order_change([change, account]) == [change, account]


def test_a_cancellation_naming_nothing_after_the_order_was_told_by_its_items_is_the_whole_order() -> None:
    from csagent.grounding.frame import ground

    laptops = (Line("l1", "p-laptop", "Laptop", 2621.77, {"ram": "16GB"}),
               Line("l2", "p-laptop", "Laptop", 2372.97, {"ram": "32GB"}),
               Line("h1", "p-phones", "Headphones", 353.76, {"type": "over-ear"}))
    view = CustomerView(customer_id="ann", orders=(OrderView("#W0000030", "pending", laptops, "card_1"),))
    message = "我有个订单里面是两台笔记本电脑，应该还没发货吧？帮我取消掉，是我下错单了。"
    # "an order with two laptops in it ... cancel it for me": the laptops said which order
    entities = ground("cancel_order", "帮我取消掉，是我下错单了", {"order_id": "#W0000030"}, view, None,
                      message)
    assert "partial_items" not in entities
    # while a clause picking one of them asks for part of the order (which the planner says it cannot)
    picked = ground("cancel_order", "cancel the 32GB one", {"order_id": "#W0000030"}, view, None,
                    "I have two laptops in that order. cancel the 32GB one")
    assert picked.get("partial_items") == ["Laptop"]


@pytest.mark.parametrize(("bare", "intent", "entities"), [
    ("Switch it over", "change_items", {"question": "Which items should change?"}),
    # read as a return of the item the message named: no return verb, nothing of its own
    ("Switch it over, and get it right this time", "return_request", {"item_ids": ["i1"]}),
])
def test_a_bare_change_verb_beside_a_payment_told_is_that_payment_change_asked(
        bare: str, intent: str, entities: dict[str, object]) -> None:
    from csagent.understanding import Clause
    from csagent.understanding_local.passes import bare_verb_of_a_payment

    told = Clause("I specifically wanted it on the Mastercard", "change_payment", 0.6,
                  {"order_id": "#W1", "payment_method_id": "card_2"})
    verb = Clause(bare, intent, 0.5, {"order_id": "#W1", **entities})
    [asked] = bare_verb_of_a_payment([told, verb])
    assert (asked.intent, asked.entities["asks_for_change"]) == ("change_payment", True)
    # a return asked in its own words stays one
    back = Clause("and send the chair back", "return_request", 0.8, {"order_id": "#W1", "item_ids": ["i1"]})
    assert bare_verb_of_a_payment([told, back]) == [told, back]


def test_an_address_change_beside_an_order_another_clause_names_by_its_product_is_that_orders() -> None:
    from csagent.grounding.frame import address_intent

    message = "keep the office chair order, no cancelling. only the address changes: 5120 Prairie Avenue, " \
              "Omaha, NE 68132"
    clause = "only the address changes: 5120 Prairie Avenue, Omaha, NE 68132"
    read = address_intent("update_default_address", clause, _store(), message=message)
    assert read == "change_order_address"
    # while the account named in the message keeps the address the account's
    told = "The new address is 5120 Prairie Avenue, Omaha, NE 68132. Could you update that on my account? " \
           "Oh and will that order with the office chair go there automatically?"
    assert address_intent("update_default_address", "The new address is 5120 Prairie Avenue, Omaha, NE 68132",
                          _store(), message=told) == "update_default_address"
    # and "my address" changed, beside an order, may be the account's
    moved = "where is my office chair order? also I moved, update my address to 5120 Prairie Avenue, Omaha"
    assert address_intent("update_default_address", "also I moved, update my address to 5120 Prairie Avenue, "
                          "Omaha", _store(), message=moved) == "update_default_address"


def test_a_chinese_cancellation_of_one_of_two_items_is_partial() -> None:
    from csagent.grounding.frame import ground

    watches = (Line("w1", "p-watch", "Wristwatch", 1000.0, {"strap": "silicone"}),
               Line("w2", "p-watch", "Wristwatch", 1100.0, {"strap": "metal"}))
    view = CustomerView(customer_id="ann", orders=(OrderView("#W0000031", "pending", watches, "card_1"),))
    message = "订单 #W0000031 里有两块手表，我只想要一块，能帮我取消其中一块吗？"
    # "two watches in the order, I only want one: can you cancel one of them?": part of the order
    entities = ground("cancel_order", "能帮我取消其中一块吗？", {"order_id": "#W0000031"}, view, None,
                      message)
    assert entities.get("partial_items") == ["Wristwatch"]
