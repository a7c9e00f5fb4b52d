"""A small thread-safe cache of values that go stale after a fixed time.

Each cache is an object owned by what needs it (or built by a composition root and passed in),
never a module global keyed by `id(...)` of a store or an embedder: an id is reused once its
object is collected, and a global outlives the store its entries describe.

No I/O here and nothing heavy to import: tool contexts build one on every construction.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TTLCache(Generic[K, V]):
    """Values by key, each kept `ttl_s` seconds from the moment its load began (`math.inf`:
    until `clear()`), at most `max_entries` of them (the oldest written goes first).

    `get_or_load` runs the load outside the lock, so a slow read never blocks the readers of
    other keys; two threads missing the same key at once may both load it, and the later write
    wins (the values are equal). A load that raises stores nothing: the caller decides how to
    degrade, and the next call tries again.
    """

    def __init__(self, ttl_s: float, *, max_entries: int = 1024,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not ttl_s > 0:
            raise ValueError("ttl_s must be positive")
        if max_entries < 1:
            raise ValueError("max_entries must be >= 1")
        self.ttl_s = ttl_s
        self._max_entries = max_entries
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[K, tuple[float, V]] = {}

    def get_or_load(self, key: K, load: Callable[[], V]) -> V:
        """The value kept for `key` if still fresh, else `load()` (kept, then returned)."""
        now = self._clock()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and now - entry[0] < self.ttl_s:
                return entry[1]
        value = load()
        with self._lock:
            self._entries.pop(key, None)  # re-inserted last: eviction drops the oldest written
            self._entries[key] = (now, value)
            while len(self._entries) > self._max_entries:
                del self._entries[next(iter(self._entries))]
        return value

    def clear(self) -> None:
        """Forget every value (each reloads on its next use)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
