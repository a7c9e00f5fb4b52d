"""The built-in demo store: a small, deterministic dataset in the tau-retail shapes.

A user's machine has no `../shared/data/tau-retail`, so `make demo` seeds this store instead.
Everything is derived from fixed tables and SHA-256 hashes of names (never `random`), so
`python -m devstack.seed.demo_store` rewrites `demo/*.json` byte for byte; a unit test holds
the committed files to that. Customer, order, product and tracking ids follow tau's formats but
are the project's own (none is a tau-retail id).

The well-known demo customer is Nora Bennett (`DEMO_CUSTOMER_ID`), who has an order in every
status; `DEMO_ORDER_ID` is her processed (in transit) order with wireless headphones, tracking
number `DEMO_TRACKING_ID`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devstack.seed.augment import stable_int

DEMO_CUSTOMER_ID = "nora_bennett_3842"
DEMO_ORDER_ID = "#W5127498"
"""Nora's processed order (Wireless Headphones + Water Bottle), in transit."""
DEMO_TRACKING_ID = "904317562281"
DEMO_PENDING_ORDER_ID = "#W3096415"
"""Nora's pending order (can still be cancelled or re-addressed)."""
DEMO_DELIVERED_ORDER_ID = "#W8826190"
"""Nora's delivered order (Laptop + Backpack), eligible for return or exchange."""

DEFAULT_OUT_DIR = Path(__file__).resolve().parent / "demo"
GENERATED_ORDERS = 51  # plus Nora's five hand-written orders: 56 in all


@dataclass(frozen=True)
class ProductSpec:
    """A catalogue product: option axes (in display order) and a base price in cents."""

    name: str
    base_cents: int
    axes: tuple[tuple[str, tuple[str, ...]], ...]


PRODUCTS: tuple[ProductSpec, ...] = (
    ProductSpec("Wireless Headphones", 18999, (
        ("color", ("black", "white", "blue", "silver")), ("type", ("over-ear", "on-ear")),
        ("noise cancelling", ("yes", "no")))),
    ProductSpec("Laptop", 109900, (
        ("screen size", ("13-inch", "15-inch")), ("processor", ("i5", "i7", "i9")),
        ("ram", ("8GB", "16GB", "32GB")), ("storage", ("256GB SSD", "512GB SSD", "1TB SSD")),
        ("color", ("silver", "space grey")))),
    ProductSpec("Water Bottle", 2499, (
        ("capacity", ("500ml", "750ml", "1000ml")), ("material", ("stainless steel", "glass", "plastic")),
        ("color", ("black", "blue", "green", "red")))),
    ProductSpec("Backpack", 7900, (
        ("color", ("black", "grey", "navy", "green")), ("size", ("small", "medium", "large")),
        ("material", ("nylon", "polyester", "leather")), ("compartment", ("laptop", "hydration", "camera")))),
    ProductSpec("T-Shirt", 2400, (
        ("color", ("black", "white", "blue", "red", "purple")), ("size", ("S", "M", "L", "XL", "XXL")),
        ("material", ("cotton", "polyester")), ("style", ("crew neck", "v-neck")))),
    ProductSpec("Office Chair", 28900, (
        ("material", ("mesh", "fabric", "leather")), ("color", ("black", "gray", "blue")),
        ("armrest", ("fixed", "adjustable")), ("backrest height", ("standard", "high-back")))),
    ProductSpec("Running Shoes", 11900, (
        ("size", ("7", "8", "9", "10", "11", "12")), ("color", ("black", "white", "red", "yellow")),
        ("material", ("synthetic", "mesh")), ("sole", ("rubber", "EVA")))),
    ProductSpec("Smart Watch", 24900, (
        ("color", ("black", "silver", "gold")), ("band material", ("silicone", "leather", "metal")),
        ("display", ("AMOLED", "LCD")))),
    ProductSpec("Coffee Maker", 8900, (
        ("color", ("black", "stainless steel", "white")), ("capacity", ("4 cups", "8 cups", "12 cups")),
        ("type", ("drip", "pour-over", "single-serve")), ("features", ("timer", "auto shutoff")))),
    ProductSpec("Yoga Mat", 3900, (
        ("thickness", ("4mm", "6mm", "8mm")), ("material", ("PVC", "TPE", "natural rubber")),
        ("color", ("purple", "blue", "green", "pink")))),
    ProductSpec("Desk Lamp", 4500, (
        ("color", ("black", "white", "silver")), ("brightness", ("low", "medium", "high")),
        ("power source", ("USB", "AC adapter", "battery")))),
    ProductSpec("Bluetooth Speaker", 7900, (
        ("color", ("black", "blue", "red")), ("battery life", ("10 hours", "20 hours")),
        ("water resistance", ("yes", "no")))),
    ProductSpec("Portable Charger", 3900, (
        ("capacity", ("5000mAh", "10000mAh", "20000mAh")), ("output", ("USB-A", "USB-C", "wireless")),
        ("color", ("black", "white", "blue")))),
    ProductSpec("Mechanical Keyboard", 12900, (
        ("switch type", ("linear", "tactile", "clicky")), ("backlight", ("none", "white", "RGB")),
        ("size", ("full size", "80%", "60%")))),
)

