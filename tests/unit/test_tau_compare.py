"""make tau's judge: a customer's records against the reference end state (pure)."""

from __future__ import annotations

from devstack.tau import compare, differences, load_scripts, sample

USERS = {
    "u1": {
        "name": {"first_name": "A", "last_name": "B"},
        "orders": ["#W1"],
        "payment_methods": {"gift_card_1": {"source": "gift_card", "balance": 10.0, "id": "gift_card_1"}},
    }
}
ORDERS = {
    "#W1": {
        "order_id": "#W1",
        "user_id": "u1",
        "status": "pending",
        "items": [],
        "payment_history": [
            {"transaction_type": "payment", "amount": 5.0, "payment_method_id": "gift_card_1"}
        ],
    }
}
TASK = {
    "user_id": "u1",
    "expected_changes": {
        "orders": {"#W1": {**ORDERS["#W1"], "status": "cancelled", "cancel_reason": "no longer needed"}}
    },
}


def test_the_reference_end_state_passes() -> None:
    exported = {"users": USERS, "orders": {"#W1": TASK["expected_changes"]["orders"]["#W1"]}}
    assert compare(TASK, exported, (USERS, ORDERS, {})) == []


def test_a_write_the_reference_did_not_make_fails() -> None:
    # The order is as the reference has it, but a gift card was debited that the reference left alone
    users = {
        "u1": {
            **USERS["u1"],
            "payment_methods": {"gift_card_1": {"source": "gift_card", "balance": 4.0, "id": "gift_card_1"}},
        }
    }
    exported = {"users": users, "orders": {"#W1": TASK["expected_changes"]["orders"]["#W1"]}}
    assert any("payment_methods" in d for d in compare(TASK, exported, (USERS, ORDERS, {})))


def test_a_missing_field_and_a_cent_are_told_apart() -> None:
    assert differences("order", "#W1", {"a": 1.004}, {"a": 1.0}) == []
    assert differences("order", "#W1", {"a": 1.02}, {"a": 1.0}) != []
    assert differences("order", "#W1", {}, {"a": 1}) == ["order #W1.a: absent, expected 1"]


def test_every_sampled_task_has_a_script_without_ids_a_customer_would_not_know() -> None:
    import re

    scripts = load_scripts()
    assert set(sample()) <= set(scripts)
    for script in scripts.values():
        for turn in (*script.turns, script.confirm):
            assert not re.search(r"\d{10}|credit_card_|gift_card_|paypal_", turn), script.task_id
