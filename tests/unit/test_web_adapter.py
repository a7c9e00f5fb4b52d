"""`csagent.http.web_adapter`: what the stream function reads of the Lambda Web Adapter's settings."""

from __future__ import annotations

import pytest

from csagent.http.web_adapter import WebAdapterSettings, is_readiness_probe


def _request(method: str, path: str) -> dict[str, object]:
    return {"type": "http", "method": method, "path": path}


def test_the_readiness_probe_is_a_get_of_the_adapters_check_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the adapter's default settings (no check path set)
    for name in ("AWS_LWA_READINESS_CHECK_PATH", "READINESS_CHECK_PATH"):
        monkeypatch.delenv(name, raising=False)
    settings = WebAdapterSettings()
    # Then only a GET of / is its probe
    assert is_readiness_probe(_request("GET", "/"), settings)
    assert not is_readiness_probe(_request("POST", "/"), settings)
    assert not is_readiness_probe(_request("GET", "/healthz"), settings)
    assert not is_readiness_probe({"type": "lifespan"}, settings)


@pytest.mark.parametrize("variable", ["AWS_LWA_READINESS_CHECK_PATH", "READINESS_CHECK_PATH"])
def test_a_check_path_the_adapter_is_given_is_the_probes(monkeypatch: pytest.MonkeyPatch,
                                                         variable: str) -> None:
    # Given the adapter told to probe /ready (by its variable, or the older name it still reads)
    monkeypatch.setenv(variable, "/ready")
    settings = WebAdapterSettings()
    # Then a GET of /ready is the probe, and / is a request like any other
    assert is_readiness_probe(_request("GET", "/ready"), settings)
    assert not is_readiness_probe(_request("GET", "/"), settings)
