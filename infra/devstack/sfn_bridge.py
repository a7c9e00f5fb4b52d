"""Local Step Functions for the tool dispatch: the real ASL on moto's interpreter, calling the real
tool Lambda handlers in-process. No Docker.

    with LocalStepFunctions() as sfn:                      # tests: open and close around them
        dispatcher = LocalStepFunctionsDispatcher(sfn, sfn.deploy())
        results = dispatcher.run_wave(tasks, customer_id, session_id)

    dispatcher = LocalStepFunctionsDispatcher.for_process()  # a local router: lives with the process

Why a bridge: moto executes state machines (its ASL interpreter, `moto.stepfunctions.parser`)
but (1) runs Lambda Task states through its Lambda backend, which needs Docker, and (2) has no
StartSyncExecution. This module bridges both and nothing else:

1. moto runs *in this process* (`ThreadedMotoServer` on a free loopback port), with state
   machine execution switched on through its config API before any state machine is created.
2. One function of moto is replaced while the bridge is open:
   `moto.stepfunctions.parser.asl.component.state.exec.state_task.lambda_eval_utils
   ._invoke_lambda_function(parameters, region, state_credentials)`, the single call through
   which moto 5.2.5's interpreter invokes Lambda (for `arn:aws:states:::lambda:invoke` and plain
   function-ARN Task resources alike). The replacement loads `functions/tools/<tool>/app.py`
   and calls its `handler(event, context)` in-process, answering like the Lambda Invoke API:
   the return value as Payload, or `FunctionError: "Unhandled"` with `{"errorType",
   "errorMessage"}` when the handler raises - so Retry and Catch match the same error names
   as in AWS ("Runtime.ImportModuleError", ...); an Invoke API error (a `ClientError`) becomes
   `Lambda.<code>` ("Lambda.ServiceException"), as moto names it. Which handler serves
   which function ARN comes from template.yaml (each tool function's CodeUri).
3. StartSyncExecution is emulated as StartExecution + DescribeExecution polling (bounded by
   `max_wait_s`), answering in StartSyncExecution's shape (SUCCEEDED | FAILED | TIMED_OUT).

What moto's interpreter does with the ASL (read in moto 5.2.5, and exercised by
tests/integration/test_stepfunctions_dispatch.py): Map (INLINE ItemProcessor, ItemSelector with
`$$.Map.Item.Value`, MaxConcurrency = worker threads), Choice (StringEquals, Default), Pass with
Parameters and intrinsic functions (States.Format), Task with TimeoutSeconds (the task runs in a
thread; the wait is bounded, then States.Timeout), Retry (ErrorEquals, IntervalSeconds,
BackoffRate, MaxAttempts, MaxDelaySeconds, JitterStrategy FULL - really sleeping), Catch with
ResultPath. DefinitionSubstitutions are CloudFormation's, so `deploy` applies them itself, with
the values template.yaml gives (overridable, e.g. a 1 s timeout in a test).

Differences from AWS, on purpose or not: the handlers share this process, so Powertools'
singletons (logger correlation id, metric set) are shared between concurrent iterations - the
bridge turns metrics off (`POWERTOOLS_METRICS_DISABLED`) and tracing off unless already set; a
timed-out handler keeps running in its (daemon) thread, as a timed-out Lambda would until its
own timeout; Lambda's function timeout and memory are not enforced; executions stay in moto's
memory until the bridge closes (it deletes its state machines); moto re-parses the ASL on every
execution (about 50 ms here; AWS does not). One bridge per process (the replaced function is global).

Test hook: `faults` (task id -> `Fault`) makes the invocation of that task's tool fail with a
Lambda service error, crash, stall, or answer a failed ToolResult before (instead of) the real
handler; `invocations` records every call and `events` the task each one carried.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import logging
import os
import re
import threading
import time
import traceback
import urllib.request
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any, Literal

from csagent.adapters.stepfunctions_dispatch import StepFunctionsDispatcher
from csagent.domain.models import ErrorType, Task, ToolResult
from devstack.template import DEFAULT_STACK_NAME, LOCAL_ACCOUNT_ID, LOCAL_REGION, load_template

ROOT = Path(__file__).resolve().parents[2]
ASL_PATH = ROOT / "infra" / "statemachines" / "tools.asl.json"
STATE_MACHINE_ID = "DispatchStateMachine"
TOOLS_CODE_PREFIX = "functions/tools/"
DUMMY_ROLE = f"arn:aws:iam::{LOCAL_ACCOUNT_ID}:role/csagent-local-dispatch"
_PLACEHOLDER_RE = re.compile(r"\$\{([A-Za-z0-9_]+)\}")
# Set for the handlers unless the environment says otherwise (see the module docstring).
_LOCAL_HANDLER_ENV = {"POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true"}

Handler = Callable[[dict[str, Any], Any], Any]


# ----------------------------------------------------------------------------------------------
# The state machine as template.yaml deploys it
# ----------------------------------------------------------------------------------------------
def render_definition(substitutions: Mapping[str, Any], asl_path: Path = ASL_PATH) -> str:
    """The ASL with its `${Name}` placeholders replaced, as CloudFormation's DefinitionSubstitutions
    does (textually: unquoted numbers stay numbers). Raises KeyError naming a missing value."""
    text = asl_path.read_text(encoding="utf-8")
    missing = sorted(set(_PLACEHOLDER_RE.findall(text)) - set(substitutions))
    if missing:
        raise KeyError(f"no substitution for {missing}")
    return _PLACEHOLDER_RE.sub(lambda m: str(substitutions[m.group(1)]), text)


def function_arn(logical_id: str, stack_name: str = DEFAULT_STACK_NAME) -> str:
    """The local ARN of a template function (SAM names it `<stack>-<LogicalId>-<suffix>` in AWS)."""
    return f"arn:aws:lambda:{LOCAL_REGION}:{LOCAL_ACCOUNT_ID}:function:{stack_name}-{logical_id}"


@dataclass(frozen=True)
class DispatchDeployment:
    """What the bridge needs from template.yaml: substitutions (resolved locally) and which tool
    code serves which function ARN."""

    substitutions: Mapping[str, Any]
    tools_by_arn: Mapping[str, str]  # function ARN -> tool directory name under functions/tools


def deployment_from_template(template_path: Path | str | None = None,
                             stack_name: str = DEFAULT_STACK_NAME) -> DispatchDeployment:
    """Resolve the dispatch state machine's DefinitionSubstitutions for the local stack.

    Supports exactly what that map uses: `!GetAtt <Function>.Arn`, `!Ref <Function>.Alias` (the
    ARN qualified by its `AutoPublishAlias`), `!Ref <Parameter>` (its default) and `!FindInMap`
    with literal keys; anything else raises ValueError. A tool is found by its ARN with or
    without the alias.
    """
    template = load_template(template_path)
    resources = template["Resources"]
    parameters = template.get("Parameters", {})
    mappings = template.get("Mappings", {})
    code_uris = {logical_id: str(res.get("Properties", {}).get("CodeUri", ""))
                 for logical_id, res in resources.items() if res.get("Type") == "AWS::Serverless::Function"}
    aliases = {logical_id: res["Properties"]["AutoPublishAlias"] for logical_id, res in resources.items()
               if res.get("Type") == "AWS::Serverless::Function"
               and res.get("Properties", {}).get("AutoPublishAlias")}

    def alias_arn(logical_id: str) -> str:
        return f"{function_arn(logical_id, stack_name)}:{aliases[logical_id]}"

    tools_by_arn: dict[str, str] = {}
    for logical_id, uri in code_uris.items():
        if uri.startswith(TOOLS_CODE_PREFIX):
            tool = uri.removeprefix(TOOLS_CODE_PREFIX).strip("/")
            tools_by_arn[function_arn(logical_id, stack_name)] = tool
            if logical_id in aliases:
                tools_by_arn[alias_arn(logical_id)] = tool

    def resolve(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        if list(value) == ["Fn::GetAtt"] and value["Fn::GetAtt"][1] == "Arn":
            return function_arn(value["Fn::GetAtt"][0], stack_name)
        if list(value) == ["Ref"] and value["Ref"].endswith(".Alias") and value["Ref"][:-6] in aliases:
            return alias_arn(value["Ref"][:-6])
        if list(value) == ["Ref"] and "Default" in parameters.get(value["Ref"], {}):
            return parameters[value["Ref"]]["Default"]
        if list(value) == ["Fn::FindInMap"]:
            name, key, attribute = value["Fn::FindInMap"]
            return mappings[name][key][attribute]
        raise ValueError(f"cannot resolve {value!r} locally")

    raw = resources[STATE_MACHINE_ID]["Properties"]["DefinitionSubstitutions"]
    return DispatchDeployment({k: resolve(v) for k, v in raw.items()}, tools_by_arn)


# ----------------------------------------------------------------------------------------------
# Tool handlers, loaded like Lambda loads `app.handler`
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LambdaContext:
    """The attributes of the Lambda context object the Powertools decorators read."""

    function_name: str
    invoked_function_arn: str
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    memory_limit_in_mb: int = 1024
    function_version: str = "$LATEST"
    log_group_name: str = "/aws/lambda/local"
    log_stream_name: str = "local"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 30_000


def load_handler(tool: str, tools_dir: Path = ROOT / "functions" / "tools") -> Handler:
    """`handler` of `functions/tools/<tool>/app.py`, imported as its own module (as Lambda would)."""
    path = tools_dir / tool / "app.py"
    spec = importlib.util.spec_from_file_location(f"csagent_tool_{tool}_app", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"no handler module at {path}")
    module: ModuleType = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler  # type: ignore[no-any-return]


class LambdaInvocationError(Exception):
    """A Lambda-runtime error with an AWS error type name ("Runtime.ImportModuleError", ...)."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


