"""Build the conversation graph (uncompiled). The edge compiles it with a checkpointer:

    graph = build_graph().compile(checkpointer=saver)
    graph.invoke(input, {"configurable": {"thread_id": session_id}}, context=deps)

    load_context → forward_to_agent ─(session is with a person: message appended)→ respond
                 └→ guard_input ─┬─ refused ───────────────────────────→ respond
                                └→ route ─┬─ confirmation (yes/no to a proposed change) → confirm_actions
                                          │   yes → run_task ×N (execute) → collect → summarise; no → respond
                                          │   yes, refund over threshold → request_approval → await_approval
                                          │     (interrupt; resumed by POST /v1/approvals/{id}) → run_task …
                                          ├─ handoff → hand_off → respond
                                          ├─ image → read_image (OCR: order id / tracking) → plan
                                          ├─ general → respond_general ─→ respond
                                          ├─ clarify / out_of_scope / low confidence → clarify → respond
                                          └─ knowledge_and_actions → plan ─(no task)→ clarify
         plan → run_task ×N (Send) → collect ─(next wave)→ run_task
              (or, with Step Functions: dispatch_wave, one execution per wave → collect)
                                        collect ─(all done)→ summarise ─(triggers)→ hand_off → respond
                                                                      summarise → respond
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from csagent.graph.context import GraphDeps
from csagent.graph.nodes.await_approval import await_approval, route_after_approval
from csagent.graph.nodes.clarify import clarify
from csagent.graph.nodes.collect import collect
from csagent.graph.nodes.confirm_actions import confirm_actions, route_after_confirm
from csagent.graph.nodes.dispatch import route_tasks
from csagent.graph.nodes.dispatch_wave import dispatch_wave
from csagent.graph.nodes.forward_to_agent import forward_to_agent, route_after_forward
from csagent.graph.nodes.guard_input import guard_input, route_after_guard
from csagent.graph.nodes.hand_off import hand_off, route_after_summarise
from csagent.graph.nodes.load_context import load_context
from csagent.graph.nodes.plan import plan
from csagent.graph.nodes.read_image import read_image
from csagent.graph.nodes.request_approval import request_approval
from csagent.graph.nodes.respond import respond
from csagent.graph.nodes.respond_general import respond_general
from csagent.graph.nodes.route import ROUTE_TO_NODE, route, route_by_label
from csagent.graph.nodes.run_task import run_task
from csagent.graph.nodes.summarise import summarise
from csagent.graph.state import InputState, State


def build_graph() -> StateGraph[State, GraphDeps, InputState, State]:
    g: StateGraph[State, GraphDeps, InputState, State] = StateGraph(
        State, context_schema=GraphDeps, input_schema=InputState)
    g.add_node("load_context", load_context)
    g.add_node("forward_to_agent", forward_to_agent)
    g.add_node("guard_input", guard_input)
    g.add_node("route", route)
    g.add_node("respond_general", respond_general)
    g.add_node("clarify", clarify)
    g.add_node("read_image", read_image)
    g.add_node("confirm_actions", confirm_actions)
    g.add_node("request_approval", request_approval)
    g.add_node("await_approval", await_approval)
    g.add_node("plan", plan)
    g.add_node("run_task", run_task)  # type: ignore[arg-type]  # a Send branch: TaskBranch, not State
    g.add_node("dispatch_wave", dispatch_wave)
    g.add_node("collect", collect)
    g.add_node("summarise", summarise)
    g.add_node("hand_off", hand_off)
    g.add_node("respond", respond)

    g.add_edge(START, "load_context")
    g.add_edge("load_context", "forward_to_agent")
    g.add_conditional_edges("forward_to_agent", route_after_forward, ["guard_input", "respond"])
    g.add_conditional_edges("guard_input", route_after_guard, ["route", "clarify", "respond"])
    g.add_conditional_edges("route", route_by_label, sorted(set(ROUTE_TO_NODE.values()) | {"clarify"}))
    g.add_conditional_edges("plan", route_tasks, ["run_task", "dispatch_wave", "clarify", "summarise"])
    g.add_edge("run_task", "collect")
    g.add_edge("dispatch_wave", "collect")
    g.add_conditional_edges("collect", route_tasks, ["run_task", "dispatch_wave", "clarify", "summarise"])
    g.add_edge("read_image", "plan")
    g.add_conditional_edges("confirm_actions", route_after_confirm,
                            ["run_task", "dispatch_wave", "summarise", "request_approval", "respond"])
    g.add_conditional_edges("request_approval", lambda s: "await_approval" if s.get("status") ==
                            "awaiting_approval" else "respond", ["await_approval", "respond"])
    g.add_conditional_edges("await_approval", route_after_approval,
                            ["run_task", "dispatch_wave", "summarise", "respond"])
    g.add_edge("respond_general", "respond")
    g.add_edge("clarify", "respond")
    g.add_conditional_edges("summarise", route_after_summarise, ["hand_off", "respond"])
    g.add_edge("hand_off", "respond")
    g.add_edge("respond", END)
    return g
