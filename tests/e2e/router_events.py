"""Helpers to load and adapt the router's API Gateway events from events/router/."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def load_event(name: str) -> dict[str, Any]:
    return json.loads((ROOT / "events" / "router" / name).read_text())


def with_session(event: dict[str, Any], session_id: str) -> dict[str, Any]:
    """The same event addressed to another session (so tests never share a session)."""
    return json.loads(re.sub(r"sessions/[A-Za-z0-9_.:-]+", f"sessions/{session_id}", json.dumps(event)))


def body(response: dict[str, Any]) -> dict[str, Any]:
    return json.loads(response["body"]) if response.get("body") else {}


def with_body(event: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    """The same event carrying another JSON body (content-length kept truthful)."""
    raw = json.dumps(payload)
    headers = {**event.get("headers", {}), "content-length": str(len(raw.encode()))}
    return {**event, "headers": headers, "body": raw}
