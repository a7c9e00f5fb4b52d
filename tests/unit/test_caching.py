"""The caches the tools' caches are made of (`csagent.caching`): `TTLCache`, and `IdentityCache`
(values built once per embedder)."""

from __future__ import annotations

import math
import threading
import time

import pytest

from csagent.caching import IdentityCache, TTLCache


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


# -- values built once per object (IdentityCache) ---------------------------------------------
class Equal:
    """Equal to every other `Equal`, with one hash: only identity tells two apart."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Equal)

    def __hash__(self) -> int:
        return 1


def test_a_value_is_built_once_per_object_and_equal_objects_are_kept_apart() -> None:
    # Given two embedders that compare equal but are different objects
    first, second = Equal(), Equal()
    cache: IdentityCache[str] = IdentityCache()
    # When each asks twice for its value
    built = [cache.get_or_build((e,), lambda e=e: f"built for {id(e)}")  # type: ignore[misc]
             for e in (first, second, first, second)]
    # Then each object got its own value, built once
    assert built[0] == built[2] == f"built for {id(first)}"
    assert built[1] == built[3] == f"built for {id(second)}"
    assert len(cache) == 2


def test_a_key_of_several_objects_matches_only_the_same_objects_in_order() -> None:
    embedder, catalogue, other = object(), object(), object()
    cache: IdentityCache[str] = IdentityCache()
    cache.get_or_build((embedder, catalogue), lambda: "pair")
    assert cache.get((embedder, catalogue)) == "pair"
    assert cache.get((embedder, other)) is None
    assert cache.get((catalogue, embedder)) is None
    assert cache.get((embedder,)) is None


def test_the_oldest_built_value_goes_first_when_full() -> None:
    # Given a cache of two, and three objects asking in turn
    a, b, c = object(), object(), object()
    cache: IdentityCache[str] = IdentityCache(max_entries=2)
    for key, value in ((a, "A"), (b, "B"), (c, "C")):
        cache.get_or_build((key,), lambda value=value: value)  # type: ignore[misc]
    # Then the first one built was dropped and is built again; the last one is kept
    assert len(cache) == 2 and cache.get((a,)) is None
    assert cache.get_or_build((c,), lambda: "not built") == "C"
    assert cache.get_or_build((a,), lambda: "A again") == "A again"


def test_a_build_that_fails_keeps_nothing_and_the_next_call_builds_again() -> None:
    embedder = object()
    cache: IdentityCache[str] = IdentityCache()

    def failing() -> str:
        raise RuntimeError("model file missing")

    with pytest.raises(RuntimeError):
        cache.get_or_build((embedder,), failing)
    assert len(cache) == 0
    assert cache.get_or_build((embedder,), lambda: "v") == "v"


def test_threads_missing_the_same_object_at_once_wait_for_one_build() -> None:
    # Given a slow build (it waits until every thread has had time to ask) and eight threads
    embedder, cache = object(), IdentityCache[object]()
    builds: list[object] = []
    everyone_asked = threading.Event()
    got: list[object] = []

    def build() -> object:
        everyone_asked.wait(timeout=5)
        builds.append(value := object())
        return value

    def ask() -> None:
        got.append(cache.get_or_build((embedder,), build))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(0.2)  # every thread is now building or waiting for the build
    everyone_asked.set()
    for thread in threads:
        thread.join()
    # Then the value was built once and every thread got that one value
    assert len(builds) == 1
    assert len(got) == 8 and all(value is builds[0] for value in got)


def test_an_identity_cache_that_could_keep_nothing_is_refused() -> None:
    with pytest.raises(ValueError):
        IdentityCache(max_entries=0)
