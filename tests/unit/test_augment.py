"""The deterministic additions to tau-retail: categories, order dates, carriers, shipment
histories consistent with the order status."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from devstack.seed import augment

TAU_PRODUCT_NAMES = (
    "Action Camera", "Air Purifier", "Backpack", "Bicycle", "Bluetooth Speaker", "Bookshelf",
    "Coffee Maker", "Cycling Helmet", "Desk Lamp", "Digital Camera", "Dumbbell Set", "E-Reader",
    "Electric Kettle", "Electric Toothbrush", "Espresso Machine", "Fleece Jacket", "Gaming Mouse",
    "Garden Hose", "Grill", "Headphones", "Hiking Boots", "Indoor Security Camera", "Jigsaw Puzzle",
    "LED Light Bulb", "Laptop", "Luggage Set", "Makeup Kit", "Mechanical Keyboard", "Notebook",
    "Office Chair", "Patio Umbrella", "Perfume", "Pet Bed", "Portable Charger", "Running Shoes",
    "Skateboard", "Smart Thermostat", "Smart Watch", "Smartphone", "Sneakers", "Sunglasses",
    "T-Shirt", "Tablet", "Tea Kettle", "Vacuum Cleaner", "Wall Clock", "Water Bottle",
    "Wireless Earbuds", "Wristwatch", "Yoga Mat",
)
TRACKING_IDS = tuple(f"{357962501027 + 7919 * n}" for n in range(200))
CREATED = datetime(2024, 3, 4, 10, 30, tzinfo=UTC)
ISO_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def _shipments(status: str) -> list[augment.ShipmentInfo]:
    return [augment.shipment_for(tid, status, CREATED, "Denver, CO") for tid in TRACKING_IDS]


# --------------------------------------------------------------------------- categories


def test_every_tau_product_name_has_a_store_category() -> None:
    # Given the 50 product names of tau-retail
    # When each is categorised
    categories = {name: augment.category_for(name) for name in TAU_PRODUCT_NAMES}
    # Then none falls back to the generic category
    assert [name for name, cat in categories.items() if cat == augment.FALLBACK_CATEGORY] == []


def test_products_are_grouped_into_sensible_categories() -> None:
    # Given products a shopper would look for in a department
    # When they are categorised
    # Then they land in that department
    assert augment.category_for("Headphones") == "Electronics"
    assert augment.category_for("Office Chair") == "Office"
    assert augment.category_for("T-Shirt") == "Apparel"
    assert augment.category_for("Coffee Maker") == "Home & Kitchen"


def test_category_lookup_ignores_case_and_surrounding_space() -> None:
    # Given a product name written differently
    # When it is categorised
    # Then it gets the same category as its canonical spelling
    assert augment.category_for("  wireless HEADPHONES ") == augment.category_for("Wireless Headphones")


def test_unknown_product_names_fall_back_to_general() -> None:
    # Given a product the map does not know
    # When it is categorised
    # Then it is General
    assert augment.category_for("Quantum Toaster") == "General"


# --------------------------------------------------------------------------- orders and carriers


def test_order_dates_are_fixed_by_the_order_id() -> None:
    # Given a tau order id
    # When its creation date is derived (twice)
    # Then it is the same pinned moment both times (a change here moves every seeded date)
    assert augment.iso(augment.order_created_at("#W2611340")) == "2024-02-26T11:07:47Z"
    assert augment.order_created_at("#W2611340") == augment.order_created_at("#W2611340")


def test_order_dates_fall_in_the_first_half_of_2024() -> None:
    # Given many order ids
    dates = [augment.order_created_at(f"#W{1000000 + n * 7}") for n in range(500)]
    # When their dates are derived
    # Then every date is inside 2024-01-01..2024-06-30 and they spread over the months
    assert all(augment.ORDER_WINDOW_START <= d <= augment.ORDER_WINDOW_END for d in dates)
    assert {d.month for d in dates} == {1, 2, 3, 4, 5, 6}


def test_carriers_are_fixed_by_tracking_id_and_all_four_are_used() -> None:
    # Given many tracking ids
    # When carriers are derived
    carriers = [augment.carrier_for(tid) for tid in TRACKING_IDS]
    # Then the same id always gets the same carrier, and every carrier appears
    assert carriers == [augment.carrier_for(tid) for tid in TRACKING_IDS]
    assert set(carriers) == {"UPS", "FedEx", "USPS", "DHL"}


def test_order_total_is_the_sum_of_item_prices_to_the_cent() -> None:
    # Given an order's items
    items = [{"price": 47.84}, {"price": 488.81}, {"price": 0.1}, {"price": 0.2}]
    # When its totals are derived
    total, count = augment.order_totals(items)
    # Then the total is rounded to cents and the count is the number of lines
    assert (total, count) == (536.95, 4)


# --------------------------------------------------------------------------- shipments


def test_shipment_history_is_deterministic() -> None:
    # Given one shipment
    # When its history is derived twice
    first = augment.shipment_for("357962501027", "processed", CREATED, "New York, NY")
    second = augment.shipment_for("357962501027", "processed", CREATED, "New York, NY")
    # Then both are equal
    assert first == second


def test_delivered_shipments_end_with_a_delivered_event() -> None:
    # Given shipments of delivered orders
    for info in _shipments("delivered"):
        # Then the last event is the delivery, at the recorded delivery time, at the destination
        assert info.status == "delivered"
        assert info.events[-1].status == "delivered"
        assert info.delivered_at == info.events[-1].at
        assert info.events[-1].location == "Denver, CO"


def test_processed_shipments_are_moving_but_never_delivered() -> None:
    # Given shipments of processed orders
    shipments = _shipments("processed")
    for info in shipments:
        # Then they were picked up and are in transit (or out for delivery), never delivered
        statuses = [event.status for event in info.events]
        assert statuses[:3] == ["label_created", "picked_up", "in_transit"]
        assert "delivered" not in statuses
        assert info.delivered_at is None
        assert info.status == statuses[-1]
    # And some, not all, are out for delivery
    assert 0 < sum(info.status == "out_for_delivery" for info in shipments) < len(shipments)


def test_pending_shipments_have_a_label_only() -> None:
    # Given a shipment of a pending order (tau pending orders normally have none)
    for info in _shipments("pending"):
        # Then only the label exists: nothing shipped or delivered
        assert [event.status for event in info.events] == ["label_created"]
        assert (info.status, info.shipped_at, info.delivered_at) == ("label_created", None, None)


def test_cancelled_shipments_stop_after_the_label() -> None:
    # Given shipments of cancelled orders
    for info in _shipments("cancelled"):
        # Then the label was created, then cancelled, and nothing shipped
        assert [event.status for event in info.events] == ["label_created", "cancelled"]
        assert (info.status, info.shipped_at, info.estimated_delivery) == ("cancelled", None, None)


@pytest.mark.parametrize("status", augment.ORDER_STATUSES)
def test_event_times_strictly_increase_after_the_order_was_placed(status: str) -> None:
    # Given shipments in every order status
    for info in _shipments(status):
        # Then events are numbered 1..n, in UTC ISO format, later than the order and each other
        times = [event.at for event in info.events]
        assert [event.seq for event in info.events] == list(range(1, len(times) + 1))
        assert all(ISO_UTC.match(at) for at in times)
        assert times == sorted(set(times))
        assert times[0] > augment.iso(CREATED)


def test_shipped_shipments_are_picked_up_before_their_estimate() -> None:
    # Given shipments that left the warehouse
    for info in _shipments("processed") + _shipments("delivered"):
        # Then shipping happened at pick-up and the estimate comes after it
        assert info.shipped_at == info.events[1].at
        assert info.estimated_delivery is not None and info.estimated_delivery > info.shipped_at


def test_an_unknown_order_status_is_rejected() -> None:
    # Given an order status the dataset never uses
    # When a shipment history is requested for it
    # Then it is refused with the valid statuses named
    with pytest.raises(ValueError, match="unknown order status 'lost'"):
        augment.shipment_for("357962501027", "lost", CREATED, "Denver, CO")
