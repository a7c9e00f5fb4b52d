"""References the caller resolves, and product references resolved (`nlp.entities.references`)."""

from __future__ import annotations

import pytest

from csagent.nlp.entities.references import Reference, find_references, resolve_product_reference


# -- references ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "kind", "hint"), [
    ("what is the warranty on those headphones", "product", "headphones"),
    ("I want to return that item", "product", None),
    ("is that product still under warranty", "product", None),
    ("cancel that order", "order", None),
    ("这个订单到哪了", "order", None),
    # "model" and "version" are generic nouns; "exact" says which one no more than "same" does
    ("is that exact model still available", "product", None),
    ("do you still sell that version", "product", None),
])
def test_references_are_detected_with_kind_and_hint(text: str, kind: str, hint: str | None) -> None:
    # Given a message pointing at something without naming it / When references are detected
    [ref] = find_references(text)
    # Then its kind and hint are reported for the caller to resolve
    assert (ref.kind, ref.hint) == (kind, hint)


def test_my_last_order_is_a_latest_order_reference() -> None:
    # Given "my last order" / When detected / Then it is an order reference marked latest
    [ref] = find_references("where is my last order?")
    assert (ref.kind, ref.latest) == ("order", True)


@pytest.mark.parametrize(("text", "kind"), [("ship it to my new address", "order"),
                                           ("is it under warranty", "product")])
def test_pronoun_kind_follows_its_verb(text: str, kind: str) -> None:
    # Given "it" governed by a shipping verb or not / When detected / Then the kind follows the verb
    assert [r.kind for r in find_references(text)] == [kind]


@pytest.mark.parametrize("text", ["it's been a week", "the order #W2611340 is late",
                                  "I moved to my new place"])
def test_idioms_and_explicit_ids_are_not_references(text: str) -> None:
    # Given text where "it", "the order" or "my …" point at nothing to resolve / When detected / Then none
    assert find_references(text) == []


CANDIDATES = [
    {"product_id": "6992792935", "name": "Headphones", "order_id": "#W2611340"},
    {"product_id": "8310926033", "name": "Water Bottle", "order_id": "#W2611340"},
    {"product_id": "6992792935", "name": "Headphones", "order_id": "#W1234567"},
]


def test_reference_with_hint_resolves_to_the_matching_ordered_product() -> None:
    # Given "those headphones" and products from the customer's orders
    ref = Reference(kind="product", hint="headphones")
    # When resolved / Then the headphones from the first order listing them are picked
    assert resolve_product_reference(ref, CANDIDATES) == CANDIDATES[0]


def test_fuzzy_hint_resolves_by_name_similarity() -> None:
    # Given a partial, plural hint / When resolved / Then the closest product name wins
    assert resolve_product_reference(Reference("product", "bottles"), CANDIDATES)["name"] == "Water Bottle"


def test_reference_without_hint_resolves_only_when_one_product_is_possible() -> None:
    # Given "that item" / When resolved against one product, then against two
    single = resolve_product_reference(Reference("product"), CANDIDATES[:1])
    several = resolve_product_reference(Reference("product"), CANDIDATES)
    # Then the single candidate is picked, and two different products stay unresolved
    assert single == CANDIDATES[0] and several is None


def test_hint_that_fits_no_candidate_is_not_forced() -> None:
    # Given "the laptop" while the customer only ordered headphones / When resolved
    # Then nothing is picked (asking beats acting on the wrong item)
    assert resolve_product_reference(Reference("product", "laptop"), CANDIDATES[:1]) is None
