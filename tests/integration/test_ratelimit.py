"""The per-customer rate limiter against the moto server, on the table `template.yaml` declares
(provisioned by `devstack.aws provision`, resolved here through `devstack.template`)."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import boto3
import pytest

from csagent.guardrails.ratelimit import DynamoDBRateLimiter, RateLimited
from devstack.template import local_resources

pytestmark = pytest.mark.integration

WINDOW_S = 60
T0 = 1_800_000_000.0  # a window boundary (divisible by 60): tests start at the top of a window


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def table_name() -> str:
    return local_resources(stack_name="csagent-local").table("RateLimitTable").table_name


@pytest.fixture(scope="module")
def dynamodb(moto_endpoint: str) -> Any:
    return boto3.client("dynamodb", endpoint_url=moto_endpoint, region_name="us-east-1")


@pytest.fixture
def customer() -> str:
    """A fresh customer id per test, so tests never share a counter."""
    return f"cust_{uuid.uuid4().hex[:10]}"


def limiter(dynamodb: Any, table_name: str, clock: Clock, limit: int = 3) -> DynamoDBRateLimiter:
    return DynamoDBRateLimiter(dynamodb, table_name, limit=limit, window_s=WINDOW_S, clock=clock)


def test_messages_up_to_the_limit_are_allowed_and_counted_down(dynamodb: Any, table_name: str,
                                                               customer: str) -> None:
    # Given a limit of 3 messages a minute
    rl = limiter(dynamodb, table_name, Clock())
    # When three messages arrive in the same window
    statuses = [rl.consume(customer) for _ in range(3)]
    # Then all are allowed and the remaining count goes down
    assert [s.remaining for s in statuses] == [2, 1, 0]


def test_the_message_over_the_limit_is_refused_with_the_wait(dynamodb: Any, table_name: str,
                                                            customer: str) -> None:
    # Given a customer who used the 3 messages of the window that started 45 s ago
    clock = Clock()
    rl = limiter(dynamodb, table_name, clock)
    for _ in range(3):
        rl.consume(customer)
    clock.now = T0 + 45.2
    # When a fourth message arrives
    with pytest.raises(RateLimited) as refused:
        rl.consume(customer)
    # Then it is refused with the seconds left in the window (for Retry-After)
    assert refused.value.retry_after_s == 15


def test_a_new_window_starts_a_new_count(dynamodb: Any, table_name: str, customer: str) -> None:
    # Given a customer at the limit
    clock = Clock()
    rl = limiter(dynamodb, table_name, clock)
    for _ in range(3):
        rl.consume(customer)
    # When the next window begins
    clock.now = T0 + WINDOW_S
    status = rl.consume(customer)
    # Then messages are allowed again
    assert status.remaining == 2


def test_customers_have_separate_counters(dynamodb: Any, table_name: str, customer: str) -> None:
    # Given one customer at the limit
    clock = Clock()
    rl = limiter(dynamodb, table_name, clock)
    for _ in range(3):
        rl.consume(customer)
    # When another customer writes in the same window
    # Then that customer is not affected
    assert rl.consume(customer + "_other").remaining == 2


def test_each_window_item_expires_by_ttl_one_window_after_it_ends(dynamodb: Any, table_name: str,
                                                                  customer: str) -> None:
    # Given one counted message
    rl = limiter(dynamodb, table_name, Clock(T0 + 10))
    rl.consume(customer)
    # When its item is read
    item = dynamodb.get_item(TableName=table_name, Key={"pk": {"S": f"rl#{customer}#{int(T0)}"}},
                             ConsistentRead=True)["Item"]
    # Then it carries the count and the TTL (window end + one window)
    assert item["count"] == {"N": "1"}
    assert int(item["ttl"]["N"]) == int(T0) + 2 * WINDOW_S


def test_concurrent_callers_never_exceed_the_limit(dynamodb: Any, table_name: str, customer: str) -> None:
    # Given a limit of 5 and 24 requests racing in the same window
    rl = limiter(dynamodb, table_name, Clock(), limit=5)
    allowed: list[int] = []
    refused: list[int] = []
    start = threading.Barrier(24)

    def send(n: int) -> None:
        start.wait()
        try:
            rl.consume(customer)
            allowed.append(n)
        except RateLimited:
            refused.append(n)

    # When they all send at once
    threads = [threading.Thread(target=send, args=(n,)) for n in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Then exactly 5 got through and the stored count never passed the limit
    item = dynamodb.get_item(TableName=table_name, Key={"pk": {"S": f"rl#{customer}#{int(T0)}"}},
                             ConsistentRead=True)["Item"]
    assert (len(allowed), len(refused)) == (5, 19)
    assert item["count"] == {"N": "5"}
