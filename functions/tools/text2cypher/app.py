"""Tool Lambda: Text2Cypher (questions no template covers, over the catalogue part of the graph).

Thin by design: the shape every tool Lambda shares is `csagent.tools.lambda_entry`. The cyclic
garbage collector is paused from the first statement to the first result (`csagent.coldstart`).
"""

# ruff: noqa: E402 - the imports come after the collector's pause, on purpose
from __future__ import annotations

from csagent import coldstart

coldstart.pause_gc()

# The package loads its pipeline lazily (the router rarely needs it); this function always does,
# so it is loaded at init (under SnapStart: in the snapshot).
import csagent.tools.text2cypher.pipeline  # noqa: F401
from csagent import runtime
from csagent.tools.lambda_entry import make_tool_handler
from csagent.tools.text2cypher import run

handler = make_tool_handler("text2cypher", run, env="Text2CypherEnv", prepare=runtime.configure_text2cypher)
