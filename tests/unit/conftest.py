"""Unit tests run with the network blocked: only loopback connections are allowed (moto's
in-process server and `mock_aws` need none at all). AWS_ENDPOINT_URL is removed so boto3
clients talk to `mock_aws`, never to the moto server of the local stack."""

from __future__ import annotations

import socket
from typing import Any

import pytest

_LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and host not in _LOOPBACK and not host.startswith("/"):
        raise OSError(f"network access is blocked in unit tests (tried {address!r})")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _block_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