# ----------------------------------------------------------------------------------------------
# Test-only faults
# ----------------------------------------------------------------------------------------------
@dataclass
class Fault:
    """A failure injected into the tool invocations of one task (tests only).

    `service`: the Lambda Invoke API fails with a service error (`Lambda.ServiceException`: an
    infrastructure error, which the state machine retries); `crash`: the handler raises
    RuntimeError; `delay`: it sleeps `seconds`, then runs the real handler; `result`: the tool
    answers a failed ToolResult of type `error` (what a tool returns when its dependency fails:
    the router's healer handles it). `times`: only the first N invocations (None: all of them).
    """

    kind: Literal["service", "crash", "delay", "result"]
    times: int | None = None
    seconds: float = 0.0
    error: ErrorType = ErrorType.TRANSIENT
    used: int = 0

    def take(self) -> bool:
        """Count one invocation; True if this one is to fail (call under the bridge's lock)."""
        if self.times is not None and self.used >= self.times:
            return False
        self.used += 1
        return True

    def strike(self, event: Mapping[str, Any]) -> dict[str, Any] | None:
        """Fail (or stall) the way `kind` says; a `result` fault returns the tool's answer."""
        if self.kind == "service":
            from botocore.exceptions import ClientError

            error = {"Code": "ServiceException", "Message": "injected Lambda service error"}
            raise ClientError({"Error": error, "ResponseMetadata": {"HTTPStatusCode": 500,  # type: ignore[typeddict-item]
                                                                    "RequestId": "local"}}, "Invoke")
        if self.kind == "crash":
            raise LambdaInvocationError("RuntimeError", "injected crash")
        if self.kind == "result":
            task = Task.model_validate(event["task"])
            failed = ToolResult.failed(task, self.error, f"{self.error.value} (injected fault)",
                                       retryable=self.error in (ErrorType.TRANSIENT, ErrorType.TIMEOUT))
            return failed.model_dump(mode="json")
        time.sleep(self.seconds)
        return None


