"""Customer-action rules, pure: argument parsing, every policy check on both sides, the planned
effect (refunds, balances, returned lines), the lines listed back to the customer and the
approval flag. The rules must agree with the knowledge base (`knowledge/docs/*.md`), which
restates the store's policy, so some tests read those pages too. No graph, no network.
Exchanges, item modifications and payment changes: `test_actions_changes.py`."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from csagent.actions import policy as p
from csagent.actions.kinds import args_dict, parse_args
from csagent.actions.kinds.cancel_order import CancelArgs, check_cancel
from csagent.actions.kinds.return_items import ReturnArgs
from csagent.actions.policy import ActionName, ArgsError, Violation
from csagent.actions.proposals import (
    ActionPlan,
    build_proposal,
    done_lines,
    plan_action,
    requires_approval,
    summary_lines,
)
from csagent.domain.models import ErrorType

RULES = p.load_rules()
KB = Path(p.__file__).resolve().parents[1] / "knowledge" / "docs"
NOW = datetime(2024, 7, 1, 15, 0, tzinfo=UTC)
US_ADDRESS = {"address1": "12 Main Street", "address2": "Apt 4", "city": "Springfield", "state": "il",
              "zip": "62704", "country": "United States"}


# ------------------------------------------------------------------------------------ facts
def order_facts(status: str = "pending", *, source: str = "gift_card", balance: float = 49.0,
                delivered_at: str | None = None, lines: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Facts as `queries.read_facts` returns them: one order paid by `source`, plus a spare
    gift card and a credit card on the account."""
    lines = lines if lines is not None else [
        {"line_id": "#W1000001/1", "line_no": 1, "item_id": "111", "name": "Water Bottle", "price": 47.84,
         "option_text": "capacity: 1000ml"},
        {"line_id": "#W1000001/2", "line_no": 2, "item_id": "222", "name": "Office Chair", "price": 488.81,
         "option_text": "color: black"},
    ]
    if delivered_at:
        lines = [{**line, "delivered_at": delivered_at} for line in lines]
    paid_with = {"gift_card": "gift_card_1", "credit_card": "credit_card_1", "paypal": "paypal_1"}[source]
    total = round(sum(line["price"] for line in lines), 2)
    return {
        "customer_id": "cust_1",
        "order": {"order_id": "#W1000001", "status": status, "total": total, "item_count": len(lines)},
        "ship_to": {"address_id": "order:#W1000001", "address1": "1 Old Road", "address2": "",
                    "city": "Austin", "state": "TX", "zip": "73301", "country": "USA"},
        "lines": lines,
        "transactions": [{"transaction_id": "#W1000001/1", "seq": 1, "type": "payment", "amount": total,
                          "payment_method_id": paid_with}],
        "payment_methods": [
            {"payment_method_id": "credit_card_1", "source": "credit_card", "brand": "visa",
             "last_four": "4242"},
            {"payment_method_id": "gift_card_1", "source": "gift_card", "balance": balance},
            {"payment_method_id": "gift_card_2", "source": "gift_card", "balance": 10.0},
            {"payment_method_id": "paypal_1", "source": "paypal"},
        ],
    }


def customer_facts() -> dict[str, Any]:
    return {"customer_id": "cust_1", "customer": {"customer_id": "cust_1", "zip": "73301"},
            "default_address": {"address_id": "customer:cust_1", "address1": "1 Old Road", "address2": "",
                                "city": "Austin", "state": "TX", "zip": "73301", "country": "USA"}}


def plan(action: ActionName, raw_args: dict[str, Any], facts: dict[str, Any],
         now: datetime = NOW) -> ActionPlan | Violation:
    return plan_action(action, parse_args(action, raw_args, RULES), facts, now, RULES)


def order(status: str = "pending", **kwargs: Any) -> p.OrderFacts:
    return p.OrderFacts.from_graph(order_facts(status, **kwargs))


