"""Tool Lambda: predefined Cypher (catalogue of parameterised read queries bound to the customer).

Thin by design: the shape every tool Lambda shares is `csagent.tools.lambda_entry`. The cyclic
garbage collector is paused from the first statement to the first result (`csagent.coldstart`).
"""

# ruff: noqa: E402 - the imports come after the collector's pause, on purpose
from __future__ import annotations

from csagent import coldstart

coldstart.pause_gc()

from csagent.tools.cypher_catalogue import run
from csagent.tools.lambda_entry import make_tool_handler

handler = make_tool_handler("predefined_cypher", run, env="PredefinedCypherEnv")