# ----------------------------------------------------------------------------------------------
# The bridge
# ----------------------------------------------------------------------------------------------
_ACTIVE_LOCK = threading.Lock()
_ACTIVE: LocalStepFunctions | None = None


class LocalStepFunctions:
    """moto's Step Functions in-process, tool Lambdas in-process, StartSyncExecution emulated.

    Implements `start_sync_execution`, so it is the client a `StepFunctionsDispatcher` needs.
    """

    def __init__(self, *, template_path: Path | str | None = None, stack_name: str = DEFAULT_STACK_NAME,
                 handler_loader: Callable[[str], Handler] = load_handler, poll_interval_s: float = 0.01,
                 max_wait_s: float = 300.0) -> None:
        self.deployment = deployment_from_template(template_path, stack_name)
        self.faults: dict[str, Fault] = {}
        self.invocations: list[tuple[str, str]] = []  # (tool, task_id), in call order
        self.events: list[dict[str, Any]] = []  # the task of each invocation, in call order
        self._load_handler = handler_loader
        self._handlers: dict[str, Handler] = {}
        self._lock = threading.Lock()
        self._poll_interval_s = poll_interval_s
        self._max_wait_s = max_wait_s
        self._server: Any = None
        self._client: Any = None
        self._endpoint = ""
        self._restore: list[Callable[[], object]] = []
        self._deployed: list[str] = []

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> LocalStepFunctions:
        """Start moto in-process, enable execution, install the Lambda seam. Idempotent."""
        global _ACTIVE
        if self._server is not None:
            return self
        import boto3
        from moto.server import ThreadedMotoServer
        from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils

        with _ACTIVE_LOCK:
            if _ACTIVE is not None:
                raise RuntimeError("a LocalStepFunctions bridge is already open in this process")
            _ACTIVE = self
        try:
            logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
            for key, value in _LOCAL_HANDLER_ENV.items():
                if key not in os.environ:
                    os.environ[key] = value
                    self._restore.append(functools.partial(os.environ.pop, key, None))
            self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
            self._server.start()
            host, port = self._server.get_host_and_port()
            self._endpoint = f"http://{host}:{port}"
            previous = _set_moto_sfn_config(self._endpoint, {"execute_state_machine": True})
            self._restore.append(lambda: _set_moto_sfn_config(self._endpoint, previous))
            original = lambda_eval_utils._invoke_lambda_function
            lambda_eval_utils._invoke_lambda_function = self._invoke
            self._restore.append(lambda: setattr(lambda_eval_utils, "_invoke_lambda_function", original))
            self._client = boto3.client("stepfunctions", endpoint_url=self._endpoint,
                                        region_name=LOCAL_REGION, aws_access_key_id="testing",
                                        aws_secret_access_key="testing")
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Undo everything `start` did, in reverse order, and stop the server."""
        global _ACTIVE
        for arn in self._deployed:  # moto's backends outlive the server: leave nothing behind
            self._client.delete_state_machine(stateMachineArn=arn)
        self._deployed.clear()
        while self._restore:
            self._restore.pop()()
        if self._server is not None:
            self._server.stop()
            self._server = None
        with _ACTIVE_LOCK:
            if _ACTIVE is self:
                _ACTIVE = None

    def __enter__(self) -> LocalStepFunctions:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @property
    def endpoint(self) -> str:
        return self._endpoint

    @property
    def client(self) -> Any:
        """A boto3 `stepfunctions` client on the in-process moto server."""
        if self._client is None:
            raise RuntimeError("start() the bridge first")
        return self._client

    # -- deploying -----------------------------------------------------------------------------
    def deploy(self, name: str = "csagent-local-dispatch", **overrides: Any) -> str:
        """Create the dispatch state machine (template substitutions, then `overrides`); its ARN."""
        definition = render_definition({**self.deployment.substitutions, **overrides})
        response = self.client.create_state_machine(name=name, definition=definition, roleArn=DUMMY_ROLE,
                                                    type="EXPRESS")
        self._deployed.append(str(response["stateMachineArn"]))
        return self._deployed[-1]

    # -- StartSyncExecution, emulated ------------------------------------------------------------
    def start_sync_execution(self, *, stateMachineArn: str, input: str = "{}",  # boto3's parameter names
                             name: str | None = None, **_: Any) -> dict[str, Any]:
        """StartExecution, then DescribeExecution until the execution ends (at most `max_wait_s`)."""
        name = name or f"sync-{uuid.uuid4().hex}"
        started = self.client.start_execution(stateMachineArn=stateMachineArn, name=name, input=input)
        arn = started["executionArn"]
        deadline = time.monotonic() + self._max_wait_s
        described = self.client.describe_execution(executionArn=arn)
        while described["status"] == "RUNNING":
            if time.monotonic() >= deadline:
                self.client.stop_execution(executionArn=arn, error="States.Timeout",
                                           cause=f"no result within {self._max_wait_s:.0f} s")
                return {"executionArn": arn, "stateMachineArn": stateMachineArn, "name": name,
                        "status": "TIMED_OUT", "error": "States.Timeout"}
            time.sleep(self._poll_interval_s)
            described = self.client.describe_execution(executionArn=arn)
        status = described["status"] if described["status"] in ("SUCCEEDED", "TIMED_OUT") else "FAILED"
        keys = ("executionArn", "stateMachineArn", "name", "startDate", "stopDate", "input", "output",
                "error", "cause")
        return {**{k: described[k] for k in keys if k in described}, "status": status}

    # -- the Lambda seam ---------------------------------------------------------------------------
    def _invoke(self, parameters: dict[str, Any], region: str, state_credentials: Any) -> dict[str, Any]:
        """Replacement of moto's `_invoke_lambda_function`: the Lambda Invoke API, in-process."""
        arn = str(parameters.get("FunctionName", ""))
        tool = self.deployment.tools_by_arn.get(arn)
        if tool is None:
            from botocore.exceptions import ClientError

            error = {"Code": "ResourceNotFoundException", "Message": f"Function not found: {arn}"}
            metadata = {"HTTPStatusCode": 404, "RequestId": "local"}
            raise ClientError({"Error": error, "ResponseMetadata": metadata}, "Invoke")  # type: ignore[arg-type]
        raw = parameters.get("Payload") or b"{}"
        event = json.loads(raw.decode() if isinstance(raw, bytes) else raw)
        task_id = str((event.get("task") or {}).get("task_id", "")) if isinstance(event, dict) else ""
        with self._lock:
            self.invocations.append((tool, task_id))
            self.events.append(dict(event.get("task") or {}) if isinstance(event, dict) else {})
            fault = self.faults.get(task_id)
            fault = fault if fault is not None and fault.take() else None
        if fault is not None and fault.kind == "service":
            fault.strike(event)  # raises the Invoke API's ClientError, as boto3 would
        try:
            answer = fault.strike(event) if fault is not None else None
            if answer is not None:
                return {"StatusCode": 200, "ExecutedVersion": "$LATEST", "Payload": answer}
            handler = self._handler(tool)
            context = LambdaContext(function_name=arn.rsplit(":", 1)[-1], invoked_function_arn=arn)
            payload = handler(event, context)
            try:
                body = json.loads(json.dumps(payload))
            except (TypeError, ValueError) as exc:
                raise LambdaInvocationError("Runtime.MarshalError", f"Unable to marshal response: {exc}") \
                    from exc
            return {"StatusCode": 200, "ExecutedVersion": "$LATEST", "Payload": body}
        except Exception as exc:  # noqa: BLE001 - an unhandled handler error, reported as Lambda does
            error_type = exc.error_type if isinstance(exc, LambdaInvocationError) else type(exc).__name__
            return {"StatusCode": 200, "ExecutedVersion": "$LATEST", "FunctionError": "Unhandled",
                    "Payload": {"errorType": error_type, "errorMessage": str(exc),
                                "stackTrace": traceback.format_tb(exc.__traceback__)}}

    def _handler(self, tool: str) -> Handler:
        with self._lock:
            if tool not in self._handlers:
                try:
                    self._handlers[tool] = self._load_handler(tool)
                except Exception as exc:  # noqa: BLE001 - what Lambda reports for a broken import
                    raise LambdaInvocationError("Runtime.ImportModuleError",
                                                f"Unable to import module 'app': {exc}") from exc
            return self._handlers[tool]


