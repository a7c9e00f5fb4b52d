"""The local AWS APIs: a moto server, provisioned from `template.yaml`.

    python -m devstack.aws provision --endpoint http://127.0.0.1:4566 [--enable-sfn]
    python -m devstack.aws enable-sfn --endpoint http://127.0.0.1:4566

`devstack.stack up` uses these helpers to run the local stack: `start_moto` + `wait_moto`,
then `enable_stepfunctions_execution` (before any state machine exists - see its docstring),
then `provision`, which builds the same tables, buckets and queues the unit tests build with
`moto.mock_aws` (both go through `devstack.template`).
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from devstack.template import (
    DEFAULT_STACK_NAME,
    LOCAL_REGION,
    AwsClients,
    LocalResources,
    create_resources,
    default_template_path,
    local_resources,
)

# moto accepts any credentials; fixed dummy ones keep a stray real profile from ever being used.
DUMMY_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now (for tests and ad-hoc servers)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def endpoint_for(port: int) -> str:
    """The moto endpoint URL for `port`."""
    return f"http://127.0.0.1:{port}"


def start_moto(port: int, log_path: Path) -> subprocess.Popen[bytes]:
    """Start moto on `PORT` through `moto_server.py`: moto's own server, with DynamoDB requests
    serialised so conditional writes are atomic as on the real service (see that module).

    The server runs in its own session (process group) so the caller can stop it and only it
    with `os.killpg(proc.pid, ...)` or `stop_moto`; output goes to `log_path`.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        return subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("moto_server.py")),
             "-H", "127.0.0.1", "-p", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def wait_moto(port: int, timeout: float = 30.0, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Block until the moto server on `port` answers its config API.

    Raises `TimeoutError` after `timeout` seconds, or `RuntimeError` at once if `proc` (the
    server process, when the caller started it) has exited.
    """
    deadline = time.monotonic() + timeout
    url = f"{endpoint_for(port)}/moto-api/config"
    while True:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"moto server exited with code {proc.returncode} before answering")
        try:
            with urllib.request.urlopen(url, timeout=2.0) as response:  # noqa: S310 - local http
                if response.status in (200, 201):
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() >= deadline:
            raise TimeoutError(f"moto server on port {port} did not answer within {timeout:.0f}s")
        time.sleep(0.2)


def stop_moto(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Stop a server started by `start_moto` (that process only): SIGTERM, then SIGKILL."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


def enable_stepfunctions_execution(endpoint: str) -> None:
    """Make the moto server actually execute state machines (Pass, Map, Choice, Wait, ...).

    Mechanism (moto 5.x): `POST {endpoint}/moto-api/config` with
    `{"stepfunctions": {"execute_state_machine": true}}` - the server-mode equivalent of
    `@mock_aws(config={"stepfunctions": {"execute_state_machine": True}})`. moto then serves
    Step Functions from its ASL interpreter backend. That backend is a *different* store: state
    machines created before this call are not visible afterwards, so call it before creating
    any. moto cannot run Lambda code without Docker and has no `StartSyncExecution`; Task
    states that invoke Lambda need the project's own bridge.

    The config API does not echo the Step Functions setting back, so success is the HTTP
    status; `tests/unit/test_aws_local.py` proves the effect with a real execution.
    """
    body = json.dumps({"stepfunctions": {"execute_state_machine": True}}).encode()
    request = urllib.request.Request(
        f"{endpoint.rstrip('/')}/moto-api/config",
        data=body,
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10.0) as response:  # noqa: S310 - local http
        if response.status not in (200, 201):
            raise RuntimeError(f"moto config API answered {response.status}")


def session(region: str = LOCAL_REGION) -> Any:
    """A boto3 session with dummy credentials, for talking to the moto server."""
    import boto3

    return boto3.session.Session(region_name=region, **DUMMY_CREDENTIALS)


def clients(endpoint: str, region: str = LOCAL_REGION) -> AwsClients:
    """DynamoDB, S3 and SQS clients on `endpoint` with dummy credentials."""
    return AwsClients.from_session(session(region), endpoint_url=endpoint, region=region)


def provision(
    endpoint: str,
    template_path: Path | str | None = None,
    stack_name: str = DEFAULT_STACK_NAME,
) -> LocalResources:
    """Create the template's tables, buckets and queues on the moto server at `endpoint`.

    Idempotent (safe on a server that is already provisioned). Returns what was built, with
    the resolved names, so callers can print or export them.
    """
    resources = local_resources(template_path or default_template_path(), stack_name)
    create_resources(clients(endpoint, resources.region), resources)
    return resources


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: `provision` and `enable-sfn` against a running moto server."""
    parser = argparse.ArgumentParser(prog="python -m devstack.aws", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    prov = sub.add_parser("provision", help="create the template's tables, buckets and queues")
    prov.add_argument("--endpoint", required=True, help="moto server URL, e.g. http://127.0.0.1:4566")
    prov.add_argument("--template", type=Path, default=None, help="default: template.yaml at the repo root")
    prov.add_argument("--stack-name", default=DEFAULT_STACK_NAME)
    prov.add_argument("--enable-sfn", action="store_true", help="enable state machine execution first")
    sfn = sub.add_parser("enable-sfn", help="make moto execute state machines")
    sfn.add_argument("--endpoint", required=True)
    args = parser.parse_args(argv)

    from botocore.exceptions import EndpointConnectionError

    try:
        if args.command == "enable-sfn" or args.enable_sfn:
            enable_stepfunctions_execution(args.endpoint)
        if args.command == "provision":
            resources = provision(args.endpoint, args.template, args.stack_name)
            print(json.dumps(resources.names(), indent=2))
    except (urllib.error.URLError, ConnectionError, EndpointConnectionError) as exc:
        print(f"cannot reach moto at {args.endpoint}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
