"""Node timing: every node reports its wall time into the `node_timings_ms` state key, and runs
inside a tracer subsegment `node:<name>` (a no-op outside Lambda; see `csagent.observability`)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from csagent.observability import node_span


def timed(name: str) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    def decorate(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
            started = time.perf_counter()
            with node_span(f"node:{name}", node=name):
                update = fn(*args, **kwargs)
            elapsed = round((time.perf_counter() - started) * 1000, 2)
            timings = dict(update.get("node_timings_ms") or {})
            timings[name] = timings.get(name, 0.0) + elapsed
            return {**update, "node_timings_ms": timings}

        return wrapper

    return decorate
