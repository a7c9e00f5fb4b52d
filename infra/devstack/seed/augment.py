"""Deterministic additions to the tau-retail shapes: what the dataset lacks, derived from ids.

tau-retail has no dates, carriers, delivery estimates, tracking events or categories. The graph
model (`docs/graph-model.md`) needs them, and tests and evaluations need them to be the same on
every machine and every run, so each value here is a pure function of an id (a SHA-256 of the
id and a purpose tag), never of `random` or the clock. No I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

FALLBACK_CATEGORY = "General"
"""Category for a product name the map below does not know."""

# Every product name in tau-retail (50) plus the demo store's names, mapped to a store category.
PRODUCT_CATEGORIES: Mapping[str, str] = {
    # Electronics
    "action camera": "Electronics",
    "bluetooth speaker": "Electronics",
    "digital camera": "Electronics",
    "e-reader": "Electronics",
    "gaming mouse": "Electronics",
    "headphones": "Electronics",
    "wireless headphones": "Electronics",
    "laptop": "Electronics",
    "mechanical keyboard": "Electronics",
    "portable charger": "Electronics",
    "smart watch": "Electronics",
    "smartphone": "Electronics",
    "tablet": "Electronics",
    "wireless earbuds": "Electronics",
    # Smart Home
    "indoor security camera": "Smart Home",
    "led light bulb": "Smart Home",
    "smart thermostat": "Smart Home",
    # Home & Kitchen
    "air purifier": "Home & Kitchen",
    "bookshelf": "Home & Kitchen",
    "coffee maker": "Home & Kitchen",
    "electric kettle": "Home & Kitchen",
    "espresso machine": "Home & Kitchen",
    "tea kettle": "Home & Kitchen",
    "vacuum cleaner": "Home & Kitchen",
    "wall clock": "Home & Kitchen",
    # Office
    "desk lamp": "Office",
    "notebook": "Office",
    "office chair": "Office",
    # Outdoor
    "garden hose": "Outdoor",
    "grill": "Outdoor",
    "patio umbrella": "Outdoor",
    "water bottle": "Outdoor",
    # Sports
    "bicycle": "Sports",
    "cycling helmet": "Sports",
    "dumbbell set": "Sports",
    "skateboard": "Sports",
    "yoga mat": "Sports",
    # Footwear
    "hiking boots": "Footwear",
    "running shoes": "Footwear",
    "sneakers": "Footwear",
    # Apparel
    "fleece jacket": "Apparel",
    "t-shirt": "Apparel",
    # Accessories
    "sunglasses": "Accessories",
    "wristwatch": "Accessories",
    # Travel
    "backpack": "Travel",
    "luggage set": "Travel",
    # Beauty & Personal Care
    "electric toothbrush": "Beauty & Personal Care",
    "makeup kit": "Beauty & Personal Care",
    "perfume": "Beauty & Personal Care",
    # Toys & Games
    "jigsaw puzzle": "Toys & Games",
    # Pet Supplies
    "pet bed": "Pet Supplies",
}

CARRIERS: tuple[str, ...] = ("UPS", "FedEx", "USPS", "DHL")

# Sort hub per carrier (where parcels are "in transit"), and the fulfilment centres they leave from.
_CARRIER_HUBS: Mapping[str, tuple[str, ...]] = {
    "UPS": ("Louisville, KY", "Chicago, IL", "Dallas, TX", "Ontario, CA"),
    "FedEx": ("Memphis, TN", "Indianapolis, IN", "Oakland, CA", "Newark, NJ"),
    "USPS": ("Kansas City, MO", "Atlanta, GA", "Denver, CO", "Philadelphia, PA"),
    "DHL": ("Cincinnati, OH", "Los Angeles, CA", "Miami, FL", "Salt Lake City, UT"),
}
_FULFILMENT_CENTRES: tuple[str, ...] = (
    "Reno, NV", "Columbus, OH", "Allentown, PA", "Fort Worth, TX", "Jacksonville, FL", "Kent, WA",
)

ORDER_WINDOW_START = datetime(2024, 1, 1, tzinfo=UTC)
ORDER_WINDOW_END = datetime(2024, 6, 30, 23, 59, 59, tzinfo=UTC)

ORDER_STATUSES: tuple[str, ...] = ("pending", "processed", "delivered", "cancelled")


@dataclass(frozen=True, slots=True)
class TrackingEventInfo:
    """One scan in a shipment's history (`TrackingEvent` in the graph, without its ids)."""

    seq: int
    at: str
    status: str
    location: str
    description: str


@dataclass(frozen=True, slots=True)
class ShipmentInfo:
    """What the graph's `Shipment` holds beyond its tracking id, and its event history."""

    carrier: str
    status: str
    shipped_at: str | None
    estimated_delivery: str | None
    delivered_at: str | None
    events: tuple[TrackingEventInfo, ...]