# ------------------------------------------------------------------------- rules vs the KB
def test_policy_data_restates_the_knowledge_base() -> None:
    # Given the knowledge-base pages the rules come from
    cancellations = (KB / "cancellations.md").read_text()
    returns = (KB / "returns-refunds.md").read_text()
    payments = (KB / "payments-gift-cards.md").read_text()

    # Then the reasons and the refund timing are the ones the pages state, and no page sets a
    # return window: the store's policy has none
    assert all(f'"{reason}"' in cancellations for reason in RULES.cancel_reasons)
    assert "once the order has been delivered" in returns
    pages = {page.name: page.read_text().lower() for page in KB.glob("*.md")}
    assert not [name for name, text in pages.items() if "return window" in text or "30-day" in text
                or "within 30 days" in text]
    assert "gift card are credited immediately" in payments
    assert RULES.refund_timing_for("gift_card") == "immediately"
    assert "5 to 7 business days" in payments and "5 to 7 business days" in RULES.refund_timing_for("paypal")


# ------------------------------------------------------------------------------------ args
@pytest.mark.parametrize("raw", ["#W1234567", "W1234567", "w1234567", " #W1234567 "])
def test_order_ids_are_normalised_to_the_stored_form(raw: str) -> None:
    # When / Then
    assert p.normalise_order_id(raw) == "#W1234567"


@pytest.mark.parametrize("raw", ["", "#W123", "1234567", "#X1234567", "#W12345678"])
def test_malformed_order_ids_are_refused_with_the_expected_shape(raw: str) -> None:
    # When / Then
    with pytest.raises(ArgsError, match="#W1234567"):
        p.normalise_order_id(raw)


def test_address_is_normalised_to_the_graph_shape() -> None:
    # When
    address = p.parse_address(US_ADDRESS, RULES)

    # Then the state is upper case and the country spelled as the dataset does
    assert address.as_dict() == {"address1": "12 Main Street", "address2": "Apt 4", "city": "Springfield",
                                 "state": "IL", "zip": "62704", "country": "USA"}


def test_address_without_country_or_unit_defaults_to_the_us_and_an_empty_unit() -> None:
    # Given
    raw = {k: v for k, v in US_ADDRESS.items() if k not in ("country", "address2")}

    # When
    address = p.parse_address(raw, RULES)

    # Then
    assert (address.country, address.address2) == ("USA", "")


@pytest.mark.parametrize(("field", "value", "message"), [
    ("state", "Illinois", "two-letter code"),
    ("zip", "6270", "5 digits"),
    ("city", "", "city is missing"),
    ("address1", None, "street address is missing"),
    ("address1", "x" * 101, "longer than 100"),
])
def test_incomplete_or_malformed_us_addresses_are_refused(field: str, value: Any, message: str) -> None:
    # Given
    raw = {**US_ADDRESS, field: value}

    # When / Then
    with pytest.raises(ArgsError, match=message):
        p.parse_address(raw, RULES)


@pytest.mark.parametrize("reason", ["no longer needed", "Ordered by Mistake", "  ordered   by mistake "])
def test_cancellation_reasons_from_the_fixed_list_are_accepted(reason: str) -> None:
    # When
    args = parse_args(ActionName.CANCEL_ORDER, {"order_id": "#W1000001", "reason": reason}, RULES)

    # Then
    assert isinstance(args, CancelArgs) and args.reason in RULES.cancel_reasons


@pytest.mark.parametrize(("reason", "message"), [("", "tell me why"), ("found it cheaper", "must be")])
def test_other_cancellation_reasons_are_refused_naming_the_two_allowed(reason: str, message: str) -> None:
    # When / Then
    with pytest.raises(ArgsError, match=message) as caught:
        parse_args(ActionName.CANCEL_ORDER, {"order_id": "#W1000001", "reason": reason}, RULES)
    assert "'no longer needed' or 'ordered by mistake'" in str(caught.value)


