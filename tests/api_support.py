"""Test helper for conversations through the router's real HTTP API (the `tau_api` fixture of
tests/conftest.py): one customer turn, checked to be answered."""

from __future__ import annotations

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
