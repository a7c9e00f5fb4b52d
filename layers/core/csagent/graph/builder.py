"""Build the conversation graph (uncompiled). The edge compiles it with a checkpointer:

    graph = build_graph().compile(checkpointer=saver)
    graph.invoke(input, {"configurable": {"thread_id": session_id}}, context=deps)

    load_context → guard_input ─┬─ refused ────────────────────────────→ respond
                                └→ route ─┬─ confirmation (yes/no to a proposed change) → confirm_actions
                                          │   yes → run_task ×N (execute) → collect → summarise; no → respond
                                          ├─ image → read_image (OCR: order id / tracking) → plan
                                          ├─ general → respond_general ─→ respond
                                          ├─ clarify / out_of_scope / low confidence → clarify → respond
                                          └─ knowledge_and_actions → plan ─(no task)→ clarify
         plan → run_task ×N (Send) → collect ─(next wave)→ run_task
                                        collect ─(all done)→ summarise → respond
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from csagent.graph.context import GraphDeps
from csagent.graph.nodes.clarify import clarify
from csagent.graph.nodes.collect import collect
from csagent.graph.nodes.confirm_actions import confirm_actions, route_after_confirm
from csagent.graph.nodes.dispatch import route_tasks
from csagent.graph.nodes.guard_input import guard_input, route_after_guard
from csagent.graph.nodes.load_context import load_context
from csagent.graph.nodes.plan import plan
from csagent.graph.nodes.read_image import read_image
from csagent.graph.nodes.respond import respond
from csagent.graph.nodes.respond_general import respond_general
from csagent.graph.nodes.route import ROUTE_TO_NODE, route, route_by_label
from csagent.graph.nodes.run_task import run_task
from csagent.graph.nodes.summarise import summarise
from csagent.graph.state import InputState, State


def build_graph() -> StateGraph:
    g = StateGraph(State, context_schema=GraphDeps, input_schema=InputState)
    g.add_node("load_context", load_context)
    g.add_node("guard_input", guard_input)
    g.add_node("route", route)
    g.add_node("respond_general", respond_general)
    g.add_node("clarify", clarify)
    g.add_node("read_image", read_image)
    g.add_node("confirm_actions", confirm_actions)
    g.add_node("plan", plan)
    g.add_node("run_task", run_task)
    g.add_node("collect", collect)
    g.add_node("summarise", summarise)
    g.add_node("respond", respond)

    g.add_edge(START, "load_context")
    g.add_edge("load_context", "guard_input")
    g.add_conditional_edges("guard_input", route_after_guard, ["route", "respond"])
    g.add_conditional_edges("route", route_by_label, sorted(set(ROUTE_TO_NODE.values()) | {"clarify"}))
    g.add_conditional_edges("plan", route_tasks, ["run_task", "clarify", "summarise"])
    g.add_edge("run_task", "collect")
    g.add_conditional_edges("collect", route_tasks, ["run_task", "clarify", "summarise"])
    g.add_edge("read_image", "plan")
    g.add_conditional_edges("confirm_actions", route_after_confirm, ["run_task", "summarise", "respond"])
    g.add_edge("respond_general", "respond")
    g.add_edge("clarify", "respond")
    g.add_edge("summarise", "respond")
    g.add_edge("respond", END)
    return g