def test_return_item_ids_are_sorted_so_the_order_of_mention_does_not_matter() -> None:
    # When
    args = parse_args(ActionName.RETURN_ITEMS, {"order_id": "#W1000001", "item_ids": ["222", 111]}, RULES)

    # Then
    assert isinstance(args, ReturnArgs) and args.item_ids == ("111", "222")


def test_return_item_ids_that_are_not_ids_are_refused() -> None:
    # When / Then
    with pytest.raises(ArgsError, match="not an item id"):
        parse_args(ActionName.RETURN_ITEMS, {"order_id": "#W1000001", "item_ids": ["the chair"]}, RULES)


@settings(deadline=None)  # the first example loads the state list of the entity extractor
@given(st.dictionaries(st.sampled_from(["address1", "address2", "city", "state", "zip", "country"]),
                       st.one_of(st.none(), st.text(max_size=120), st.integers())))
def test_address_parsing_either_returns_an_address_or_a_readable_error(raw: dict[str, Any]) -> None:
    # When
    try:
        address = p.parse_address(raw, RULES)
    except ArgsError as exc:
        # Then a refusal is a sentence
        assert str(exc).endswith(".")
        return
    # Then an accepted address is complete
    assert address.address1 and address.city and address.state and address.zip


# ---------------------------------------------------------------------------- cancel_order
def test_a_pending_order_can_be_cancelled() -> None:
    # When / Then
    assert check_cancel(order("pending"), RULES) is None


@pytest.mark.parametrize(("status", "words"), [
    ("processed", "has already shipped, so it can no longer be cancelled. You can return it"),
    ("delivered", "has already been delivered"),
    ("cancelled", "is already cancelled"),
    ("pending (item modified)", "have already been modified, so it can no longer be cancelled"),
    ("return requested", "return has already been requested"),
    ("exchange requested", "Only pending orders can be cancelled"),
])
def test_orders_that_are_not_pending_cannot_be_cancelled_and_the_reason_says_why(status: str,
                                                                                words: str) -> None:
    # When
    violation = check_cancel(order(status), RULES)

    # Then
    assert violation is not None and violation.error_type is ErrorType.BUSINESS_RULE_VIOLATION
    assert words in violation.message and "#W1000001" in violation.message


def test_cancelling_a_gift_card_order_refunds_the_whole_total_to_the_card_at_once() -> None:
    # When
    result = plan(ActionName.CANCEL_ORDER, {"order_id": "#W1000001", "reason": "no longer needed"},
                  order_facts("pending", source="gift_card", balance=49.0))

    # Then
    assert isinstance(result, ActionPlan) and result.refund is not None
    assert result.new_status == "cancelled"
    assert result.refund.amount == Decimal("536.65")
    assert result.refund.new_balance == Decimal("585.65")
    assert result.refund.timing == "immediately"
    assert (result.refund.transaction_id, result.refund.seq) == ("#W1000001/2", 2)


def test_cancelling_a_card_order_refunds_in_5_to_7_days_and_touches_no_balance() -> None:
    # When
    result = plan(ActionName.CANCEL_ORDER, {"order_id": "#W1000001", "reason": "no longer needed"},
                  order_facts("pending", source="credit_card"))

    # Then
    assert isinstance(result, ActionPlan) and result.refund is not None
    assert result.refund.method.payment_method_id == "credit_card_1"
    assert result.refund.new_balance is None
    assert result.refund.timing == "within 5 to 7 business days"


# -------------------------------------------------------------------- change_order_address
def test_a_pending_orders_address_can_change_to_a_us_address() -> None:
    # When
    result = plan(ActionName.CHANGE_ORDER_ADDRESS, {"order_id": "#W1000001", "address": US_ADDRESS},
                  order_facts("pending"))

    # Then
    assert isinstance(result, ActionPlan)
    assert result.old_address is not None and result.old_address.city == "Austin"
    assert result.new_address is not None and result.new_address.city == "Springfield"