def _set_moto_sfn_config(endpoint: str, value: Mapping[str, Any]) -> dict[str, Any]:
    """Set moto's Step Functions config through its config API; returns the previous value.

    moto serves Step Functions from its ASL interpreter only while `execute_state_machine` is
    on, and from a different store: it must be on before any state machine is created.
    """
    from moto.core.config import default_user_config

    previous = dict(default_user_config.get("stepfunctions", {}))
    request = urllib.request.Request(f"{endpoint}/moto-api/config", method="POST",
                                     data=json.dumps({"stepfunctions": dict(value)}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10.0):  # noqa: S310 - the in-process loopback server
        pass
    return previous


class LocalStepFunctionsDispatcher(StepFunctionsDispatcher):
    """The AWS dispatcher over the bridge: same `run_wave`, same handling of the execution's
    outcome; only StartSyncExecution is emulated."""

    def __init__(self, bridge: LocalStepFunctions, state_machine_arn: str) -> None:
        super().__init__(bridge, state_machine_arn)
        self.bridge = bridge

    @classmethod
    def for_process(cls, **overrides: Any) -> LocalStepFunctionsDispatcher:
        """The dispatcher of this process's one long-lived bridge (a local router, a demo): started
        on first use, closed at exit, the same on every call (`runtime.reset()` may call again).
        `overrides` (DefinitionSubstitutions, e.g. `MaxConcurrency=1`) apply when it is created."""
        global _PROCESS_DISPATCHER
        with _PROCESS_LOCK:
            if _PROCESS_DISPATCHER is None:
                bridge = LocalStepFunctions().start()
                atexit.register(bridge.close)
                _PROCESS_DISPATCHER = cls(bridge, bridge.deploy(**overrides))
            return _PROCESS_DISPATCHER

    @classmethod
    def close_process(cls) -> None:
        """Close this process's bridge (tests that need their own bridge afterwards)."""
        global _PROCESS_DISPATCHER
        with _PROCESS_LOCK:
            if _PROCESS_DISPATCHER is not None:
                _PROCESS_DISPATCHER.bridge.close()
                _PROCESS_DISPATCHER = None


_PROCESS_LOCK = threading.Lock()
_PROCESS_DISPATCHER: LocalStepFunctionsDispatcher | None = None
