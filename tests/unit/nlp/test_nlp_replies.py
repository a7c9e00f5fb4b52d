"""Templated replies: rendering, language fallback, and safety against unfilled fields."""

from __future__ import annotations

import pytest

from csagent.nlp.entities.addresses import Address
from csagent.nlp.replies import (
    MissingTemplateFieldError,
    ReplyBook,
    join_items,
    joined,
    load_templates,
    normalise_lang,
    phrase,
    render,
    render_order_status,
    render_phrase,
    template_fields,
)


def test_order_status_reply_states_status_tracking_carrier_and_estimate() -> None:
    # Given a shipped order's facts / When the order-status reply is rendered
    reply = render("order_status", "en", order_id="#W2611340", status="processed", carrier="UPS",
                   tracking_number="357962501027", estimate="June 3")
    # Then the customer reads all four facts in one sentence
    assert reply == ("Order #W2611340 is processed. It's on its way with UPS (tracking number 357962501027) "
                     "and should arrive by June 3.")


def test_order_status_helper_picks_the_variant_the_facts_allow() -> None:
    # Given a pending order without tracking, and a delivered one
    pending = render_order_status(order_id="#W1", status="pending")
    delivered = render_order_status("zh", order_id="#W2", status="delivered")
    # When rendered / Then no empty tracking placeholder appears and delivered orders get their own wording
    assert "no tracking number" in pending and "{" not in pending
    assert delivered.startswith("订单 #W2 已送达")


def test_out_of_scope_reply_says_what_the_assistant_can_do() -> None:
    # Given the out-of-scope template / When rendered in English
    reply = render("out_of_scope")
    # Then it lists the supported tasks
    for capability in ("order status", "tracking", "returns", "refunds", "cancel", "address",
                       "product", "warranty", "person"):
        assert capability in reply


def test_chinese_reply_is_used_when_it_exists() -> None:
    # Given a template with a Chinese version / When rendered for "zh-CN"
    reply = render("handoff", "zh-CN")
    # Then the Chinese text is returned
    assert reply.startswith("正在为您转接人工客服")


def test_missing_chinese_template_falls_back_to_english() -> None:
    # Given a template only written in English
    book = ReplyBook({"en": {"only_en": "Hello {name}."}, "zh": {}})
    # When it is rendered in Chinese / Then the English text is used instead of failing
    assert book.render("only_en", "zh", name="Ana") == "Hello Ana."


def test_missing_field_raises_instead_of_leaking_a_placeholder() -> None:
    # Given the order-status template without a carrier
    # When rendered / Then it refuses, so a customer never sees "{carrier}"
    with pytest.raises(MissingTemplateFieldError):
        render("order_status", order_id="#W1", status="processed", tracking_number="1", estimate="soon")


def test_unknown_template_name_raises() -> None:
    # Given a name no language defines / When rendered / Then the programming error surfaces
    with pytest.raises(KeyError):
        render("no_such_reply")


def test_a_field_called_name_does_not_clash_with_the_template_name() -> None:
    # Given the named greeting, whose field is called "name" / When rendered
    reply = render("greeting_named", "en", name="Ana")
    # Then the customer's name is filled in
    assert reply.startswith("Hi Ana!")


def test_lists_and_addresses_are_formatted_for_the_language() -> None:
    # Given a list of items and an Address value
    address = Address(address1="12 Main St", city="Springfield", state="IL", zip="62704")
    # When rendered in each language
    en = render("order_items", "en", order_id="#W1", items=["Headphones", "Water Bottle"])
    zh = render("order_items", "zh", order_id="#W1", items=["耳机", "水杯"])
    confirm = render("address_confirm", order_id="#W1", address=address)
    # Then lists use the language's separator and the address reads as one line
    assert en == "Order #W1 contains: Headphones, Water Bottle."
    assert zh == "订单 #W1 包含：耳机、水杯。"
    assert "12 Main St, Springfield, IL 62704" in confirm


def test_chinese_templates_use_the_same_fields_as_english() -> None:
    # Given both template files / When their fields are compared per name
    en, zh = load_templates("en"), load_templates("zh")
    # Then every Chinese template needs exactly the fields its English twin needs
    assert {n: template_fields(zh[n]) for n in zh} == {n: template_fields(en[n]) for n in zh}


def test_the_required_templates_exist() -> None:
    # Given the English templates / When listed / Then every reply the graph relies on is there
    required = {"greeting", "thanks", "smalltalk", "clarify_missing_order_id", "clarify_generic",
                "out_of_scope", "order_status", "order_not_found", "handoff", "partial_failure"}
    assert required <= set(load_templates("en")) and required <= set(load_templates("zh"))


def test_every_error_type_has_a_reason_in_both_languages() -> None:
    # Given the error types a tool result can carry
    from csagent.domain.models import ErrorType

    # When their reason templates are looked up / Then each exists in English and Chinese
    for lang in ("en", "zh"):
        assert {f"reason_{e.value}" for e in ErrorType} <= set(load_templates(lang))


def test_partial_failure_reads_as_one_sentence_with_next_step() -> None:
    # Given a failed status lookup / When its reply is composed from the parts
    reply = render("partial_failure", task=render("task_order_status", order_id="#W2611340"),
                   reason=render("reason_timeout"), next_step=render("next_retry_soon"))
    # Then the customer learns what failed, why, and what to do next
    assert reply == ("I couldn't check the status of order #W2611340 right now: our system took too long "
                     "to answer. Please try again in a minute.")


@pytest.mark.parametrize(("lang", "expected"),
                         [("zh-CN", "zh"), ("ZH_hans", "zh"), ("fr", "en"), (None, "en")])
def test_language_codes_are_normalised(lang: str | None, expected: str) -> None:
    # Given assorted language tags / When normalised / Then only supported codes come back
    assert normalise_lang(lang) == expected


def test_items_are_joined_naturally() -> None:
    # Given three items / When joined / Then each language reads naturally
    assert join_items(["a", "b", "c"]) == "a, b and c"
    assert join_items(["甲", "乙", "丙"], "zh") == "甲、乙和丙"


def test_a_phrase_is_said_in_the_language_asked_with_its_parts_joined_for_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from csagent.nlp import replies

    # Given templates of an offer, and a phrase holding a list, a phrase of its own and parts
    # joined as groups and by "or"
    book = ReplyBook({"en": {"offer": "Pick {items}: {choices}.", "item": "{name} ({values})"},
                      "zh": {"offer": "请选{items}：{choices}。", "item": "{name}（{values}）"}})
    monkeypatch.setattr(replies, "get_reply_book", lambda: book)
    lamp = phrase("item", name="Lamp", values=["white", "USB"])
    said = phrase("offer", items=joined([lamp, "Fan"], "groups"), choices=joined(["a", "b"], "or"))
    # When it is said in each language / Then every part is in that language's form
    assert render_phrase(said, "en") == "Pick Lamp (white, USB); Fan: a or b."
    assert render_phrase(said, "zh") == "请选Lamp（white、USB）；Fan：a或b。"


def test_a_phrase_is_plain_json_and_sentences_join_as_the_language_writes_them() -> None:
    import json

    said = joined([phrase("ask_which_one"), phrase("ask_which_to_return")], "sentences")
    # (kept in entities and checkpoints as it is)
    assert json.loads(json.dumps(said)) == said
    assert render_phrase(said, "en") == "Which one do you mean? Which one do you want to return?"
    assert render_phrase(said, "zh") == "请问是哪一件？您想退回哪一件？"
    assert render_phrase(joined(["a", "b", "c"], "and"), "zh") == "a、b和c"
