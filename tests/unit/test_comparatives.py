"""Comparatives over a product's option values: which values have an order, and where "a bigger
zoom", "more storage", "a size up" or "the largest" moves an item's option."""

from __future__ import annotations

import pytest

from csagent.grounding.comparatives import Move, apply_moves, moves, ordered_values, rank_versions


@pytest.mark.parametrize(("values", "ordered"), [
    (["1TB SSD", "256GB SSD", "512GB SSD"], ["256GB SSD", "512GB SSD", "1TB SSD"]),  # units scale
    (["1.5L", "1L", "2L"], ["1L", "1.5L", "2L"]),
    (["1000ml", "500ml", "750ml"], ["500ml", "750ml", "1000ml"]),
    (["30-50 lbs", "5-25 lbs", "55-75 lbs"], ["5-25 lbs", "30-50 lbs", "55-75 lbs"]),
    (["L", "M", "S", "XL", "XS"], ["XS", "S", "M", "L", "XL"]),
    (["large", "medium", "portable"], ["portable", "medium", "large"]),
    (["60%", "80%", "full size"], ["60%", "80%", "full size"]),
    (["10x", "3x", "5x"], ["3x", "5x", "10x"]),
])
def test_values_with_an_order_are_sorted_by_it(values: list[str], ordered: list[str]) -> None:
    assert ordered_values(values) == ordered


@pytest.mark.parametrize("values", [["black", "white", "red"], ["i5", "i7", "i9"], ["8GB"]])
def test_values_without_an_order_have_none(values: list[str]) -> None:
    assert ordered_values(values) is None


CAMERA = ("resolution", "storage", "zoom")
TABLET = ("color", "screen size", "storage")
PHONE = ("RAM", "color", "screen size", "storage")
BOOTS = ("size", "material", "waterproof")


@pytest.mark.parametrize(("text", "keys", "expected"), [
    ("a model with a bigger zoom", CAMERA, [Move("zoom", 1)]),
    ("same tablet but with a bigger screen", TABLET, [Move("screen size", 1)]),
    ("I'd like more memory", PHONE, [Move("RAM", 1)]),
    ("the most storage you have", PHONE, [Move("storage", 1, to_end=True)]),
    ("two sizes down please", BOOTS, [Move("size", -1, 2)]),
    ("go up a size", BOOTS, [Move("size", 1)]),
    ("they're too tight, I need a bigger one", BOOTS, [Move("size", 1)]),  # its usual dimension
    ("a bigger one", CAMERA, []),  # no size-like dimension: nothing to move along
    ("I don't need the hose any longer", ("length", "color"), []),  # "any longer": no more, not length
    ("it is no longer than the old one", ("length", "color"), []),
    ("I don't want a bigger one, just waterproof", BOOTS, []),
    ("can you pick it up from my porch", BOOTS, []),  # "up" names no dimension
    ("a lighter colour", ("color", "weight range"), [Move("color", -1)]),  # the colour, not the weight
    # a plain adjective after more/most/less/least is the comparative it stands for, or its opposite
    ("which is the most cheap one", ("color", "price"), [Move("price", -1, to_end=True)]),
    ("the least expensive", ("color", "price"), [Move("price", -1, to_end=True)]),
    ("something less pricey", ("color", "price"), [Move("price", -1)]),
    ("the most affordable kettle", ("capacity", "price"), [Move("price", -1, to_end=True)]),
    # a comparative with "than" and a value carries the bound
    ("mats thicker than 5mm", ("thickness", "color"), [Move("thickness", 1, beyond="5mm")]),
])
def test_comparative_words_name_a_move(text: str, keys: tuple[str, ...], expected: list[Move]) -> None:
    assert moves(text, keys) == expected


