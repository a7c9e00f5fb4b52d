"""Two small thread-safe caches: values that go stale after a fixed time (`TTLCache`), and
values built once per object, such as an embedder, compared by identity (`IdentityCache`).

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


class IdentityCache(Generic[V]):
    """One value per key, a tuple of objects (an embedder, a catalogue) each compared by identity,
    built once on first use and kept until `max_entries` newer keys have been built (the oldest
    built goes first). Holding the objects themselves, an entry's key can never be taken by
    another object the way an `id()` can once its object is collected.

    `get_or_build` builds under the lock: what is kept here is costly to build (embedding a few
    thousand texts, training a model), so a second thread that misses the same key waits for the
    first one's build instead of repeating it, and every caller gets the one kept value. The lock
    is the cache's, not the key's: a build also holds up lookups of other keys, which costs
    nothing where these are used (a process has one embedder; tests build a few more). A build
    must not use the cache it is building for (the lock is not re-entrant). A build that raises
    keeps nothing: the caller decides how to degrade, and the next call builds again.
    """

    def __init__(self, max_entries: int = 4) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be >= 1")
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._entries: list[tuple[tuple[object, ...], V]] = []

    def get_or_build(self, key: tuple[object, ...], build: Callable[[], V]) -> V:
        """The value kept for `key`, else `build()` (kept, then returned)."""
        with self._lock:
            for kept, value in self._entries:
                if _same(kept, key):
                    return value
            value = build()
            self._entries.append((key, value))
            del self._entries[:-self.max_entries]
            return value

    def get(self, key: tuple[object, ...]) -> V | None:
        """The value kept for `key`; None when none is (nothing is built)."""
        with self._lock:
            return next((value for kept, value in self._entries if _same(kept, key)), None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


def _same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
