"""Summaries of latency samples: percentiles, medians and ratios, nothing else.

Pure functions on lists of numbers, so they are tested on synthetic samples
(tests/unit/test_bench_report.py). The machines the bench runs on are noisy: figures are
medians and high percentiles of many samples, and comparisons are ratios of medians taken in
the same run, never absolute numbers from different runs.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def percentile(values: Sequence[float], p: float) -> float:
    """The `p`-th percentile (0-100) with linear interpolation between closest ranks, rounded to
    0.01 (numpy's default method). Raises ValueError for no values or `p` outside 0-100."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile {p} is outside 0-100")
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return round(ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo), 2)


def ratio(numerator: float | None, denominator: float | None, digits: int = 2) -> float | None:
    """`numerator / denominator` rounded, or None when either is missing or the denominator is 0
    (a ratio that cannot be computed is reported as absent, never as infinity or zero)."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    return round(numerator / denominator, digits)


def summarise(samples: Sequence[float]) -> dict[str, Any]:
    """`{n, p50_ms, p95_ms, max_ms}` of latency samples in milliseconds (`{n: 0}` for none)."""
    if not samples:
        return {"n": 0}
    return {"n": len(samples), "p50_ms": percentile(samples, 50), "p95_ms": percentile(samples, 95),
            "max_ms": round(max(samples), 2)}


def median(values: Sequence[float]) -> float | None:
    """The median rounded to 0.1, or None for no values."""
    return round(statistics.median(values), 1) if values else None


def group_summaries(samples: Mapping[str, Sequence[float]]) -> dict[str, dict[str, Any]]:
    """`summarise` for every group, in the groups' order."""
    return {name: summarise(values) for name, values in samples.items()}


def timed_ms(fn: Callable[[], Any]) -> float:
    """Wall-clock milliseconds of one call of `fn` (its result is dropped)."""
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """`fn()`'s result and its wall-clock milliseconds."""
    started = time.perf_counter()
    result = fn()
    return result, (time.perf_counter() - started) * 1000
