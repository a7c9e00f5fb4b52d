"""Comparatives over a product's option values: which values have an order, and where "a bigger
zoom", "more storage", "a size up" or "the largest" moves an item's option."""

from __future__ import annotations

import pytest

from csagent.grounding.comparatives import Move, apply_moves, moves, ordered_values


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