@pytest.mark.parametrize("status", ["processed", "delivered", "cancelled", "pending (item modified)"])
def test_an_order_that_is_not_pending_keeps_its_address(status: str) -> None:
    # When
    result = plan(ActionName.CHANGE_ORDER_ADDRESS, {"order_id": "#W1000001", "address": US_ADDRESS},
                  order_facts(status))

    # Then
    assert isinstance(result, Violation) and result.error_type is ErrorType.BUSINESS_RULE_VIOLATION
    assert "#W1000001" in result.message


@pytest.mark.parametrize("action", [ActionName.CHANGE_ORDER_ADDRESS, ActionName.UPDATE_DEFAULT_ADDRESS])
def test_addresses_outside_the_us_are_refused_because_we_deliver_only_in_the_us(action: ActionName) -> None:
    # Given
    abroad = {"address1": "1 Rue de Rivoli", "city": "Paris", "state": "IDF", "zip": "75001",
              "country": "France"}
    facts = order_facts("pending") if action.on_order else customer_facts()

    # When
    result = plan(action, {"order_id": "#W1000001", "address": abroad}, facts)

    # Then
    assert isinstance(result, Violation) and result.error_type is ErrorType.BUSINESS_RULE_VIOLATION
    assert "United States" in result.message


def test_the_default_address_change_keeps_the_old_address_for_the_record() -> None:
    # When
    result = plan(ActionName.UPDATE_DEFAULT_ADDRESS, {"address": US_ADDRESS}, customer_facts())

    # Then
    assert isinstance(result, ActionPlan) and result.order_id is None
    assert result.before({})["address"]["city"] == "Austin"
    assert result.after()["address"]["city"] == "Springfield"


# ---------------------------------------------------------------------------- return_items
DELIVERED_JUNE_20 = "2024-06-20T14:00:00Z"


def return_args(item_ids: list[str], method: str | None = None) -> dict[str, Any]:
    return {"order_id": "#W1000001", "item_ids": item_ids, "payment_method_id": method}


def test_delivered_items_can_be_returned_to_the_original_method() -> None:
    # When
    result = plan(ActionName.RETURN_ITEMS, return_args(["111"]),
                  order_facts("delivered", source="credit_card", delivered_at=DELIVERED_JUNE_20))

    # Then
    assert isinstance(result, ActionPlan) and result.refund is not None
    assert result.new_status == "return requested"
    assert [line.item_id for line in result.lines] == ["111"]
    assert result.refund.amount == Decimal("47.84")
    assert result.refund.method.payment_method_id == "credit_card_1"
    assert isinstance(result.args, ReturnArgs) and result.args.payment_method_id == "credit_card_1"


def test_a_return_refund_is_credited_after_inspection_not_now() -> None:
    # When: returned to a gift card
    result = plan(ActionName.RETURN_ITEMS, return_args(["111", "222"], "gift_card_2"),
                  order_facts("delivered", source="credit_card", delivered_at=DELIVERED_JUNE_20))

    # Then the request is recorded and no money moves yet (as the reference tool does)
    assert isinstance(result, ActionPlan) and result.refund is not None
    assert result.refund.amount == Decimal("536.65")
    assert result.refund.new_balance is None and result.refund.transaction_id is None
    assert result.transactions == ()
    assert dict(result.order_fields) == {"return_items": ["111", "222"],
                                         "return_payment_method_id": "gift_card_2"}


@pytest.mark.parametrize(("status", "words"), [
    ("pending", "can be cancelled or changed instead"),
    ("processed", "on its way to you"),
    ("cancelled", "nothing to return"),
    ("return requested", "already been requested"),
])
def test_orders_that_are_not_delivered_cannot_be_returned(status: str, words: str) -> None:
    # When
    result = plan(ActionName.RETURN_ITEMS, return_args(["111"]), order_facts(status))

    # Then
    assert isinstance(result, Violation) and result.error_type is ErrorType.BUSINESS_RULE_VIOLATION
    assert words in result.message


