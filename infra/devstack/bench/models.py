"""The model layer's figures (issue 8), from `devstack.bench_models` when that module exists.

It is owned elsewhere; this bench only calls `bench_model_layer()` and `model_calls_per_turn()`
(no arguments, each returning a JSON-able dict) and reports what they return. While the module
or a function is missing, the section says so plainly instead of failing the run.
"""

from __future__ import annotations

import importlib
from typing import Any

MODULE = "devstack.bench_models"
FUNCTIONS = ("bench_model_layer", "model_calls_per_turn")


def bench_models() -> dict[str, Any]:
    """`{"available": False, "reason"}` without the module; else each function's figures (or
    `{"available": False, "reason"}` / `{"error"}` for a function missing or failing)."""
    try:
        module = importlib.import_module(MODULE)
    except ModuleNotFoundError as exc:
        if exc.name != MODULE:
            raise
        return {"available": False,
                "reason": "infra/devstack/bench_models.py (issue 8) does not exist yet"}
    out: dict[str, Any] = {"available": True}
    for name in FUNCTIONS:
        fn = getattr(module, name, None)
        if fn is None:
            out[name] = {"available": False, "reason": f"{MODULE}.{name}() is not defined"}
            continue
        try:
            out[name] = fn()
        except Exception as exc:  # noqa: BLE001 - another owner's code: report, keep the run
            out[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    return out
