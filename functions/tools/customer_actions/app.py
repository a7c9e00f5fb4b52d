"""Tool Lambda: customer actions (address change, cancellation, return / refund; idempotent writes).

Thin by design: the shape every tool Lambda shares is `csagent.tools.lambda_entry`.
"""

from __future__ import annotations

from csagent.tools.customer_actions import run
from csagent.tools.lambda_entry import make_tool_handler

handler = make_tool_handler("customer_actions", run, env="CustomerActionsEnv")