@pytest.mark.parametrize("days_after", [0, 31, 365])
def test_a_delivered_order_can_be_returned_however_long_ago_it_was_delivered(days_after: int) -> None:
    # Given an item delivered `days_after` days before today: the store's policy has no window
    delivered = datetime(2024, 5, 1, 23, 30, tzinfo=UTC)
    facts = order_facts("delivered", delivered_at=delivered.strftime("%Y-%m-%dT%H:%M:%SZ"))

    # When
    result = plan(ActionName.RETURN_ITEMS, return_args(["111"]), facts,
                  now=delivered + timedelta(days=days_after))

    # Then
    assert isinstance(result, ActionPlan) and result.new_status == "return requested"


def test_an_item_without_a_delivery_date_can_be_returned() -> None:
    # When the order is delivered but the graph has no delivery date for its lines
    result = plan(ActionName.RETURN_ITEMS, return_args(["111"]), order_facts("delivered"))

    # Then
    assert isinstance(result, ActionPlan) and [line.item_id for line in result.lines] == ["111"]


def test_items_not_in_the_order_are_refused_listing_the_orders_items() -> None:
    # When
    result = plan(ActionName.RETURN_ITEMS, return_args(["999"]), order_facts("delivered",
                                                                            delivered_at=DELIVERED_JUNE_20))

    # Then
    assert isinstance(result, Violation) and result.error_type is ErrorType.VALIDATION
    assert "has no item 999" in result.message
    assert "Water Bottle (item 111), Office Chair (item 222)" in result.message


def test_a_return_without_items_asks_which_items() -> None:
    # When
    result = plan(ActionName.RETURN_ITEMS, return_args([]), order_facts("delivered",
                                                                       delivered_at=DELIVERED_JUNE_20))

    # Then
    assert isinstance(result, Violation) and result.error_type is ErrorType.VALIDATION
    assert result.message.startswith("Which items of order #W1000001")


def test_an_item_listed_twice_needs_two_such_lines() -> None:
    # Given an order with the same item once, and one with it twice
    line = {"line_id": "#W1000001/1", "line_no": 1, "item_id": "111", "name": "Water Bottle", "price": 10.0,
            "option_text": ""}
    once = order_facts("delivered", delivered_at=DELIVERED_JUNE_20, lines=[line])
    twice = order_facts("delivered", delivered_at=DELIVERED_JUNE_20,
                        lines=[line, {**line, "line_id": "#W1000001/2", "line_no": 2}])

    # When
    from_once = plan(ActionName.RETURN_ITEMS, return_args(["111", "111"]), once)
    from_twice = plan(ActionName.RETURN_ITEMS, return_args(["111", "111"]), twice)

    # Then
    assert isinstance(from_once, Violation) and "has only 1 of item 111" in from_once.message
    assert isinstance(from_twice, ActionPlan) and [x.line_id for x in from_twice.lines] == [
        "#W1000001/1", "#W1000001/2"]
    assert from_twice.refund is not None and from_twice.refund.amount == Decimal("20.00")


@pytest.mark.parametrize("method", ["credit_card_other", "paypal_1", "credit_card_2"])
def test_refunds_go_only_to_the_original_method_or_an_existing_gift_card(method: str) -> None:
    # Given an order paid by gift card; `method` is neither it nor another gift card of the customer
    facts = order_facts("delivered", source="gift_card", delivered_at=DELIVERED_JUNE_20)

    # When
    result = plan(ActionName.RETURN_ITEMS, return_args(["111"], method), facts)

    # Then
    assert isinstance(result, Violation) and result.error_type is ErrorType.BUSINESS_RULE_VIOLATION
    assert "original payment method of order #W1000001 or to an existing gift card" in result.message


