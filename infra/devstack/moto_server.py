"""The moto server of the local stack, with DynamoDB's atomic conditional writes.

Real DynamoDB applies a conditional `UpdateItem`/`PutItem` atomically: the condition is checked
and the write made as one step, so concurrent callers can never both pass a condition only one
of them should. The code relies on that (the rate limiter's `count < :limit`, the checkpointer's
and the action store's "attribute_not_exists" writes). `python -m moto.server` serves requests on
threads and moto's DynamoDB backend takes no lock, so two racing requests can both read the old
item and both write: the emulator is weaker than the service it stands in for, and a test of the
guarantee fails at random (seen in CI: 6 of 24 racing callers got through a limit of 5).

This launcher runs the same moto application (`DomainDispatcherApplication`, the same request
handler, threaded as before) behind a WSGI wrapper that serialises DynamoDB requests, recognised
by their `X-Amz-Target: DynamoDB_20120810.*` header. Every other service (SQS long polls, Step
Functions executions, S3) stays concurrent. A DynamoDB call on moto takes about a millisecond, so
the lock costs nothing a test or the demo can feel.

    python infra/devstack/moto_server.py -H 127.0.0.1 -p 4566
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

_DYNAMODB_TARGET = "DynamoDB_20120810."


class SerialDynamoDB:
    """WSGI middleware: DynamoDB requests run one at a time, everything else as it comes."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self._app = app
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if not environ.get("HTTP_X_AMZ_TARGET", "").startswith(_DYNAMODB_TARGET):
            return self._app(environ, start_response)
        with self._lock:
            # moto answers with a list of bytes; materialise it inside the lock so the write
            # and everything it computes happen before the next DynamoDB request starts
            return list(self._app(environ, start_response))


def main(argv: list[str] | None = None) -> None:
    """Serve moto on `-H HOST -p PORT` with serial DynamoDB requests."""
    from moto.moto_server.werkzeug_app import (  # imported here: no moto import at module load
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import run_simple

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, default=4566)
    args = parser.parse_args(argv)
    os.environ.setdefault("MOTO_PORT", str(args.port))  # moto builds queue URLs from it
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: sys.exit(0))
    app = DomainDispatcherApplication(create_backend_app)
    run_simple(args.host, args.port, SerialDynamoDB(app), threaded=True,
               request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main()
