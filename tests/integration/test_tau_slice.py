"""The CI slice of `make tau` (issue 13): scripted customers of tau-retail tasks, one or two per
write kind, through the real HTTP API on the tests' stack; every one must leave the store equal
to the benchmark's reference end state. The whole replay (174 tasks, pass^1 by action kind) is
`make tau` -> reports/tau.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from devstack import tau

pytestmark = pytest.mark.integration

# One or two tasks per write kind, from infra/tau/sample.txt (each passes in `make tau`).
SLICE = ("train-404", "train-271", "train-332", "train-116", "train-253", "train-030", "train-024")


@pytest.fixture(scope="module")
def replay(tau_store: Any, moto_endpoint: str, tau_data: Path) -> list[tau.TaskResult]:
    return tau.run(SLICE, data_dir=tau_data)


def test_the_slice_covers_every_write_kind_of_the_sample(replay: list[tau.TaskResult]) -> None:
    kinds = {kind for result in replay for kind in result.kinds}
    assert kinds >= {
        "modify_items",
        "exchange_items",
        "cancel_order",
        "return_items",
        "change_payment",
        "change_order_address",
    }


@pytest.mark.parametrize("task_id", SLICE)
def test_the_scripted_customer_leaves_the_reference_end_state(
    replay: list[tau.TaskResult], task_id: str
) -> None:
    # Given the task's scripted customer played through the HTTP API
    result = next(r for r in replay if r.task_id == task_id)
    # Then the customer's records equal the benchmark's reference, and nothing else changed
    conversation = "\n".join(
        f"> {m['customer']}\n< [{m['status']}] {m['reply'][:300]}" for m in result.messages
    )
    assert result.passed, f"{result.error or result.differences[:5]}\n{conversation}"