# ------------------------------------------------------------------ proposals and wording
def test_the_cancellation_is_listed_back_with_items_reason_and_refund() -> None:
    # Given
    result = plan(ActionName.CANCEL_ORDER, {"order_id": "#W1000001", "reason": "ordered by mistake"},
                  order_facts("pending", source="credit_card"))
    assert isinstance(result, ActionPlan)

    # When
    lines = summary_lines(result)

    # Then
    assert lines == [
        "Cancel order #W1000001: Water Bottle ($47.84), Office Chair ($488.81).",
        "Reason: ordered by mistake.",
        "Refund: $536.65 to your Visa ending 4242, within 5 to 7 business days.",
    ]


def test_the_return_is_listed_back_with_the_items_options_and_where_the_refund_goes() -> None:
    # Given
    result = plan(ActionName.RETURN_ITEMS, return_args(["111"], "gift_card_2"),
                  order_facts("delivered", source="credit_card", delivered_at=DELIVERED_JUNE_20))
    assert isinstance(result, ActionPlan)

    # When
    lines = summary_lines(result)

    # Then
    assert lines == ["Return from order #W1000001: Water Bottle (capacity: 1000ml) ($47.84).",
                     "Refund: $47.84 to your gift card (gift_card_2).",
                     "You will receive an email regarding how to return the items."]


def test_address_changes_are_listed_back_from_old_to_new() -> None:
    # Given
    order_change = plan(ActionName.CHANGE_ORDER_ADDRESS, {"order_id": "#W1000001", "address": US_ADDRESS},
                        order_facts("pending"))
    default_change = plan(ActionName.UPDATE_DEFAULT_ADDRESS, {"address": US_ADDRESS}, customer_facts())
    assert isinstance(order_change, ActionPlan) and isinstance(default_change, ActionPlan)

    # When / Then
    assert summary_lines(order_change) == [
        "Change the shipping address of order #W1000001 from 1 Old Road, Austin, TX 73301, USA to "
        "12 Main Street, Apt 4, Springfield, IL 62704, USA."]
    assert summary_lines(default_change)[0].startswith("Change your default address from 1 Old Road")
    assert "already placed keep their current address" in summary_lines(default_change)[1]


def test_done_lines_say_what_changed_and_when_the_money_arrives() -> None:
    # Given
    by_card = plan(ActionName.CANCEL_ORDER, {"order_id": "#W1000001", "reason": "no longer needed"},
                   order_facts("pending", source="paypal"))
    by_gift = plan(ActionName.CANCEL_ORDER, {"order_id": "#W1000001", "reason": "no longer needed"},
                   order_facts("pending", source="gift_card"))
    assert isinstance(by_card, ActionPlan) and isinstance(by_gift, ActionPlan)

    # When / Then
    assert done_lines(by_card) == ["Order #W1000001 is cancelled.",
                                   "$536.65 will be refunded to your PayPal account (paypal_1) within 5 to 7 "
                                   "business days."]
    assert done_lines(by_gift)[1] == ("$536.65 has been refunded to your gift card (gift_card_1); "
                                      "it is available now.")


@pytest.mark.parametrize(("amount", "needed"), [(None, False), ("499.99", False), ("500.00", False),
                                                 ("500.01", True)])
def test_refunds_above_the_threshold_need_approval(amount: str | None, needed: bool) -> None:
    # When / Then
    assert requires_approval(Decimal(amount) if amount else None, Decimal("500.00")) is needed


def test_a_proposal_carries_the_amount_the_approval_flag_and_its_key() -> None:
    # Given a cancellation refunding $536.65
    result = plan(ActionName.CANCEL_ORDER, {"order_id": "W1000001", "reason": "no longer needed"},
                  order_facts("pending"))
    assert isinstance(result, ActionPlan)

    # When
    proposal = build_proposal(result, "cust_1", "session-1:3", Decimal("500.00"))

    # Then
    assert proposal.args == {"order_id": "#W1000001", "reason": "no longer needed"}
    assert proposal.amount == 536.65 and proposal.refund_payment_method_id == "gift_card_1"
    assert proposal.requires_approval is True
    assert proposal.summary[-1].startswith("Because the refund is over $500.00")
    assert proposal.idempotency_key is not None and len(proposal.idempotency_key) == 64