CUSTOMER_NAMES: tuple[tuple[str, str], ...] = (
    ("Nora", "Bennett"), ("Elena", "Ward"), ("Marcus", "Okafor"), ("Priya", "Raman"),
    ("Diego", "Alvarez"), ("Hana", "Sato"), ("Tomas", "Novak"), ("Leila", "Haddad"),
    ("Oscar", "Lindqvist"), ("Ingrid", "Berg"), ("Kofi", "Mensah"), ("Rosa", "Delgado"),
    ("Felix", "Wagner"), ("Anika", "Sharma"), ("Mateo", "Rivera"), ("Yuki", "Tanaka"),
    ("Grace", "Obi"), ("Samir", "Aziz"), ("Clara", "Fischer"), ("Jonah", "Reyes"),
    ("Zara", "Malik"), ("Bruno", "Costa"), ("Ines", "Moreau"), ("Theo", "Larsen"),
)

CITIES: tuple[tuple[str, str, str], ...] = (
    ("Portland", "OR", "972"), ("Boston", "MA", "021"), ("Austin", "TX", "787"),
    ("Minneapolis", "MN", "554"), ("Atlanta", "GA", "303"), ("Denver", "CO", "802"),
    ("Seattle", "WA", "981"), ("Chicago", "IL", "606"), ("San Diego", "CA", "921"),
    ("Raleigh", "NC", "276"), ("Nashville", "TN", "372"), ("Pittsburgh", "PA", "152"),
)
STREETS: tuple[str, ...] = (
    "Maple Street", "Oak Avenue", "Cedar Lane", "Elm Street", "Hillcrest Drive", "Lakeview Road",
    "Willow Way", "Pine Street", "River Road", "Sunset Boulevard", "Park Avenue", "Chestnut Court",
)
CARD_BRANDS: tuple[str, ...] = ("visa", "mastercard", "amex")
STATUS_CYCLE: tuple[str, ...] = ("pending", "delivered", "processed", "delivered", "cancelled",
                                 "pending", "delivered")


@dataclass(frozen=True)
class OrderSpec:
    """An order to generate: id, owner, status, items as (product name, variant rank), and how
    its items split into shipments (one tracking id per group; empty for pending orders)."""

    order_id: str
    customer_index: int
    status: str
    items: tuple[tuple[str, int], ...]
    shipments: tuple[tuple[str, tuple[int, ...]], ...] = ()


# Nora's orders, written by hand so the demo script can name them.
NORA_ORDERS: tuple[OrderSpec, ...] = (
    OrderSpec("#W6730184", 0, "delivered", (("Office Chair", 0), ("Desk Lamp", 1)),
              (("613058274416", (0,)), ("613058274417", (1,)))),
    OrderSpec(DEMO_DELIVERED_ORDER_ID, 0, "delivered", (("Laptop", 2), ("Backpack", 0)),
              (("731920448105", (0, 1)),)),
    OrderSpec("#W2405871", 0, "cancelled", (("Smart Watch", 1),), (("458201937760", (0,)),)),
    OrderSpec(DEMO_ORDER_ID, 0, "processed", (("Wireless Headphones", 0), ("Water Bottle", 3)),
              ((DEMO_TRACKING_ID, (0, 1)),)),
    OrderSpec(DEMO_PENDING_ORDER_ID, 0, "pending", (("Running Shoes", 2), ("Yoga Mat", 0))),
)


# --------------------------------------------------------------------------- ids and small values


