"""What the bench sends: scenarios of each turn type drawn from the tau-retail data, the
concurrent HTTP sessions, and each customer's identifiers for the cross-session leak check.

    data = StoreData.load(TAU_DATA)
    scenarios = build_scenarios(load_workload(), data, seed=7, scale=1.0)

The messages and counts live in `workload.yaml` beside this module. Drawing is deterministic
(seeded), and a scenario that needs an order gets a customer no earlier scenario used, so each
session is one customer's and no two scenarios touch the same order.
"""

from __future__ import annotations

import base64
import io
import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

WORKLOAD_PATH = Path(__file__).with_name("workload.yaml")
ROOT = Path(__file__).resolve().parents[3]
TAU_DATA = ROOT.parent / "shared" / "data" / "tau-retail"

#: Identifier shapes looked for in replies (order ids, tracking numbers, emails, payment method ids).
IDENTIFIER_RE = re.compile(r"#W\d{7}|\b\d{12}\b|[\w.+-]+@[\w-]+\.[\w.]+"
                           r"|\b(?:credit_card|paypal|gift_card)_\d+\b")


@lru_cache(maxsize=1)
def load_workload(path: Path = WORKLOAD_PATH) -> dict[str, Any]:
    """The parsed workload file."""
    return dict(yaml.safe_load(path.read_text(encoding="utf-8")))


def paid(order: Mapping[str, Any]) -> float:
    """What the order's payments add up to (what a cancellation refunds)."""
    return round(sum(float(p["amount"]) for p in order.get("payment_history") or []
                     if p.get("transaction_type") == "payment"), 2)


@dataclass(frozen=True)
class StoreData:
    """The tau-retail customers and orders, as the seed loaded them into Neo4j."""

    users: Mapping[str, Mapping[str, Any]]
    orders: tuple[Mapping[str, Any], ...]

    @classmethod
    def load(cls, data_dir: Path = TAU_DATA) -> StoreData:
        users = json.loads((data_dir / "users.json").read_text(encoding="utf-8"))
        orders = json.loads((data_dir / "orders.json").read_text(encoding="utf-8"))
        return cls(users, tuple(sorted(orders.values(), key=lambda o: o["order_id"])))

    def with_statuses(self, statuses: Mapping[str, str]) -> StoreData:
        """The same data with the orders' statuses as the store holds them now (order id ->
        status): a run writes (cancellations), so the next one must not pick those orders again."""
        orders = tuple({**o, "status": statuses.get(o["order_id"], o["status"])} for o in self.orders)
        return StoreData(self.users, orders)

    def name_of(self, customer_id: str) -> str:
        name = self.users[customer_id]["name"]
        return f"{name['first_name']} {name['last_name']}"

    def pick_order(self, rng: random.Random, used: set[str], spec: Mapping[str, Any]) -> Mapping[str, Any]:
        """An order matching `spec` (statuses, min_paid, max_paid) of a customer not in `used`;
        the customer is added to `used`. Raises ValueError when none is left."""
        statuses = set(spec.get("statuses") or ())
        low, high = float(spec.get("min_paid", 0)), float(spec.get("max_paid", float("inf")))
        pool = [o for o in self.orders if o["user_id"] not in used and o.get("items")
                and (not statuses or o["status"] in statuses) and low <= paid(o) <= high]
        if not pool:
            raise ValueError(f"no unused customer has an order matching {dict(spec)}")
        order = rng.choice(pool)
        used.add(order["user_id"])
        return order


@dataclass(frozen=True)
class Step:
    """One timed turn of a scenario (or, for `decide`, an agent's approval decision)."""

    type: str
    text: str = ""
    expect: Mapping[str, Any] = field(default_factory=dict)
    label: tuple[str, ...] = ()  # lines of a shipping-label image attached to the message
    decide: str | None = None  # "approve" | "reject": the agent decides the pending approval


@dataclass(frozen=True)
class Scenario:
    """One session of one customer."""

    kind: str
    customer_id: str
    steps: tuple[Step, ...]
    order_id: str | None = None


def _fill(text: str, values: Mapping[str, str]) -> str:
    return text.format_map({"o": "", "p": "", "name": ""} | dict(values))


