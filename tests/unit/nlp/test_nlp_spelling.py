"""The store's spelling corrector (`csagent.nlp.spelling`) on the real word lists."""

from __future__ import annotations

from collections import Counter

import pytest

from csagent.nlp.spelling import SpellingCorrector, corrector, store_vocabulary


@pytest.mark.parametrize(("text", "expected"), [
    ("plz cancle order #W5502903, i orderd it by mistake",
     "plz cancel order #W5502903, i ordered it by mistake"),
    ("i want to retrun the shrit", "i want to return the shirt"),
    ("can i get the trackin numbr for my espreso machine",
     "can i get the tracking number for my espresso machine"),
    ("is my lapotp still under waranty", "is my laptop still under warranty"),
    ("can u add a secnd ketle", "can u add a second kettle"),
])
def test_misspelt_store_words_are_put_right(text, expected):
    assert corrector().correct(text) == expected


@pytest.mark.parametrize("text", [
    "yall sell air fryers? lol",                      # informal on purpose
    "I moved to 3120 Sunset Ridge, Apt 14C",          # a street's name
    "my email is daiki.sanchez7213@example.com",      # an email
    "where is #W2611340",                              # an id
    "the building's package room, my nephew's bike",  # possessives of English words
    "订单#W4514908里都有什么东西？",                       # Chinese
])
def test_english_informal_names_ids_and_chinese_are_left_alone(text):
    assert corrector().correct(text) == text


def test_among_equally_close_words_the_same_letters_then_a_longer_word_win():
    fixer = SpellingCorrector(known=(), vocabulary=Counter({"candle": 50, "cancel": 5, "order": 90,
                                                             "ordered": 3}))
    assert fixer.corrections("cancle orderd") == [("cancle", "cancel"), ("orderd", "ordered")]


def test_the_catalogue_words_given_join_the_store_vocabulary():
    assert store_vocabulary(["Zorblax Blender"])["zorblax"] == 1
    assert corrector(frozenset({"Zorblax Blender"})).correct("my zorblx") == "my zorblax"


def test_the_word_lists_read_from_the_build_arrays_are_those_computed_from_the_texts(tmp_path, monkeypatch):
    # Given the word lists as a fresh process reads them (the arrays `make vectors` ships)
    from csagent.nlp import fixed_vectors, spelling

    shipped_english, shipped_store = spelling.english_words(), spelling._fixed_vocabulary()

    # When they are computed again from the dictionary and the store's texts (no shipped arrays)
    monkeypatch.setenv("VECTORS_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("VECTORS_CACHE_DIR", str(tmp_path / "cache"))
    fixed_vectors.get_vector_settings.cache_clear()
    spelling.english_words.cache_clear()
    spelling._fixed_vocabulary.cache_clear()
    try:
        computed_english, computed_store = spelling.english_words(), spelling._fixed_vocabulary()
    finally:
        fixed_vectors.get_vector_settings.cache_clear()
        spelling.english_words.cache_clear()
        spelling._fixed_vocabulary.cache_clear()

    # Then they are the same words with the same counts ("cancel" is a store word, "hasnt" English)
    assert computed_english == shipped_english and "hasnt" in computed_english
    assert computed_store == shipped_store and computed_store["cancel"] > 0


@pytest.mark.parametrize(("text", "expected"), [
    ("nah switch it to my main addy", "nah switch it to my main address"),
    ("diff back to my card", "difference back to my card"),
    ("the one on my acct", "the one on my account"),
    ("wat did i pay for the sneakers", "what did i pay for the sneakers"),
    ("can i cancel the cam order", "can i cancel the camera order"),
])
def test_a_short_form_customers_write_for_a_store_word_is_that_word(text, expected):
    assert corrector().correct(text) == expected
