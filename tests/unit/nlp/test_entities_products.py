"""Catalogue products named in a text, with their options (`nlp.entities.products`)."""

from __future__ import annotations

from csagent.nlp.entities.products import find_products


# -- products ------------------------------------------------------------------------------------
def test_product_is_matched_with_its_option(catalogue: list[dict]) -> None:
    # Given a message about a blue water bottle / When products are matched
    [mention] = find_products("the blue water bottle leaks", catalogue)
    # Then the catalogue product is found with color=blue
    assert (mention.name, mention.product_id) == ("Water Bottle", "8310926033")
    assert mention.options == {"color": "blue"}


def test_options_spread_after_the_product_and_written_as_one_word_are_read(catalogue: list[dict]) -> None:
    # Given options listed well after the product, and "wifi" for the catalogue's "Wi-Fi"
    helmets = {"product_id": "7765186836", "name": "Cycling Helmet",
               "options": {"size": ["S", "M", "L"], "color": ["blue", "red", "white"],
                           "ventilation": ["low", "medium", "high"]}}
    bulbs = {"product_id": "2696197613", "name": "LED Light Bulb",
             "options": {"connectivity": ["Wi-Fi", "Bluetooth", "none"]}}
    [helmet] = find_products("I've been eyeing the cycling helmet, specifically the one with size S, "
                             "color blue, ventilation high", [*catalogue, helmets])
    [bulb] = find_products("the cheapest wifi light bulb", [*catalogue, bulbs])
    # Then every option is read, as the catalogue spells it
    assert helmet.options == {"size": "S", "color": "blue", "ventilation": "high"}
    assert bulb.options == {"connectivity": "Wi-Fi"}


def test_plural_and_typo_product_names_still_match(catalogue: list[dict]) -> None:
    # Given "those headphones" and a misspelling / When matched / Then both are Headphones
    assert [m.name for m in find_products("those headphones", catalogue)] == ["Headphones"]
    assert [m.name for m in find_products("my headphnoes broke", catalogue)] == ["Headphones"]
    # "-lves" plurals too: "the two bookshelves" is the Bookshelf
    assert [m.name for m in find_products("the smaller of the two bookshelves", catalogue)] == ["Bookshelf"]


def test_sizes_need_their_key_and_short_sizes_their_case(catalogue: list[dict]) -> None:
    # Given shoes with "size 9" and a t-shirt with "size M"
    shoes = find_products("return the black running shoes in size 9", catalogue)[0]
    shirt = find_products("is the t-shirt available in size M, red?", catalogue)[0]
    # When matched / Then sizes are read only with their key, alongside colours
    assert shoes.options == {"color": "black", "size": "9"}
    assert shirt.options == {"color": "red", "size": "M"}


def test_a_short_value_of_digits_and_letters_needs_no_key(catalogue: list[dict]) -> None:
    # Given a camera asked for "in 5K", without the word "resolution"
    [mention] = find_products("Is the action camera available in 5K?", catalogue)
    # When matched / Then the resolution is read all the same
    assert (mention.name, mention.options) == ("Action Camera", {"resolution": "5K"})

def test_option_shared_by_two_keys_goes_to_the_named_one(catalogue: list[dict]) -> None:
    # Given "black" that could be the frame or the lens colour, next to the word "lens"
    [mention] = find_products("those sunglasses with black lens", catalogue)
    # When matched / Then the option lands on the lens colour only
    assert mention.options == {"lens color": "black"}


def test_bare_head_noun_shared_by_products_is_flagged_ambiguous(catalogue: list[dict]) -> None:
    # Given "camera" while the catalogue has two cameras / When matched
    mentions = find_products("the camera stopped working", catalogue)
    # Then both are returned, flagged ambiguous, so the caller asks which one
    assert {m.name for m in mentions} == {"Action Camera", "Digital Camera"}
    assert all(m.ambiguous and m.score < 0.85 for m in mentions)


def test_options_attach_to_the_nearest_product(catalogue: list[dict]) -> None:
    # Given two products each with its own colour
    mentions = find_products("a red office chair and a silver smart watch", catalogue)
    # When matched / Then each keeps its own colour
    colours = {m.name: m.options.get("color") for m in mentions}
    assert colours == {"Office Chair": "red", "Smart Watch": "silver"}


def test_text_without_products_matches_nothing(catalogue: list[dict]) -> None:
    # Given a message about an address / When matched / Then no product is invented
    assert find_products("please change my address to 9 Elm St, Denver, CO 80202", catalogue) == []


def test_a_word_that_names_two_products_equally_names_both_and_neither_for_sure() -> None:
    # Given two products that customers both call "kettle"
    catalogue = [{"product_id": "e1", "name": "Electric Kettle", "options": {}},
                 {"product_id": "t1", "name": "Tea Kettle", "options": {}},
                 {"product_id": "e1", "name": "kettle", "options": {}},
                 {"product_id": "t1", "name": "kettle", "options": {}}]
    # When a message says "my kettle"
    mentions = find_products("cancel my kettle order", catalogue)
    # Then both are mentioned, each flagged ambiguous (so the customer's orders decide, or they are asked)
    assert sorted((m.product_id, m.ambiguous) for m in mentions) == [("e1", True), ("t1", True)]
    # And a full name still names its product alone
    assert [(m.product_id, m.ambiguous) for m in find_products("my tea kettle", catalogue)] == [("t1", False)]
