"""Chinese read through English words: option grounding and knowledge search on Chinese text."""

from __future__ import annotations

import pytest

from csagent.grounding.options import find_option_values, tokens
from csagent.nlp.entities.addresses import names_saved_address
from csagent.nlp.entities.questions import is_general_question
from csagent.nlp.gloss import english_query, gloss
from csagent.nlp.script import spaced


@pytest.mark.parametrize(("text", "expected"), [
    ("付款方式改成PayPal。", "付款方式改成 PayPal。"),
    ("差价用原来那张visa付", "差价用原来那张 visa 付"),
    ("订单#W2570197的状态", "订单 #W2570197 的状态"),
    ("where is order #W2570197", "where is order #W2570197"),
    # a lone capital glued to ideographs is part of the Chinese word: "T恤" is the T-shirt
    ("我的T恤不要取消", "我的 T恤不要取消"),
    ("退AB货", "退 AB 货"),
])
def test_latin_words_in_chinese_text_get_their_word_boundaries(text: str, expected: str) -> None:
    # Given mixed Chinese and English / When spaced / Then English words stand apart; English is untouched
    assert spaced(text) == expected


def test_chinese_option_words_and_the_pivot_of_a_wish_read_as_english_tokens() -> None:
    # Given a Chinese wish with a fallback / When tokenised for the option grounding
    toks = tokens("登山靴想换成9码的，材质不变；如果9码没货就换12码")
    # Then the wish's pivot, the size, "unchanged", the condition and the fallback are all there
    assert toks == ["to", "9", "size", "material", "unchanged", "if", "9", "size", "not", "available",
                    "then", "12", "size"]


def test_a_chinese_colour_names_the_catalogue_value() -> None:
    # Given a mouse's colours / When a Chinese wish is read / Then "白色" is the value "white"
    hits = find_option_values("游戏鼠标能不能换成白色的？", {"color": ["black", "white", "RGB"]})
    assert [(h.key, h.value) for h in hits] == [("color", "white")]


def test_english_text_is_not_glossed() -> None:
    assert gloss("swap it for the white one") == "swap it for the white one"
    assert english_query("how long is the warranty") == "how long is the warranty"


@pytest.mark.parametrize(("text", "expected"), [
    ("我买的耳机保修多久？", "Headphones warranty how long"),
    ("运费怎么收？", "shipping fee"),
    ("我的礼品卡里还剩多少钱？", "gift card left how much"),
    # what a product's documents answer: how it is used, cared for, charged (2026-12-04)
    ("电热水壶怎么除垢？", "Electric Kettle descale"),
    ("智能手表可以戴着游泳吗？", "Smart Watch can swimming"),
    ("我的数码相机要用什么存储卡?", "Digital Camera memory card"),
])
def test_a_chinese_question_searches_by_the_english_words_it_holds(text: str, expected: str) -> None:
    # Given a Chinese store question / When turned into a query for the English knowledge base
    # Then it is the products and store words it names, in order
    assert english_query(text) == expected


def test_a_chinese_question_with_no_known_word_is_kept_as_it_is() -> None:
    assert english_query("今天天气怎么样") == "今天天气怎么样"


@pytest.mark.parametrize(("text", "saved"), [
    ("please ship it to my default address instead", True),
    ("send the kettle order to the address on file", True),
    ("我那个订单请改寄到我账户里的默认地址", True),
    ("ship it to 12 Main St, Springfield, IL 62704", False),
    ("what is my default addressee called", False),
])
def test_words_pointing_at_the_saved_address_are_found(text: str, saved: bool) -> None:
    assert names_saved_address(text) is saved


@pytest.mark.parametrize(("text", "general"), [
    ("退款一般多久能到账？", True),
    ("你们店通常几天发货？", True),
    ("我的退款一般多久到？", False),
    ("这单一般几天到？", False),
    ("退款到账了吗？", False),
])
def test_a_chinese_question_is_general_with_a_general_word_and_nothing_of_the_customer(
        text: str, general: bool) -> None:
    assert is_general_question(text) is general


@pytest.mark.parametrize("text", ["智能手表可以戴着游泳吗？", "is it waterproof?"])
def test_a_question_is_told_by_either_question_mark(text: str) -> None:
    # Given a question ending in the full-width mark Chinese is written with, or the ASCII one
    from csagent.grounding.frame import asks_as_question
    from csagent.nlp.script import has_question_mark

    # Then both are questions, to the word rules and to grounding alike
    assert has_question_mark(text) and asks_as_question(text)
    assert not has_question_mark("我想把手表换成黑色的。")
