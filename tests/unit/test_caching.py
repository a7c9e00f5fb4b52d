"""The TTL cache the tools' caches are made of (`csagent.caching.TTLCache`)."""

from __future__ import annotations

import math
import threading

import pytest

from csagent.caching import TTLCache


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Loader:
    """Counts its loads; returns "<key>#<n>" so a reload is visible in the value."""

    def __init__(self) -> None:
        self.loads = 0

    def __call__(self, key: str = "k") -> str:
        self.loads += 1
        return f"{key}#{self.loads}"


def test_a_value_is_kept_until_its_ttl_has_passed_then_loaded_again() -> None:
    # Given a cache of 600 s with a value loaded at t
    clock, load = Clock(), Loader()
    cache: TTLCache[str, str] = TTLCache(600.0, clock=clock)
    first = cache.get_or_load("k", load)
    # When it is asked again just before and then at the TTL
    clock.now += 599.9
    before = cache.get_or_load("k", load)
    clock.now += 0.1
    after = cache.get_or_load("k", load)
    # Then the kept value is served until the TTL, and a new one is loaded from then on
    assert (first, before, after) == ("k#1", "k#1", "k#2")


def test_an_infinite_ttl_keeps_a_value_until_cleared() -> None:
    clock, load = Clock(), Loader()
    cache: TTLCache[str, str] = TTLCache(math.inf, clock=clock)
    cache.get_or_load("k", load)
    clock.now += 1e9
    assert cache.get_or_load("k", load) == "k#1"
    cache.clear()
    assert cache.get_or_load("k", load) == "k#2"


def test_keys_are_kept_apart() -> None:
    cache: TTLCache[str, str] = TTLCache(60.0)
    assert cache.get_or_load("a", lambda: "A") == "A"
    assert cache.get_or_load("b", lambda: "B") == "B"
    assert cache.get_or_load("a", lambda: "not loaded") == "A"


def test_a_load_that_fails_keeps_nothing_and_the_next_call_loads_again() -> None:
    # Given a load that fails once
    cache: TTLCache[str, str] = TTLCache(600.0)

    def failing() -> str:
        raise ConnectionError("store down")

    # When it is asked for, the failure reaches the caller (who decides how to degrade)
    with pytest.raises(ConnectionError):
        cache.get_or_load("k", failing)
    # Then nothing was kept: the next call loads
    assert len(cache) == 0
    assert cache.get_or_load("k", lambda: "v") == "v"


def test_clear_forgets_every_value() -> None:
    load = Loader()
    cache: TTLCache[str, str] = TTLCache(600.0)
    cache.get_or_load("k", load)
    cache.clear()
    assert cache.get_or_load("k", load) == "k#2"


def test_the_oldest_written_value_goes_first_when_full() -> None:
    cache: TTLCache[str, str] = TTLCache(600.0, max_entries=2)
    cache.get_or_load("a", lambda: "A")
    cache.get_or_load("b", lambda: "B")
    cache.get_or_load("c", lambda: "C")
    assert len(cache) == 2
    assert cache.get_or_load("a", lambda: "A again") == "A again"
    assert cache.get_or_load("c", lambda: "not loaded") == "C"


@pytest.mark.parametrize("kwargs", [{"ttl_s": 0.0}, {"ttl_s": -1.0}, {"ttl_s": 1.0, "max_entries": 0}])
def test_a_cache_that_could_keep_nothing_is_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        TTLCache(**kwargs)  # type: ignore[arg-type]


def test_threads_reading_and_clearing_at_once_always_get_their_keys_value() -> None:
    # Given many threads reading eight keys of one small cache while another clears it
    cache: TTLCache[int, int] = TTLCache(600.0, max_entries=4)
    wrong: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def reader(offset: int) -> None:
        try:
            for i in range(2000):
                key = (i + offset) % 8
                value = cache.get_or_load(key, lambda key=key: key * 10)  # type: ignore[misc]
                if value != key * 10:
                    wrong.append((key, value))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def clearer() -> None:
        for _ in range(200):
            cache.clear()

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(6)]
    threads.append(threading.Thread(target=clearer))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Then every read got its own key's value and the cache never grew past its bound
    assert not errors and not wrong
    assert len(cache) <= 4
