"""Router Lambda: the HTTP API (API Gateway HTTP API, payload 2.0) served by FastAPI via Mangum.

Thin by design: the app is assembled from the core's composition root; nothing connects to
Neo4j or DynamoDB until the first request needs it.
"""

from __future__ import annotations

from mangum import Mangum

from csagent import runtime
from csagent.guardrails.pii import install_pii_filter
from csagent.http.app import create_app

install_pii_filter()  # emails, phones, card numbers and street addresses masked in every log line

app = create_app(runtime.conversation_service, runtime.health, lambda: runtime.get_settings().auth_mode,
                 get_handoffs=runtime.handoff_service, get_approvals=runtime.approval_service,
                 text2cypher_debug=runtime.text2cypher_debug)
handler = Mangum(app, lifespan="off")
