"""Test helper for conversations through the router's real HTTP API (the `tau_api` fixture of
tests/conftest.py): a customer's turns, each checked to be answered."""

from __future__ import annotations

import uuid
from typing import Any


def say(client: Any, customer: str, session: str, text: str) -> dict[str, Any]:
    """Send `text` as `customer` in `session`; the turn's body (HTTP 200 asserted)."""
    response = client.post(
        f"/v1/sessions/{session}/messages",
        json={"text": text},
        headers={"Authorization": f"Bearer dev:{customer}"},
    )
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def new_session(prefix: str = "turn") -> str:
    """A session id of its own for a conversation a test holds ("after-1a2b3c4d")."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def ask(client: Any, customer: str, text: str, session: str | None = None,
        prefix: str = "turn") -> tuple[str, str]:
    """One turn as `say`, in `session` or a new one named `prefix-...`: the reply's status and text."""
    body = say(client, customer, session or new_session(prefix), text)
    return body["status"], body["reply"]["text"]


def say_each(client: Any, customer: str, *texts: str, prefix: str = "turn") -> list[dict[str, Any]]:
    """The turns `texts`, one after another in a new session named `prefix-...`: each turn's body."""
    session = new_session(prefix)
    return [say(client, customer, session, text) for text in texts]


def reply_text(turn: dict[str, Any]) -> str:
    """The text of one turn's reply (`say`'s body), empty when it has none."""
    return str((turn.get("reply") or {}).get("text") or "")
