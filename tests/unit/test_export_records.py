"""The export's records, pure: rows as the export's queries return them become the dataset's
shapes (fulfilments regrouped, the actions' fields only when present, payment methods with
their own id). No database."""

from __future__ import annotations

from typing import Any

from devstack.export import order_record, user_record

ADDRESS = {"address_id": "order:#W1", "address1": "1 Main St", "address2": "", "city": "Austin",
           "state": "TX", "zip": "73301", "country": "USA"}


def order_row(order: dict[str, Any], shipments: list[dict[str, Any]]) -> dict[str, Any]:
    return {"order": {"order_id": "#W1", "status": "delivered", "total": 10.0, **order}, "user_id": "u1",
            "address": ADDRESS, "shipments": shipments,
            "lines": [{"line_no": 1, "name": "Mug", "product_id": "p1", "item_id": "i1", "price": 10.0,
                       "options_json": '{"color": "red"}'}],
            "payments": [{"transaction_type": "payment", "amount": 10.0, "payment_method_id": "paypal_1"}]}


def test_shipments_are_regrouped_into_the_datasets_fulfilments() -> None:
    # Given two tracking ids of one fulfilment and a second fulfilment
    row = order_row({}, [
        {"tracking_id": "t1", "fulfillment_no": 1, "item_ids": ["i1", "i1"], "line_item_ids": ["i1"]},
        {"tracking_id": "t2", "fulfillment_no": 1, "item_ids": ["i1", "i1"], "line_item_ids": ["i1"]},
        {"tracking_id": "t3", "fulfillment_no": 2, "item_ids": ["i2"], "line_item_ids": []},
    ])

    # When / Then the fulfilments come back with their own item lists
    assert order_record(row)["fulfillments"] == [{"tracking_id": ["t1", "t2"], "item_ids": ["i1", "i1"]},
                                                 {"tracking_id": ["t3"], "item_ids": ["i2"]}]


def test_a_store_seeded_before_fulfilment_numbers_gets_one_fulfilment_per_shipment() -> None:
    # Given shipments without the seed's fulfilment properties
    row = order_row({}, [{"tracking_id": "t1", "fulfillment_no": None, "item_ids": None,
                          "line_item_ids": ["i1"]}])

    # When / Then
    assert order_record(row)["fulfillments"] == [{"tracking_id": ["t1"], "item_ids": ["i1"]}]


def test_an_order_carries_the_actions_fields_only_when_they_were_written() -> None:
    # Given a returned order (with the graph's own request date beside the dataset's fields)
    returned = order_row({"status": "return requested", "return_items": ["i1"],
                          "return_payment_method_id": "paypal_1",
                          "return_requested_at": "2024-07-01T10:00:00Z"}, [])

    # When
    record = order_record(returned)

    # Then the dataset's keys and the reference's fields, nothing of the graph's own
    assert record == {"order_id": "#W1", "user_id": "u1", "address": {k: v for k, v in ADDRESS.items()
                                                                       if k != "address_id"},
                      "items": [{"name": "Mug", "product_id": "p1", "item_id": "i1", "price": 10.0,
                                 "options": {"color": "red"}}],
                      "fulfillments": [], "status": "return requested",
                      "payment_history": [{"transaction_type": "payment", "amount": 10.0,
                                           "payment_method_id": "paypal_1"}],
                      "return_items": ["i1"], "return_payment_method_id": "paypal_1"}


def test_a_payment_method_keeps_only_the_keys_it_has_and_its_own_id() -> None:
    # Given
    row = {"customer": {"customer_id": "u1", "first_name": "Ann", "last_name": "Lee", "email": "a@x",
                        "zip": "1"},
           "address": ADDRESS, "orders": ["#W2", "#W1"],
           "methods": [{"payment_method_id": "gift_card_1", "source": "gift_card", "balance": 24.0},
                       {"payment_method_id": "paypal_1", "source": "paypal"}]}

    # When
    record = user_record(row)

    # Then
    assert record["payment_methods"] == {
        "gift_card_1": {"source": "gift_card", "balance": 24.0, "id": "gift_card_1"},
        "paypal_1": {"source": "paypal", "id": "paypal_1"}}
    assert record["orders"] == ["#W2", "#W1"] and record["name"] == {"first_name": "Ann", "last_name": "Lee"}
