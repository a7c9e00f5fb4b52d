"""Grounding of wishes that leave a choice open, fall back to a step from the item, or pick an order
by where it goes (pure functions, a small hand-made store; no I/O)."""

from __future__ import annotations

from csagent.grounding.facts import orders_by_facts
from csagent.grounding.frame import find_order, orders_named_by_facts
from csagent.grounding.model import CustomerView, Line, OrderView, Variant
from csagent.grounding.resolve import identifying_order, is_fallback, product_mentions, resolve_item_changes

CLOCK, BIKE, JACKET, GRILL, SHELF = "p-clock", "p-bike", "p-jacket", "p-grill", "p-shelf"
HOME = {"address1": "816 Spruce Street", "city": "Indianapolis", "state": "IN", "zip": "46227",
        "country": "USA"}
MOM = {"address1": "629 Sunset Drive", "city": "San Diego", "state": "CA", "zip": "92159", "country": "USA"}
COUSIN = {"address1": "9 Bay Road", "city": "Houston", "state": "TX", "zip": "77001", "country": "USA"}


def _variants() -> dict[str, tuple[Variant, ...]]:
    def clock(size: str, colour: str, kind: str, price: float, available: bool = True) -> Variant:
        options = {"diameter": f"{size} inches", "color": colour, "type": kind}
        return Variant(f"c-{size}-{colour}-{kind}", options, price, available)

    clocks = (clock("10", "white", "digital", 195.59), clock("12", "white", "analog", 191.55),
              clock("14", "white", "analog", 199.0), clock("10", "wood", "analog", 196.15),
              clock("10", "white", "analog", 190.0, available=False))
    bikes = tuple(Variant(f"b-{size}-{colour}-{kind}", {"frame size": size, "color": colour, "type": kind},
                          price, True)
                  for size, colour, kind, price in (
                      ("medium", "black", "mountain", 2076.50), ("medium", "green", "road", 1917.21),
                      ("medium", "red", "road", 2005.0), ("large", "green", "road", 1800.0)))
    jackets = tuple(Variant(f"j-{size}-red", {"size": size, "color": "red"}, 140.0 + i, True)
                    for i, size in enumerate(("S", "M", "L")))
    grills = (Variant("g-portable", {"type": "electric", "size": "portable"}, 986.65, True),)
    shelves = (Variant("s-brown", {"color": "brown", "material": "wood"}, 505.62, True),)
    return {CLOCK: clocks, BIKE: bikes, JACKET: jackets, GRILL: grills, SHELF: shelves}


def _line(product_id: str, name: str, item_id: str) -> Line:
    variant = next(v for v in _variants()[product_id] if v.item_id == item_id)
    return Line(variant.item_id, product_id, name, variant.price, dict(variant.options))


def _changed_to(wish: str, line: Line) -> list[str]:
    """The item ids the wish changes the one line of a delivered order to."""
    order = OrderView("#W1", "delivered", (line,), "card_1")
    return [c.new.item_id for c in resolve_item_changes(wish, order, _variants()).changes if c.new]


def test_a_fallback_after_a_preference_takes_one_step_from_the_item() -> None:
    # Given a digital wall clock, and no white analog one in its size
    clock = _line(CLOCK, "Wall Clock", "c-10-white-digital")
    wish = ("Could I swap it for an analog one in white? Same size would be ideal but if you don't have "
            "that, a slightly bigger one is fine.")
    # The clause after "but" is a fallback of the wish before it
    assert is_fallback("Same size would be ideal but if you don't have that, a slightly bigger one is fine")
    assert not is_fallback("Same size would be ideal but in white")
    # And "a slightly bigger one" is the next size up, white and analog as wished
    assert _changed_to(wish, clock) == ["c-12-white-analog"]


def test_whichever_colour_is_cheaper_is_the_cheapest_of_those_left_open() -> None:
    wish = ("Could I swap the bike I got for a road bike in the same frame size? Whichever colour is "
            "cheaper, and the difference can go back on my card.")
    # the green road bike in medium (1917.21), not the red one (2005.00) nor another frame size
    assert _changed_to(wish, _line(BIKE, "Bicycle", "b-medium-black-mountain")) == ["b-medium-green-road"]


def test_a_product_the_item_was_got_with_only_says_which_order() -> None:
    view_products = [{"product_id": JACKET, "name": "Fleece Jacket"}, {"product_id": GRILL, "name": "Grill"}]
    text = "the red fleece I got with the grill is swimming on me"
    mentions = product_mentions(text, view_products)
    assert [m.product_id for m in identifying_order(text, mentions)] == [GRILL]


def _orders() -> CustomerView:
    shelf = (_line(SHELF, "Bookshelf", "s-brown"),)
    return CustomerView(customer_id="ann", default_address=HOME, orders=(
        OrderView("#W0000001", "pending", shelf, "card_1", address=HOME),
        OrderView("#W0000002", "pending", shelf, "card_1", address=MOM),
        OrderView("#W0000003", "delivered", shelf, "card_1", address=COUSIN)))


def test_orders_going_somewhere_other_than_home_are_told_apart_by_the_accounts_address() -> None:
    view = _orders()
    found = orders_by_facts("Which of my orders are going somewhere other than my own home address?", view)
    assert [o.order_id for o in found or []] == ["#W0000002", "#W0000003"]
    found = orders_by_facts("which of my orders ship to my home address?", view)
    assert [o.order_id for o in found or []] == ["#W0000001"]
    # "being shipped" says where they go, not how far they have got (no status filter: all three
    # statuses would leave none)
    asked = "which of my orders are being shipped somewhere other than my home address?"
    grounded = orders_named_by_facts("order_status", asked, {}, view)
    assert grounded is not None and grounded["order_ids"] == ["#W0000002", "#W0000003"]
    # a home address named without where orders go is no fact about them
    assert orders_by_facts("my home address is lovely", view) is None


def test_where_an_order_went_picks_among_the_orders_holding_the_product() -> None:
    view = _orders()
    text = ("I ordered the same bookshelf twice, one went to my cousin in Houston. "
            "Can we return the Houston one?")
    grounded = find_order("return_request", "Can we return the Houston one?", {}, view, text)
    assert grounded.get("order_id") == "#W0000003"


def test_cheaper_said_of_where_the_difference_goes_is_no_condition_on_the_change() -> None:
    # Given a black mountain bike; "if it works out cheaper, refund the difference" says where the money
    # goes, it does not ask for a cheaper bike only
    wish = ("I'd like the bike swapped for the red road one, same frame size. If it works out cheaper, "
            "please refund the difference to my card.")
    assert _changed_to(wish, _line(BIKE, "Bicycle", "b-medium-black-mountain")) == ["b-medium-red-road"]


def test_a_value_of_two_dimensions_goes_to_the_one_its_noun_names_and_the_other_to_the_rest() -> None:
    from csagent.grounding.options import find_option_values, tokens
    from csagent.grounding.resolve import _resolve_keys

    dims = {"frame color": ["black", "brown"], "lens color": ["black", "brown", "green"],
            "frame material": ["metal", "plastic"]}
    text = "switch em to the black ones w brown lenses, plastic frame is cool"
    read = _resolve_keys(tokens(text), find_option_values(text, dims))
    assert [(h.key, h.value) for h in read] == [("frame color", "black"), ("lens color", "brown"),
                                                ("frame material", "plastic")]
    text = "a black frame with green lens"
    read = _resolve_keys(tokens(text), find_option_values(text, dims))
    assert [(h.key, h.value) for h in read] == [("frame color", "black"), ("lens color", "green")]
