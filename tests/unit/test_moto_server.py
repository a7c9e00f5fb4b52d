"""The local moto server serialises DynamoDB requests (atomic conditional writes, as on the real
service) and leaves every other service concurrent."""

from __future__ import annotations

import threading
import time
from typing import Any

from devstack.moto_server import SerialDynamoDB


class _Recorder:
    """A WSGI app that records how many requests it was serving at once."""

    def __init__(self) -> None:
        self.active = 0
        self.most = 0
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        with self._lock:
            self.active += 1
            self.most = max(self.most, self.active)
        time.sleep(0.05)
        with self._lock:
            self.active -= 1
        start_response("200 OK", [])
        return [b"{}"]


def _race(app: SerialDynamoDB, environ: dict[str, Any], n: int = 6) -> list[list[bytes]]:
    bodies: list[list[bytes]] = []
    start = threading.Barrier(n)

    def call() -> None:
        start.wait()
        bodies.append(list(app(dict(environ), lambda *_: None)))

    threads = [threading.Thread(target=call) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return bodies


def test_dynamodb_requests_never_overlap() -> None:
    # Given the wrapper around an app that notes concurrent requests
    inner = _Recorder()
    # When six DynamoDB UpdateItem calls race
    bodies = _race(SerialDynamoDB(inner), {"HTTP_X_AMZ_TARGET": "DynamoDB_20120810.UpdateItem"})
    # Then each was answered, one at a time
    assert bodies == [[b"{}"]] * 6
    assert inner.most == 1


def test_other_services_stay_concurrent() -> None:
    # Given the same wrapper
    inner = _Recorder()
    # When six SQS calls race
    _race(SerialDynamoDB(inner), {"HTTP_X_AMZ_TARGET": "AmazonSQS.ReceiveMessage"})
    # Then they ran side by side (a long poll must not block the rest)
    assert inner.most > 1
