"""The model-layer benchmark runs against the peers it starts and reports a figure per peer (the
numbers themselves are for `make bench`; here, that every kind of call really reached a peer)."""

from __future__ import annotations

import pytest

from devstack.bench_models import WARMUP, bench_model_layer


def test_the_overhead_bench_sends_every_kind_of_call_to_both_peers(
        capsys: pytest.CaptureFixture[str]) -> None:
    # Given the two peers the bench starts itself
    # When it measures three calls of each kind (gateway, langchain client, bare SDK)
    figures = bench_model_layer(calls=3)
    # Then each peer served the probe call plus every warm-up and measured call of the three kinds
    for kind in ("openai", "bedrock"):
        assert figures[kind]["requests_served"] == 1 + 3 * (WARMUP + 3)
        assert figures[kind]["gateway_median_ms"] > 0 and figures[kind]["sdk_median_ms"] > 0
    # And the table was printed for the bench log
    assert "model layer overhead per call" in capsys.readouterr().out
