"""A three-task chat turn through the router's service with DISPATCH_MODE=stepfunctions: the
graph hands each wave to the dispatch state machine (infra/statemachines/tools.asl.json) run
by moto's interpreter, which invokes the real tool handlers in-process (devstack.sfn_bridge)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from csagent import runtime
from csagent.domain.models import Principal
from csagent.service.schemas import MessageIn

pytestmark = pytest.mark.e2e

COMPOUND = ("where is order #W4435622, what is the warranty on those hiking boots, "
            "and what is your return policy?")


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch, tau_store: Any, moto_endpoint: str) -> Any:
    from devstack.sfn_bridge import LocalStepFunctionsDispatcher

    monkeypatch.setenv("DISPATCH_MODE", "stepfunctions")
    runtime.reset()
    yield runtime.conversation_service()
    runtime.reset()
    LocalStepFunctionsDispatcher.close_process()  # one bridge per process: free it for other tests


def test_a_three_task_turn_runs_through_the_state_machine(service):
    # Given the router configured for Step Functions dispatch (the local bridge)
    assert runtime.graph_deps().dispatcher is not None
    # When james_li_5688 asks three things at once
    out = service.handle_message(Principal(subject="james", customer_id="james_li_5688"),
                                 f"sfn-{uuid.uuid4().hex[:8]}", MessageIn(text=COMPOUND))
    # Then the waves went through dispatch_wave and all three tasks succeeded in one reply
    assert "dispatch_wave" in out.trace["node_timings_ms"]
    assert "run_task" not in out.trace["node_timings_ms"]
    assert [(t.task_type, t.status) for t in out.tasks] == [
        ("order_status", "success"), ("warranty", "success"), ("policy", "success")]
    assert "967193221991" in out.reply["text"] and "Return and refund policy" in out.reply["text"]
