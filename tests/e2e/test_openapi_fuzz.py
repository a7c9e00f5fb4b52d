"""The served API keeps its OpenAPI contract: schemathesis (the CLI, `--checks all`: server errors,
status codes, content types, response headers and schemas, server-sent events, schema-valid
requests accepted and schema-violating ones refused, undeclared methods answered with 405 and
`Allow`, ...) against the router's app under uvicorn on the local stack (Neo4j with tau-retail,
DynamoDB and SQS on moto), once as a customer and once as an agent.

Bounded: FUZZ_EXAMPLES examples per operation and phase (default 25) and a fixed seed
(FUZZ_SEED), so a run is repeatable and adds about a minute to `make test`. The only hooks
(`fuzz_hooks.py`) say how to generate the API's custom string formats; no check is relaxed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
SEED = os.environ.get("FUZZ_SEED", "20261202")
OPERATIONS = 22  # every route in /openapi.json
IDENTITIES = {
    "customer": "Bearer dev:james_li_5688",  # owns orders in tau-retail
    "agent": "Bearer dev-agent:fuzz_agent",  # the agent role: the session viewer, queues, debugger
}


def schemathesis_run(base_url: str, authorization: str, workdir: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SCHEMATHESIS_HOOKS="fuzz_hooks", NO_COLOR="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))
    command = [sys.executable, "-m", "schemathesis.cli", "run", f"{base_url}/openapi.json",
               "--checks", "all", "--max-examples", str(EXAMPLES), "--seed", SEED, "--workers", "1",
               "--header", f"Authorization: {authorization}"]
    # In a scratch directory: the CLI keeps a cache (.schemathesis/) in its working directory.
    return subprocess.run(command, env=env, cwd=workdir, capture_output=True, text=True, timeout=600,
                          check=False)


@pytest.mark.parametrize("identity", sorted(IDENTITIES))
def test_every_operation_keeps_the_contract_under_every_check(tau_api: Any, identity: str,
                                                             tmp_path: Path) -> None:
    # Given the router's app served on the local stack over tau-retail
    _, _, client = tau_api
    base_url = str(client.base_url).rstrip("/")
    # When schemathesis runs every phase with every check, signed in as this identity
    run = schemathesis_run(base_url, IDENTITIES[identity], tmp_path)
    output = run.stdout + run.stderr
    # Then it tested every operation and found no failure of any check
    assert run.returncode == 0, output[-8000:]
    tested = re.search(r"Tested:\s+(\d+)", output)
    cases = re.search(r"(\d+) generated, (\d+) passed", output)
    assert tested and int(tested.group(1)) == OPERATIONS, output[-3000:]
    assert cases and cases.group(1) == cases.group(2) and int(cases.group(1)) >= OPERATIONS * EXAMPLES, \
        output[-3000:]
    print(f"\n{identity}: {cases.group(1)} cases, all passed (seed {SEED}, {EXAMPLES} examples)")