def digits(count: int, *parts: str) -> str:
    """A `count`-digit decimal string (no leading zero) fixed by `parts`."""
    low = 10 ** (count - 1)
    return str(low + stable_int(*parts) % (9 * low))


def customer_id(first: str, last: str) -> str:
    """`first_last_NNNN`, the tau-retail id format (Nora's is fixed: `DEMO_CUSTOMER_ID`)."""
    if (first, last) == ("Nora", "Bennett"):
        return DEMO_CUSTOMER_ID
    return f"{first.lower()}_{last.lower()}_{digits(4, 'customer', first, last)}"


def _cents(value: int) -> float:
    return round(value / 100, 2)


# --------------------------------------------------------------------------- catalogue


def _variant_combos(spec: ProductSpec) -> list[tuple[str, ...]]:
    """6-10 option combinations per product, chosen by hash from all combinations."""
    combos = list(itertools.product(*(values for _, values in spec.axes)))
    combos.sort(key=lambda combo: stable_int("variant", spec.name, *combo))
    return combos[: min(len(combos), 6 + stable_int("variant-count", spec.name) % 5)]


def build_products() -> dict[str, Any]:
    """`products.json`: product id → {name, product_id, variants{item_id: {...}}}."""
    products: dict[str, Any] = {}
    for spec in PRODUCTS:
        product_id = digits(10, "product", spec.name)
        variants: dict[str, Any] = {}
        for combo in _variant_combos(spec):
            item_id = digits(10, "item", spec.name, *combo)
            swing = stable_int("price", spec.name, *combo) % 31 - 15  # -15%..+15%
            variants[item_id] = {
                "item_id": item_id,
                "options": {axis: value for (axis, _), value in zip(spec.axes, combo, strict=True)},
                "available": stable_int("available", item_id) % 7 != 0,
                "price": _cents(spec.base_cents * (100 + swing) // 100),
            }
        products[product_id] = {"name": spec.name, "product_id": product_id, "variants": variants}
    return products


def _variant(products: Mapping[str, Any], name: str, rank: int) -> dict[str, Any]:
    """The `rank`-th variant (mod count) of the product called `name`."""
    product = next(p for p in products.values() if p["name"] == name)
    variant = list(product["variants"].values())[rank % len(product["variants"])]
    return {"name": name, "product_id": product["product_id"], "item_id": variant["item_id"],
            "price": variant["price"], "options": dict(variant["options"])}


# --------------------------------------------------------------------------- customers


def _address(key: str) -> dict[str, str]:
    city, state, zip3 = CITIES[stable_int("city", key) % len(CITIES)]
    suite = stable_int("suite", key) % 3
    street = STREETS[stable_int("street", key) % len(STREETS)]
    return {
        "address1": f"{100 + stable_int('number', key) % 900} {street}",
        "address2": ("", f"Suite {100 + stable_int('suite#', key) % 900}",
                     f"Apt {1 + stable_int('apt', key) % 60}")[suite],
        "city": city, "country": "USA", "state": state, "zip": f"{zip3}{stable_int('zip', key) % 100:02d}",
    }


def _payment_methods(cid: str, index: int) -> dict[str, Any]:
    """1-3 methods per customer; Nora has all three kinds (card, gift card, PayPal)."""
    kinds = ("credit_card", "gift_card", "paypal") if index == 0 else \
        (("credit_card",), ("paypal",), ("credit_card", "gift_card"), ("gift_card", "paypal"))[
            stable_int("methods", cid) % 4]
    methods: dict[str, Any] = {}
    for kind in kinds:
        method_id = f"{kind}_{digits(7, 'method', cid, kind)}"
        method: dict[str, Any] = {"source": kind}
        if kind == "credit_card":
            method["brand"] = CARD_BRANDS[stable_int("brand", cid) % len(CARD_BRANDS)]
            method["last_four"] = f"{stable_int('last4', cid) % 10000:04d}"
        elif kind == "gift_card":
            method["balance"] = 25 + stable_int("balance", cid) % 276
        method["id"] = method_id
        methods[method_id] = method
    return methods


def build_users() -> dict[str, Any]:
    """`users.json` without orders: customer id → {name, address, email, payment_methods, orders}."""
    users: dict[str, Any] = {}
    for index, (first, last) in enumerate(CUSTOMER_NAMES):
        cid = customer_id(first, last)
        users[cid] = {
            "name": {"first_name": first, "last_name": last},
            "address": _address(cid),
            "email": f"{first.lower()}.{last.lower()}{digits(4, 'email', cid)}@example.com",
            "payment_methods": _payment_methods(cid, index),
            "orders": [],
        }
    return users


# --------------------------------------------------------------------------- orders


def generated_order_specs(reserved: set[str]) -> list[OrderSpec]:
    """Orders 1..GENERATED_ORDERS for customers other than Nora, statuses cycling through all four."""
    specs: list[OrderSpec] = []
    names = [spec.name for spec in PRODUCTS]
    for n in range(GENERATED_ORDERS):
        order_id = "#W" + digits(7, "order", str(n))
        if order_id in reserved:
            raise ValueError(f"generated order id {order_id} collides; change the seed table")
        reserved.add(order_id)
        status = STATUS_CYCLE[n % len(STATUS_CYCLE)]
        count = 1 + stable_int("item-count", order_id) % 4
        start = stable_int("first-product", order_id)
        items = tuple((names[(start + k * 5) % len(names)], stable_int("rank", order_id, str(k)) % 97)
                      for k in range(count))
        shipments = () if status == "pending" else \
            ((digits(12, "tracking", order_id), tuple(range(count))),)
        specs.append(OrderSpec(order_id, 1 + n % (len(CUSTOMER_NAMES) - 1), status, items, shipments))
    return specs


def _payment_method_for(user: Mapping[str, Any], order_id: str, amount: float) -> str:
    """A method that can pay `amount` (a gift card only when its balance covers it)."""
    usable = [mid for mid, m in user["payment_methods"].items()
              if m["source"] != "gift_card" or m.get("balance", 0) >= amount]
    pool = usable or list(user["payment_methods"])
    return pool[stable_int("pay", order_id) % len(pool)]


def build_order(spec: OrderSpec, user_id: str, user: Mapping[str, Any],
                products: Mapping[str, Any]) -> dict[str, Any]:
    """One order in the tau shape, paid in full (and refunded in full when cancelled)."""
    items = [_variant(products, name, rank) for name, rank in spec.items]
    amount = round(sum(item["price"] for item in items), 2)
    method_id = _payment_method_for(user, spec.order_id, amount)
    history = [{"transaction_type": "payment", "amount": amount, "payment_method_id": method_id}]
    if spec.status == "cancelled":
        history.append({"transaction_type": "refund", "amount": amount, "payment_method_id": method_id})
    return {
        "order_id": spec.order_id, "user_id": user_id, "address": dict(user["address"]),
        "items": items,
        "fulfillments": [{"tracking_id": [tracking], "item_ids": [items[i]["item_id"] for i in group]}
                         for tracking, group in spec.shipments],
        "status": spec.status, "payment_history": history,
    }


def build_store() -> dict[str, dict[str, Any]]:
    """The three datasets: `{"users": ..., "orders": ..., "products": ...}`."""
    products = build_products()
    users = build_users()
    user_ids = list(users)
    specs = list(NORA_ORDERS) + generated_order_specs({spec.order_id for spec in NORA_ORDERS})
    orders: dict[str, Any] = {}
    for spec in specs:
        user_id = user_ids[spec.customer_index]
        orders[spec.order_id] = build_order(spec, user_id, users[user_id], products)
        users[user_id]["orders"].append(spec.order_id)
    return {"users": users, "orders": orders, "products": products}


def render_store() -> dict[str, str]:
    """File name → exact file text of the demo store (2-space JSON, trailing newline)."""
    store = build_store()
    return {f"{name}.json": json.dumps(data, indent=2, ensure_ascii=False) + "\n"
            for name, data in store.items()}


def write_store(out_dir: Path = DEFAULT_OUT_DIR) -> list[Path]:
    """Write `users.json`, `orders.json` and `products.json` into `out_dir`; the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, text in render_store().items():
        path = out_dir / name
        path.write_text(text, encoding="utf-8", newline="\n")
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: `python -m devstack.seed.demo_store [--out DIR]` (default: the package's demo/)."""
    parser = argparse.ArgumentParser(prog="python -m devstack.seed.demo_store",
                                     description="Write the built-in demo store's JSON files.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT_DIR,
                        help="directory to write (default: %(default)s)")
    args = parser.parse_args(argv)
    for path in write_store(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
