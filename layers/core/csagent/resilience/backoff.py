"""Exponential backoff with full jitter, capped.

Why full jitter (`uniform(0, min(cap, base * 2**attempt))`): when many callers hit the same
fault at once (Neo4j restarting under every warm Lambda), plain exponential backoff makes them
retry in lock-step waves; drawing the whole delay at random spreads the retries out, and the
AWS Architecture Blog's comparison ("Exponential Backoff And Jitter") found it does the least
total work of the usual variants. The random source is injectable so tests are exact.
"""

from __future__ import annotations

import random

# 2**30 x any sensible base is far beyond any cap: stop growing there (no float overflow).
_MAX_EXPONENT = 30

_default_rng = random.Random()


def reseed() -> None:
    """Seed the default jitter from the OS again: copies of one SnapStart snapshot would
    otherwise draw the same delays and retry in step."""
    _default_rng.seed()


def backoff_ceiling(attempt: int, *, base_s: float, cap_s: float) -> float:
    """The largest delay retry number `attempt` (0 for the first retry) may wait: base * 2^attempt, capped."""
    if attempt < 0:
        raise ValueError("attempt must be >= 0")
    return min(cap_s, base_s * (2 ** min(attempt, _MAX_EXPONENT)))


def full_jitter_delay(attempt: int, *, base_s: float, cap_s: float,
                      rng: random.Random | None = None) -> float:
    """A delay drawn uniformly from [0, backoff_ceiling(attempt)] (rounded to the millisecond)."""
    ceiling = backoff_ceiling(attempt, base_s=base_s, cap_s=cap_s)
    return round((rng or _default_rng).uniform(0.0, ceiling), 3)