def test_a_move_steps_along_the_products_own_values() -> None:
    dims = {"zoom": ["3x", "10x", "5x"], "storage": ["SD card", "CF card"], "resolution": ["20MP", "30MP"]}
    current = {"zoom": "5x", "storage": "SD card", "resolution": "20MP"}
    assert apply_moves("a bigger zoom please", current, dims) == {"zoom": "10x"}
    assert apply_moves("the highest resolution", current, dims) == {"resolution": "30MP"}
    assert apply_moves("two steps more zoom", {**current, "zoom": "10x"}, dims) == {}  # nothing above 10x
    assert apply_moves("more storage", current, dims) == {}  # card types have no order
    colours = {"color": ["black", "white"], "weight range": ["5-25 lbs", "30-50 lbs"]}
    assert apply_moves("a lighter colour", {"color": "black", "weight range": "30-50 lbs"}, colours) == {}


KETTLES = [
    {"options": {"capacity": "1L", "color": "white"}, "price": 164.46, "available": True},
    {"options": {"capacity": "1L", "color": "black"}, "price": 137.17, "available": True},
    {"options": {"capacity": "2L", "color": "white"}, "price": 159.78, "available": True},
    {"options": {"capacity": "2L", "color": "black"}, "price": 153.81, "available": True},
    {"options": {"capacity": "1.5L", "color": "white"}, "price": 120.00, "available": False},
]


@pytest.mark.parametrize(("text", "named", "value", "prices"), [
    # a superlative along an option: every version in stock at that end, cheapest first
    ("what's the largest kettle you sell?", None, "2L", [153.81, 159.78]),
    ("the smallest one", None, "1L", [137.17, 164.46]),
    # along the price: the one version (out of stock ones never count)
    ("which is the most cheap kettle", None, None, [137.17]),
    ("your priciest kettle", None, None, [164.46]),
    # the options named narrow first: "the cheapest white one"
    ("the cheapest white one", {"color": "white"}, None, [159.78]),
    # a bound: those beyond it
    ("kettles bigger than 1.5L", None, None, [153.81, 159.78]),
    ("anything cheaper than $150", None, None, [137.17]),
])
def test_a_question_ranks_a_products_versions_in_stock(text: str, named: dict[str, str] | None,
                                                       value: str | None, prices: list[float]) -> None:
    ranked = rank_versions(text, KETTLES, named)
    assert ranked is not None
    assert ranked.value == value
    assert [v["price"] for v in ranked.versions] == prices


@pytest.mark.parametrize("text", ["do you have the kettle in black?", "the most colourful kettle"])
def test_words_that_rank_nothing_give_no_ranking(text: str) -> None:
    assert rank_versions(text, KETTLES) is None


def test_a_bound_of_the_dimension_named_does_not_narrow_to_itself() -> None:
    # "thicker than 5mm" grounds the option 5mm too: it is the bound, not a filter
    mats = [{"options": {"thickness": t}, "price": p, "available": True}
            for t, p in (("4mm", 92.53), ("5mm", 103.84), ("6mm", 105.68))]
    ranked = rank_versions("got any yoga mats thicker than 5mm?", mats, {"thickness": "5mm"})
    assert ranked is not None and [v["options"]["thickness"] for v in ranked.versions] == ["6mm"]


@pytest.mark.parametrize(("text", "ranks"), [
    ("what's the largest kettle you sell?", True),
    ("which is the most cheap kettle", True),
    ("kettles bigger than 1.5L", True),
    ("do you have the kettle in black?", False),
    ("a bigger one please", False),  # a comparative with no "than" ranks no catalogue versions
])
def test_the_versions_are_fetched_only_when_the_words_could_rank_them(text: str, ranks: bool) -> None:
    from csagent.grounding.comparatives import may_rank

    assert may_rank(text) is ranks


@pytest.mark.parametrize(("text", "picked"), [
    ("the tall glass bookshelf", 0),
    ("the shorter of my two bookshelves", 1),
    ("the biggest one", 0),
    ("not the taller one", None),   # ruled out: nothing picked
    ("the white bookshelf", None),  # no degree
])
def test_a_degree_word_picks_one_of_several_items(text: str, picked: int | None) -> None:
    from csagent.grounding.comparatives import pick_by_degree

    items = [{"color": "white", "height": "5 ft"}, {"color": "white", "height": "3 ft"}]
    assert pick_by_degree(text, items) == picked
