"""What nodes may use besides the state: injected at invoke time as the LangGraph run context."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from csagent.resilience.bounds import Bounds

if TYPE_CHECKING:
    from csagent.adapters.stepfunctions_dispatch import WaveDispatcher
    from csagent.approvals.service import ApprovalService
    from csagent.domain.models import Task, ToolResult
    from csagent.graph.state import State
    from csagent.guardrails.injection import ScreenResult
    from csagent.guardrails.output import OutputCheck
    from csagent.guardrails.scope import ScopeResult
    from csagent.handoff.service import HandoffService
    from csagent.handoff.triggers import TriggerPolicy
    from csagent.models.gateway import ModelGateway
    from csagent.ports import ImageReader
    from csagent.resilience.faults import FaultPlan
    from csagent.tools.context import ToolContext
    from csagent.understanding import Understanding

@dataclass(frozen=True)
class GraphDeps:
    """Ports and limits for one turn. Built by the composition root (`csagent.runtime`)."""

    understand: Callable[[str, State], Understanding]
    tools: Mapping[str, Callable[[Task, ToolContext], ToolResult]]
    make_tool_context: Callable[[str | None], ToolContext]
    image_reader: ImageReader | None = None
    dispatcher: WaveDispatcher | None = None  # None: one Send per task, in this process
    handoffs: HandoffService | None = None
    handoff_policy: TriggerPolicy | None = None
    approvals: ApprovalService | None = None
    bounds: Bounds = field(default_factory=Bounds)
    screen: Callable[[str], ScreenResult] | None = None  # prompt-injection screening
    scope_check: Callable[[str], ScopeResult] | None = None
    output_guard: Callable[..., OutputCheck] | None = None
    fault_plan: FaultPlan | None = None  # fault injection for tests, evaluation and demos
    # Generative models per role (planner, summariser, image reader; the router's model is inside
    # `understand`). None, or a role without a model: that node's local tier answers.
    models: ModelGateway | None = None
    # Does a sentence of the store's documents answer a question asked almost in these words
    # (`knowledge.asked`)? The planner adds the store's rule to a question about a change when it
    # does. None: never asked.
    documents_know: Callable[[str], bool] | None = None
    max_tasks: int = 5
    max_message_chars: int = 4000