def stable_int(*parts: str) -> int:
    """A non-negative integer fixed by `parts` (SHA-256), the same on every machine and run."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def pick(options: Sequence[Any], *parts: str) -> Any:
    """Choose one of `options` deterministically from `parts`."""
    return options[stable_int(*parts) % len(options)]


def iso(moment: datetime) -> str:
    """ISO-8601 in UTC with a trailing Z, to the second (the graph's date format)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def category_for(product_name: str) -> str:
    """The store category of a product, by its name (case-insensitive); `General` if unknown."""
    return PRODUCT_CATEGORIES.get(product_name.strip().lower(), FALLBACK_CATEGORY)


def carrier_for(tracking_id: str) -> str:
    """The carrier of a shipment, from its tracking id."""
    return pick(CARRIERS, tracking_id, "carrier")


def order_created_at(order_id: str) -> datetime:
    """When an order was placed: a moment in 2024-01-01..2024-06-30 fixed by the order id."""
    span = int((ORDER_WINDOW_END - ORDER_WINDOW_START).total_seconds())
    return ORDER_WINDOW_START + timedelta(seconds=stable_int(order_id, "created_at") % (span + 1))


def order_totals(items: Iterable[Mapping[str, Any]]) -> tuple[float, int]:
    """`(total, item_count)` of an order: the sum of its item prices to the cent, and its lines."""
    prices = [float(item["price"]) for item in items]
    return round(sum(prices), 2), len(prices)


def _hours(tracking_id: str, purpose: str, low: int, high: int) -> timedelta:
    """A duration between `low` and `high` hours (inclusive, minute resolution) fixed by the id."""
    minutes = low * 60 + stable_int(tracking_id, purpose) % ((high - low) * 60 + 1)
    return timedelta(minutes=minutes)


def _event(seq: int, at: datetime, status: str, location: str, description: str) -> TrackingEventInfo:
    return TrackingEventInfo(seq=seq, at=iso(at), status=status, location=location, description=description)


def shipment_for(tracking_id: str, order_status: str, created_at: datetime,
                 destination: str) -> ShipmentInfo:
    """The carrier, dates and event history of one shipment, consistent with its order's status.

    - pending: the label exists at most (status `label_created`, one event);
    - processed: label created, picked up, in transit, maybe out for delivery; never delivered;
    - delivered: the full history ending in `delivered`;
    - cancelled: label created, then `cancelled` before pick-up.
    Timestamps strictly increase; `destination` is the "City, ST" of the shipping address.
    """
    if order_status not in ORDER_STATUSES:
        raise ValueError(f"unknown order status {order_status!r}; expected one of {ORDER_STATUSES}")
    carrier = carrier_for(tracking_id)
    origin = pick(_FULFILMENT_CENTRES, tracking_id, "origin")
    label_at = created_at + _hours(tracking_id, "label", 1, 20)
    label = _event(1, label_at, "label_created", origin, f"Shipping label created, {carrier} awaiting item")
    if order_status == "pending":
        return ShipmentInfo(carrier, "label_created", None, None, None, (label,))
    if order_status == "cancelled":
        cancelled_at = label_at + _hours(tracking_id, "cancel", 1, 30)
        cancel = _event(2, cancelled_at, "cancelled", origin, "Shipment cancelled before pick-up")
        return ShipmentInfo(carrier, "cancelled", None, None, None, (label, cancel))
    return _moving_shipment(tracking_id, order_status, carrier, origin, label, label_at, destination)


def _moving_shipment(tracking_id: str, order_status: str, carrier: str, origin: str,
                     label: TrackingEventInfo, label_at: datetime, destination: str) -> ShipmentInfo:
    """History of a shipment that left the warehouse (processed or delivered orders)."""
    picked_at = label_at + _hours(tracking_id, "pickup", 3, 26)
    transit_days = 2 + stable_int(tracking_id, "transit_days") % 5
    estimated = (picked_at + timedelta(days=transit_days)).replace(hour=20, minute=0, second=0)
    events = [label, _event(2, picked_at, "picked_up", origin, f"Picked up by {carrier}")]
    hubs = _CARRIER_HUBS[carrier]
    hops = 1 + stable_int(tracking_id, "hops") % 2
    moment = picked_at
    for hop in range(hops):
        moment += _hours(tracking_id, f"hop{hop}", 8, 30)
        hub = hubs[(stable_int(tracking_id, "hub") + hop) % len(hubs)]
        events.append(_event(len(events) + 1, moment, "in_transit", hub, f"Arrived at {carrier} facility"))
    if order_status == "processed":
        if stable_int(tracking_id, "out_for_delivery") % 3 == 0:
            moment += _hours(tracking_id, "ofd", 10, 24)
            events.append(_event(len(events) + 1, moment, "out_for_delivery", destination,
                                 "Out for delivery"))
        return ShipmentInfo(carrier, events[-1].status, iso(picked_at), iso(estimated), None, tuple(events))
    # Delivered: out for delivery on the estimated day (give or take one), delivered that afternoon.
    ofd_day = max(moment + timedelta(hours=2), estimated.replace(hour=7)
                  + timedelta(days=stable_int(tracking_id, "slip") % 3 - 1))
    ofd_at = ofd_day + _hours(tracking_id, "ofd_at", 0, 2)
    delivered_at = ofd_at + _hours(tracking_id, "drop", 2, 8)
    events.append(_event(len(events) + 1, ofd_at, "out_for_delivery", destination, "Out for delivery"))
    spot = pick(("front door", "mailroom", "porch", "reception", "side door"), tracking_id, "spot")
    events.append(_event(len(events) + 1, delivered_at, "delivered", destination,
                         f"Delivered, left at {spot}"))
    return ShipmentInfo(carrier, "delivered", iso(picked_at), iso(estimated), iso(delivered_at),
                        tuple(events))
