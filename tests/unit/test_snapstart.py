"""SnapStart's runtime hooks: warmed before the snapshot, reconnected and re-seeded after each
restore, and nothing at all where the runtime has no hooks (local runs, tests)."""

from __future__ import annotations

import random
import sys
import types
from collections.abc import Callable

import pytest

from csagent import warmup
from csagent.adapters.neo4j_graph import Neo4jGraph
from csagent.resilience import backoff


def test_without_the_hooks_package_nothing_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a Python without Lambda's snapshot_restore_py
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", None)
    # When a handler registers its warm-up
    registered = warmup.register_snapstart_hooks(lambda: pytest.fail("warmed outside Lambda"))
    # Then nothing is registered and nothing ran
    assert registered is False


def test_in_lambda_the_warm_up_runs_before_the_snapshot_and_reconnection_after(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Given Lambda's hooks package (a stand-in recording what is registered)
    before: list[Callable[[], None]] = []
    after: list[Callable[[], None]] = []
    hooks = types.ModuleType("snapshot_restore_py")
    hooks.register_before_snapshot = before.append  # type: ignore[attr-defined]
    hooks.register_after_restore = after.append  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", hooks)
    warmed: list[str] = []
    # When a handler registers its warm-up
    assert warmup.register_snapstart_hooks(lambda: warmed.append("warm")) is True
    # Then the warm-up runs before the snapshot, and the restore hook is the reconnection
    assert len(before) == 1 and after == [warmup.after_restore]
    before[0]()
    assert warmed == ["warm"]


def test_a_restored_copy_draws_its_own_jitter() -> None:
    # Given the jitter generator as a snapshot holds it
    backoff._default_rng.seed(17)
    snapshot = backoff._default_rng.getstate()
    # When a restored container re-seeds
    backoff.reseed()
    # Then its delays are not the snapshot's
    assert backoff._default_rng.getstate() != snapshot


def test_after_restore_reseeds_and_reconnects(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a process resumed from a snapshot
    calls: list[str] = []
    from csagent import runtime

    monkeypatch.setattr(runtime, "reconnect", lambda: calls.append("reconnect"))
    random.seed(3)
    state = random.getstate()
    # When the after-restore hook runs
    warmup.after_restore()
    # Then random numbers are seeded again and the connections re-made
    assert random.getstate() != state
    assert calls == ["reconnect"]


class Driver:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_the_store_moves_to_a_new_driver_and_closes_the_old_one() -> None:
    # Given a store on the driver the snapshot held
    old, new = Driver(), Driver()
    store = Neo4jGraph(old)  # type: ignore[arg-type]
    # When it reconnects
    store.reconnect(new)  # type: ignore[arg-type]
    # Then it queries through the new driver and the old one is closed
    assert store.driver is new and old.closed and not new.closed


def test_a_bad_environment_fails_the_snapshot_naming_the_variable_before_warming(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from csagent.config import get_settings
    from csagent.env_vars import ConfigurationError, PredefinedCypherEnv

    # Given Lambda's hooks package and a deployed tool function given no Neo4j URI
    before: list[Callable[[], None]] = []
    hooks = types.ModuleType("snapshot_restore_py")
    hooks.register_before_snapshot = before.append  # type: ignore[attr-defined]
    hooks.register_after_restore = lambda _hook: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", hooks)
    monkeypatch.setenv("STAGE", "dev")
    monkeypatch.setenv("AUTH_MODE", "jwt")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "tool-predefined-cypher")
    monkeypatch.setenv("NEO4J_SECRET_ARN", "arn:aws:secretsmanager:us-east-1:1:secret:neo4j")
    monkeypatch.delenv("NEO4J_URI", raising=False)
    get_settings.cache_clear()
    warmed: list[str] = []
    warmup.register_snapstart_hooks(lambda: warmed.append("warm"), env=PredefinedCypherEnv)
    # When the snapshot is taken
    # Then it fails with the variable's name, and nothing was warmed
    try:
        with pytest.raises(ConfigurationError, match="NEO4J_URI"):
            before[0]()
        assert warmed == []
    finally:
        get_settings.cache_clear()