def _values(data: StoreData, customer_id: str, order: Mapping[str, Any] | None) -> dict[str, str]:
    values = {"name": data.name_of(customer_id)}
    if order is not None:
        values |= {"o": order["order_id"], "p": order["items"][0]["name"]}
    return values


def build_scenarios(workload: Mapping[str, Any], data: StoreData, *, seed: int = 7, scale: float = 1.0,
                    minimum: int = 1, used: set[str] | None = None) -> list[Scenario]:
    """Every scenario of the workload, `count × scale` of each kind (at least `minimum`), in
    an interleaved order (kind after kind) so that drift over the run spreads across kinds."""
    rng = random.Random(seed)
    used = set() if used is None else used
    customers = sorted(data.users)
    by_kind: dict[str, list[Scenario]] = {}
    for kind, spec in workload["scenarios"].items():
        count = max(minimum, round(int(spec["count"]) * scale))
        for i in range(count):
            order = data.pick_order(rng, used, spec["order"]) if spec.get("order") else None
            customer = order["user_id"] if order else customers[(i * 37 + len(by_kind)) % len(customers)]
            values = _values(data, customer, order)
            steps = []
            for step in spec["steps"]:
                texts = step.get("texts") or [""]
                steps.append(Step(type=step["type"], text=_fill(texts[i % len(texts)], values),
                                  expect=dict(step.get("expect") or {}),
                                  label=tuple(_fill(line, values) for line in step.get("label") or ()),
                                  decide=step.get("decide")))
            by_kind.setdefault(kind, []).append(
                Scenario(kind, customer, tuple(steps), order["order_id"] if order else None))
    ordered: list[Scenario] = []
    queues = list(by_kind.values())
    while any(queues):
        for queue in queues:
            if queue:
                ordered.append(queue.pop(0))
    return ordered


def concurrent_sessions(workload: Mapping[str, Any], data: StoreData, sessions: int, turns: int, *,
                        seed: int = 11, used: set[str] | None = None) -> list[tuple[str, list[str]]]:
    """`sessions` (customer, messages) pairs, one distinct customer each, `turns` messages each."""
    spec = workload["concurrent_session"]
    rng = random.Random(seed)
    used = set() if used is None else used
    out = []
    for _ in range(sessions):
        order = data.pick_order(rng, used, spec["order"])
        values = _values(data, order["user_id"], order)
        texts = [_fill(spec["texts"][i % len(spec["texts"])], values) for i in range(turns)]
        out.append((str(order["user_id"]), texts))
    return out


def identifiers_by_customer(data: StoreData) -> dict[str, str]:
    """Every identifier of every customer -> its owner: order ids, tracking numbers, emails,
    payment method ids and the customer id itself."""
    owner: dict[str, str] = {}
    for customer_id, user in data.users.items():
        owner[customer_id] = customer_id
        owner[str(user.get("email", "")).lower()] = customer_id
        for method in (user.get("payment_methods") or {}):
            owner[method] = customer_id
    for order in data.orders:
        owner[order["order_id"]] = order["user_id"]
        for fulfilment in order.get("fulfillments") or []:
            for tracking in fulfilment.get("tracking_id") or []:
                owner[str(tracking)] = order["user_id"]
    owner.pop("", None)
    return owner


def leaked_identifiers(text: str, customer_id: str, owners: Mapping[str, str],
                       others: Iterable[str] = ()) -> list[str]:
    """Identifiers in `text` that belong to a customer other than `customer_id`: any identifier
    shape found (`IDENTIFIER_RE`) with another owner, plus any of the `others` customers' ids."""
    found = {m.group(0) for m in IDENTIFIER_RE.finditer(text)}
    leaks = {token for token in found
             if owners.get(token, owners.get(token.lower(), customer_id)) != customer_id}
    leaks |= {other for other in others if other != customer_id and other in text}
    return sorted(leaks)


def label_png(lines: Sequence[str]) -> str:
    """A shipping label with `lines` drawn on it, as base64 PNG (Pillow's scalable font)."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (900, 90 + 70 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=40)
    for i, line in enumerate(lines):
        draw.text((30, 40 + 70 * i), line, fill="black", font=font)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode()