def test_a_proposal_without_a_confirmation_id_has_no_key_yet() -> None:
    # Given
    result = plan(ActionName.UPDATE_DEFAULT_ADDRESS, {"address": US_ADDRESS}, customer_facts())
    assert isinstance(result, ActionPlan)

    # When
    proposal = build_proposal(result, "cust_1", None, Decimal("500.00"))

    # Then
    assert proposal.idempotency_key is None and proposal.requires_approval is False


def test_planning_never_mutates_the_facts_it_is_given() -> None:
    # Given
    facts = order_facts("pending")
    snapshot = copy.deepcopy(facts)

    # When
    plan(ActionName.CANCEL_ORDER, {"order_id": "#W1000001", "reason": "no longer needed"}, facts)

    # Then
    assert facts == snapshot


# ------------------------------------------------------------------- items named in words
def named_return(text: str, product_ids: list[str] | None = None) -> dict[str, Any]:
    extra = {"product_ids": product_ids} if product_ids else {}
    return {"order_id": "#W1000001", "items_text": text, **extra}


def test_an_item_named_by_its_product_name_is_the_one_returned() -> None:
    # Given a delivered order with a Water Bottle and an Office Chair
    facts = order_facts("delivered", source="credit_card", delivered_at=DELIVERED_JUNE_20)

    # When the customer names the chair in their own words
    words = named_return("I want to return the office chair from #W1000001")
    result = plan(ActionName.RETURN_ITEMS, words, facts)

    # Then the chair is returned, and the confirmed arguments carry its item id
    assert isinstance(result, ActionPlan) and result.refund is not None
    assert [line.name for line in result.lines] == ["Office Chair"]
    assert result.refund.amount == Decimal("488.81")
    assert args_dict(result.args)["item_ids"] == ["222"]


def test_everything_returns_every_item_of_the_order() -> None:
    # Given a delivered order with two items
    facts = order_facts("delivered", source="credit_card", delivered_at=DELIVERED_JUNE_20)

    # When the customer asks to return everything
    result = plan(ActionName.RETURN_ITEMS, named_return("please return everything in #W1000001"), facts)

    # Then both items go back
    assert isinstance(result, ActionPlan)
    assert sorted(args_dict(result.args)["item_ids"]) == ["111", "222"]


def test_a_named_item_delivered_months_ago_is_returned() -> None:
    # Given the order's items were delivered four months before today
    facts = order_facts("delivered", delivered_at="2024-03-01T10:00:00Z")

    # When the customer names one of them
    result = plan(ActionName.RETURN_ITEMS, named_return("send back the water bottle"), facts)

    # Then it is returned: there is no return window
    assert isinstance(result, ActionPlan) and args_dict(result.args)["item_ids"] == ["111"]


def test_words_that_name_no_item_of_the_order_ask_which_items() -> None:
    # Given a delivered order without a skateboard
    facts = order_facts("delivered", delivered_at=DELIVERED_JUNE_20)

    # When the customer names a skateboard
    result = plan(ActionName.RETURN_ITEMS, named_return("return the skateboard"), facts)

    # Then they are asked which items, with the order's items listed
    assert isinstance(result, Violation) and result.error_type is ErrorType.VALIDATION
    assert "Water Bottle (item 111), Office Chair (item 222)" in result.message


def test_option_values_that_mean_nothing_alone_keep_their_names() -> None:
    # Given hiking boots whose waterproofing is stored as "no"
    options = '{"size": "11", "material": "leather", "waterproof": "no"}'
    # Then the item reads "11, leather, waterproof: no", not "11, leather, no"
    assert p.option_values(options) == "11, leather, waterproof: no"
    assert p.option_values('{"color": "black", "size": "S"}') == "black, S"
