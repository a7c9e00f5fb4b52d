"""Every function's configuration and permissions match what its code uses.

For each `AWS::Serverless::Function` of template.yaml this compares three things:

- **what the template gives it**: its environment (its own variables and the Globals'), and
  the data resources its policies name (DynamoDB tables, SQS queues, S3 buckets, Secrets
  Manager secrets, state machines, and the ARN parameters a policy names, e.g. Neo4jSecretArn);
- **what settings exist**: the fields of every pydantic `BaseSettings` model in the core
  (`csagent.config.Settings`, `csagent.messaging.config.MessagingSettings`, the rate-limit,
  observability, fault, bounds and breaker settings), each read from the environment variable
  its name (or alias, or prefix + name) gives, and the variables Powertools reads
  (`aws_lambda_powertools.shared.constants`);
- **what its code uses**, found statically (no handler runs; no AWS, no Neo4j):

  1. The function's code is its `app.py` plus every definition of the core it can reach. A
     "definition" is a top-level function or class of a module, or the module's own body (what
     runs on import). From a definition we follow every name it references - a call, or a
     function passed along uncalled (`runtime.conversation_service`) - resolved through the
     module's imports, including imports inside functions and re-exports; importing a module
     reaches its body and its packages' `__init__`. Type annotations and `if TYPE_CHECKING:`
     blocks are skipped: they do not run. So a tool function that calls `runtime.graph_store()`
     reaches that getter and what it calls, not the checkpointer or the conversation service
     that live in the same module.
  2. A settings field is *read* when a reachable definition reads an attribute of that name
     (`s.checkpoints_table`) or calls `getattr(x, "name", ...)` with it. Reads inside the
     settings models themselves (their validators) do not count: checking that two settings
     agree does not touch a resource.
  3. A field *names a resource* when some function's environment sets its variable to a
     reference (`!Ref` / `!GetAtt` / `${...}`) to a data resource or ARN parameter.

  4. Code that the function's environment switches off is cut (`MODE_BOUNDARIES`): with
     DISPATCH_MODE=stepfunctions the router and the worker run no tool in-process.

The contracts, per function: every variable it is given is declared by a settings model or by
Powertools, and (its own ones) read by its code - no dead configuration; every setting its code
reads that the template sets from the stack elsewhere (a table, a parameter, a mapping) is set
for it too - else it would run on the local default; a resource setting names a resource of the
template; every resource its code reads has a policy, and every data resource a policy names is
one its code reads; a Bedrock permission goes with a model setting its code reads. Known gaps are
listed with their reason and must stay exactly as listed.

What this cannot see: code reached only through strings (`importlib`), and objects handed in
from outside the core. It over-approximates within a class (one method reached = all of them)
and for field names that are also ordinary attribute names (`stage`), which can only hide a
dead variable, never invent a missing permission. The analysis is checked against what we know
each function does (`test_the_analysis_tells_the_functions_apart`).
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from pydantic import AliasChoices
from pydantic_settings import BaseSettings

from devstack.template import load_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"
CORE = ROOT / "layers" / "core"
FUNCTION_TYPE = "AWS::Serverless::Function"
DATA_RESOURCE_TYPES = {
    "AWS::DynamoDB::Table", "AWS::SQS::Queue", "AWS::S3::Bucket", "AWS::SecretsManager::Secret",
    "AWS::Serverless::StateMachine", "AWS::StepFunctions::StateMachine",
}
# Settings fields that choose a generative model: a bedrock:* permission is for them.
MODEL_FIELDS = {"chat_model", "text2cypher_model"}
# Parameters listing the models a bedrock:* permission is for: not data resources (a Bedrock
# permission is checked against the model settings by test_a_bedrock_permission_goes_with_...).
MODEL_PARAMETERS = {"BedrockModelIds"}
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")
_SUB_REF = re.compile(r"\$\{([A-Za-z0-9]+)(?:\.[A-Za-z0-9.]+)?\}")

# Code that runs only in a mode the function's environment switches off: (variable, value) ->
# modules cut from its reach. With a dispatcher (DISPATCH_MODE=stepfunctions) the router and the
# worker never run tools in-process (graph/nodes/dispatch_wave.py; there is no fallback): the tool
# table csagent.tools.registry is what the in-process run_task node calls, so the tools' own
# settings (IDEMPOTENCY_TABLE for customer actions) are the tool functions' business.
MODE_BOUNDARIES: dict[tuple[str, str], tuple[str, ...]] = {
    ("DISPATCH_MODE", "stepfunctions"): ("csagent.tools.registry",),
}

# Known mismatches, each with the reason it is still there. A test fails when one is fixed (then
# delete it here) as much as when a new one appears.
KNOWN_DEAD_VARIABLES: dict[tuple[str, str], str] = {}
KNOWN_UNUSED_MODEL_PERMISSIONS: dict[str, str] = {}
KNOWN_UNSET_STACK_SETTINGS: dict[tuple[str, str], str] = {}


# ----------------------------------------------------------------------------------------------
# The template: environments and the resources policies name
# ----------------------------------------------------------------------------------------------
def _referents(value: Any) -> Iterator[str]:
    """Logical ids a template value references through Ref, GetAtt or Sub."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "Ref" and isinstance(inner, str):
                yield inner
            elif key == "Fn::GetAtt":
                yield inner[0] if isinstance(inner, list) else str(inner).split(".")[0]
            elif key == "Fn::Sub":
                text = inner[0] if isinstance(inner, list) else inner
                yield from _SUB_REF.findall(text)
                if isinstance(inner, list):
                    yield from _referents(inner[1])
            else:
                yield from _referents(inner)
    elif isinstance(value, list):
        for item in value:
            yield from _referents(item)


@dataclass(frozen=True)
class FunctionSpec:
    """What template.yaml gives one function."""

    name: str
    code_dir: Path
    own_env: dict[str, Any]
    env: dict[str, Any]                    # Globals + own
    env_resources: dict[str, set[str]]     # variable -> data resources it references
    policy_resources: set[str]             # data resources its policies name
    model_permission: bool                 # a bedrock:* action


def _policies(resource: dict[str, Any]) -> list[Any]:
    policies = resource.get("Properties", {}).get("Policies", [])
    return policies if isinstance(policies, list) else [policies]


def _data_ids(template: dict[str, Any]) -> set[str]:
    """Data resources, and the parameters a policy uses as a resource (an ARN given at deploy time)."""
    resources = {name for name, res in template["Resources"].items() if res["Type"] in DATA_RESOURCE_TYPES}
    in_policies = {ref for res in template["Resources"].values() for ref in _referents(_policies(res))}
    return resources | ((set(template.get("Parameters", {})) - MODEL_PARAMETERS) & in_policies)


def _actions(policies: list[Any]) -> Iterator[str]:
    for policy in policies:
        statements = policy.get("Statement", []) if isinstance(policy, dict) else []
        for statement in statements if isinstance(statements, list) else [statements]:
            actions = statement.get("Action", [])
            yield from actions if isinstance(actions, list) else [actions]


@cache
def function_specs() -> dict[str, FunctionSpec]:
    template = load_template(TEMPLATE)
    data_ids = _data_ids(template)
    global_env = template.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {})
    specs = {}
    for name, res in template["Resources"].items():
        if res["Type"] != FUNCTION_TYPE:
            continue
        props = res["Properties"]
        own_env = props.get("Environment", {}).get("Variables", {})
        env = {**global_env, **own_env}
        policies = _policies(res)
        specs[name] = FunctionSpec(
            name=name,
            code_dir=ROOT / props["CodeUri"],
            own_env=own_env,
            env=env,
            env_resources={var: set(_referents(value)) & data_ids for var, value in env.items()},
            policy_resources=set(_referents(policies)) & data_ids,
            model_permission=any(str(a).startswith("bedrock:") for a in _actions(policies)),
        )
    return specs


# ----------------------------------------------------------------------------------------------
# The settings models and the variables they read
# ----------------------------------------------------------------------------------------------
def _field_env_names(model: type[BaseSettings], name: str) -> set[str]:
    info = model.model_fields[name]
    aliases = info.validation_alias or info.alias
    if isinstance(aliases, AliasChoices):
        return {str(choice).upper() for choice in aliases.choices if isinstance(choice, str)}
    if isinstance(aliases, str):
        return {aliases.upper()}
    return {(str(model.model_config.get("env_prefix", "")) + name).upper()}


@cache
def settings_fields() -> dict[str, str]:
    """Environment variable -> settings field, over every BaseSettings model of the core."""
    variables: dict[str, str] = {}
    for module_name, class_name in sorted(code_index().settings_models):
        model = getattr(importlib.import_module(module_name), str(class_name))
        for name in model.model_fields:
            for variable in _field_env_names(model, name):
                variables[variable] = name
    return variables


@cache
def powertools_variables() -> set[str]:
    """The environment variables Powertools declares (its shared constants)."""
    constants = importlib.import_module("aws_lambda_powertools.shared.constants")
    return {value for value in vars(constants).values() if isinstance(value, str) and _ENV_NAME.match(value)}


# ----------------------------------------------------------------------------------------------
# The code: definitions, what they reference, which attributes they read
# ----------------------------------------------------------------------------------------------
Key = tuple[str, str | None]  # (module, top-level name), or (module, None) for the module's body
Binding = tuple[str, ...]       # ("module", m) or ("from", m, name)


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


class _Collector(ast.NodeVisitor):
    """Names, attribute reads and imports of one definition (annotations and TYPE_CHECKING skipped)."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.names: set[str] = set()
        self.chains: set[tuple[str, str]] = set()  # `name.attr`
        self.attributes: set[str] = set()
        self.imports: dict[str, Binding] = {}
        self.imported_modules: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        for stmt in node.orelse if _is_type_checking(node) else [node.test, *node.body, *node.orelse]:
            self.visit(stmt)

    def visit_arg(self, node: ast.arg) -> None:  # a parameter's annotation does not run
        return

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        defaults = [d for d in [*node.args.defaults, *node.args.kw_defaults] if d is not None]
        for part in [*node.decorator_list, *defaults, *node.body]:  # not the return annotation
            self.visit(part)

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815 - ast.NodeVisitor naming

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        for part in (node.target, node.value):
            if part is not None:
                self.visit(part)

    def visit_Name(self, node: ast.Name) -> None:
        self.names.add(node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.attributes.add(node.attr)
        if isinstance(node.value, ast.Name):
            self.chains.add((node.value.id, node.attr))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        is_getattr = isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
        if is_getattr and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            self.attributes.add(str(node.args[1].value))
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imported_modules.add(alias.name)
            bound = alias.name if alias.asname else alias.name.split(".")[0]
            self.imports[alias.asname or bound] = ("module", bound)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            parts = self.package.split(".")[: len(self.package.split(".")) - node.level + 1]
            base = ".".join([*parts, base] if base else parts)
        self.imported_modules.add(base)
        for alias in node.names:
            self.imports[alias.asname or alias.name] = ("from", base, alias.name)


@dataclass
class CodeIndex:
    """Every definition of the core and of the functions' app.py, with what it reads and references."""

    collectors: dict[Key, _Collector] = field(default_factory=dict)
    module_bindings: dict[str, dict[str, Binding]] = field(default_factory=dict)
    settings_models: set[Key] = field(default_factory=set)
    refs: dict[Key, set[Key]] = field(default_factory=dict)

    @property
    def modules(self) -> set[str]:
        return set(self.module_bindings)

    def add_module(self, module: str, package: str, tree: ast.Module) -> None:
        body = _Collector(package)
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                collector = _Collector(package)
                if isinstance(stmt, ast.ClassDef):
                    for part in [*stmt.bases, *stmt.decorator_list, *stmt.body]:
                        collector.visit(part)
                    # BaseSettings itself, or a settings part defined above in the same module
                    # (`csagent.config` composes its models from parts: `class Auth(Deployment)`)
                    if any(ast.unparse(b).split(".")[-1] == "BaseSettings" or (module, ast.unparse(b))
                           in self.settings_models for b in stmt.bases):
                        self.settings_models.add((module, stmt.name))
                else:
                    collector.visit(stmt)
                self.collectors[(module, stmt.name)] = collector
            else:
                body.visit(stmt)
        self.collectors[(module, None)] = body
        self.module_bindings[module] = body.imports

    def resolve(self, bindings: dict[str, Binding], module: str, name: str, depth: int = 0) -> set[Key]:
        """The definitions (or module bodies) that `name`, as bound in `module`, stands for."""
        if (module, name) in self.collectors:
            return {(module, name)}
        binding = bindings.get(name)
        if binding is None or depth > 5:
            return set()
        if binding[0] == "module":
            return {(binding[1], None)} if binding[1] in self.modules else set()
        _, base, attr = binding
        if f"{base}.{attr}" in self.modules:
            return {(f"{base}.{attr}", None)}
        via = self.resolve(self.module_bindings.get(base, {}), base, attr, depth + 1)  # re-exports
        return via | ({(base, None)} if base in self.modules else set())

    def link(self) -> None:
        for key, collector in self.collectors.items():
            module = key[0]
            bindings = {**self.module_bindings[module], **collector.imports}
            refs: set[Key] = {(module, None)}
            refs |= {(m, None) for imported in collector.imported_modules for m in _packages_of(imported)
                     if m in self.modules}
            for name in collector.names:
                refs |= self.resolve(bindings, module, name)
            for head, attr in collector.chains:
                for target, target_name in self.resolve(bindings, module, head):
                    if target_name is None:
                        refs |= self.resolve(self.module_bindings[target], target, attr)
            self.refs[key] = refs


def _packages_of(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _module_name(path: Path) -> tuple[str, str]:
    """(module, package) of a file under layers/core."""
    parts = list(path.relative_to(CORE).with_suffix("").parts)
    if parts[-1] == "__init__":
        name = ".".join(parts[:-1])
        return name, name
    return ".".join(parts), ".".join(parts[:-1])


def _app_module(function: str) -> str:
    return f"app:{function}"


@cache
def code_index() -> CodeIndex:
    """Every module of the core and every function's app.py, indexed and linked."""
    index = CodeIndex()
    for path in sorted((CORE / "csagent").rglob("*.py")):
        module, package = _module_name(path)
        index.add_module(module, package, ast.parse(path.read_text(encoding="utf-8")))
    for spec in function_specs().values():
        source = (spec.code_dir / "app.py").read_text(encoding="utf-8")
        index.add_module(_app_module(spec.name), "", ast.parse(source))
    index.link()
    return index


def _cut_modules(spec: FunctionSpec) -> set[str]:
    return {module for (variable, value), modules in MODE_BOUNDARIES.items()
            if spec.env.get(variable) == value for module in modules}


def reachable(function: str) -> set[Key]:
    """Every definition the function's app.py can reach (but the modules its mode switches off)."""
    index = code_index()
    cut = _cut_modules(function_specs()[function])
    pending = [key for key in index.collectors if key[0] == _app_module(function)]
    seen: set[Key] = set()
    while pending:
        key = pending.pop()
        if key in seen or key not in index.collectors or key[0] in cut:
            continue
        seen.add(key)
        pending.extend(index.refs[key])
        pending.extend((package, None) for package in _packages_of(key[0]) if package in index.modules)
    return seen


@cache
def fields_read(function: str) -> frozenset[str]:
    """Settings fields the function's code reads (outside the settings models themselves)."""
    index = code_index()
    attributes: set[str] = set()
    for key in reachable(function) - index.settings_models:
        attributes |= index.collectors[key].attributes
    return frozenset(attributes & set(settings_fields().values()))


@cache
def resource_fields() -> frozenset[str]:
    """Settings fields whose variable some function sets to a data resource (tables, queues, ...)."""
    variables = settings_fields()
    return frozenset(variables[var] for spec in function_specs().values()
                     for var, refs in spec.env_resources.items() if refs and var in variables)


def _is_stack_value(value: Any) -> bool:
    """True when a variable's value depends on the stack: a parameter, mapping or resource."""
    return "Fn::FindInMap" in str(value) or any(not r.startswith("AWS::") for r in _referents(value))


@cache
def stack_fields() -> frozenset[str]:
    """Settings fields that some function's environment sets from the stack (not a literal)."""
    variables = settings_fields()
    return frozenset(variables[var] for spec in function_specs().values()
                     for var, value in spec.env.items() if var in variables and _is_stack_value(value))


def _variables_of(spec: FunctionSpec, fields: Iterable[str]) -> dict[str, str]:
    """Field -> the function's variable that sets it, for the given fields it sets."""
    by_field = {name: var for var, name in settings_fields().items() if var in spec.env}
    return {name: by_field[name] for name in fields if name in by_field}


def resources_used(function: str) -> set[str]:
    """Data resources named by the variables of the fields the function's code reads."""
    spec = function_specs()[function]
    return {resource for var in _variables_of(spec, fields_read(function)).values()
            for resource in spec.env_resources[var]}


FUNCTIONS = sorted(function_specs())


# ----------------------------------------------------------------------------------------------
# The analysis is discriminating (so the contract tests below can fail)
# ----------------------------------------------------------------------------------------------
def test_the_analysis_tells_the_functions_apart() -> None:
    # Given what we know each function does
    # When the fields their code reads are computed
    router, webhook, tool = (fields_read(f) for f in ("RouterFunction", "WebhookFunction",
                                                        "PredefinedCypherFunction"))

    # Then the router reads the conversation's tables, the webhook only its queue and secrets,
    # and a read-only tool only Neo4j's settings
    assert {"checkpoints_table", "sessions_table", "ratelimit_table", "handoffs_table",
            "checkpoint_bucket", "state_machine_arn"} <= router
    assert {"webhook_queue_url", "webhook_secrets_arn"} <= webhook
    assert not webhook & {"checkpoints_table", "sessions_table", "neo4j_secret_arn"}
    assert {"neo4j_uri", "neo4j_secret_arn"} <= tool
    assert not tool & {"checkpoints_table", "idempotency_table", "state_machine_arn", "handoff_queue_url"}


def test_a_dispatch_mode_cuts_the_in_process_tools_from_the_router() -> None:
    # Given the router (DISPATCH_MODE=stepfunctions) and the customer-actions tool function
    # When the fields their code reads are computed
    # Then the tool reads its idempotency table and the router, whose tools run elsewhere, does not
    assert "idempotency_table" in fields_read("CustomerActionsFunction")
    assert "idempotency_table" not in fields_read("RouterFunction")


# ----------------------------------------------------------------------------------------------
# The contracts
# ----------------------------------------------------------------------------------------------
#: Variables the template sets for a library's own switches, read by the library itself.
LIBRARY_VARIABLES = frozenset({
    "PYDANTIC_DISABLE_PLUGINS",  # pydantic: no entry-point scan for plugins on a cold start
})


def test_every_environment_variable_is_declared_by_a_settings_model_or_powertools() -> None:
    # Given every variable the template sets (Globals and functions)
    declared = set(settings_fields()) | powertools_variables() | LIBRARY_VARIABLES

    # Then each one is a field of some settings model, a variable Powertools reads, or a named
    # library switch
    undeclared = {(spec.name, var) for spec in function_specs().values() for var in spec.env
                  if var.upper() not in declared}
    assert undeclared == set()


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_variable_of_a_function_is_read_by_its_code(function: str) -> None:
    # Given the function's own variables that a settings model declares (Powertools reads its own)
    spec = function_specs()[function]
    variables = {var: settings_fields()[var] for var in spec.own_env
                 if var in settings_fields() and var not in powertools_variables()}

    # When they are compared with the fields its code reads
    dead = {var for var, name in variables.items() if name not in fields_read(function)}

    # Then none is dead configuration (but the known gaps, which must stay exactly known)
    assert dead == {var for (fn, var) in KNOWN_DEAD_VARIABLES if fn == function}


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_stack_setting_the_code_reads_is_set_for_the_function(function: str) -> None:
    # Given the fields the code reads that the template sets from the stack somewhere (a table
    # name, a parameter, a mapping): left unset, the code would use its local default
    spec = function_specs()[function]
    needed = fields_read(function) & stack_fields()

    # When they are looked up in the function's environment
    unset = needed - set(_variables_of(spec, needed))

    # Then each one is set (but the known gaps)
    assert unset == {name for (fn, name) in KNOWN_UNSET_STACK_SETTINGS if fn == function}


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_resource_setting_the_code_reads_names_a_resource_of_the_template(function: str) -> None:
    # Given the resource-naming fields (tables, queues, buckets, secrets, state machine) the code reads
    spec = function_specs()[function]
    variables = _variables_of(spec, fields_read(function) & resource_fields())

    # Then the function sets each to a reference to a resource (or ARN parameter), never a literal
    assert {name for name, var in variables.items() if not spec.env_resources[var]} == set()


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_resource_the_code_reads_has_a_policy(function: str) -> None:
    # Given the resources named by the settings the function's code reads
    used = resources_used(function)

    # Then the function's policies name each of them
    assert used - function_specs()[function].policy_resources == set()


@pytest.mark.parametrize("function", FUNCTIONS)
def test_no_function_has_a_policy_for_a_resource_its_code_does_not_read(function: str) -> None:
    # Given the data resources the function's policies name
    granted = function_specs()[function].policy_resources

    # Then each is the resource of a setting its code reads
    assert granted - resources_used(function) == set()


@pytest.mark.parametrize("function", FUNCTIONS)
def test_a_bedrock_permission_goes_with_a_model_setting_the_code_reads(function: str) -> None:
    # Given whether the function may invoke Bedrock models, and whether its code reads a model setting
    spec = function_specs()[function]
    reads_model = bool(fields_read(function) & MODEL_FIELDS)

    # Then it has the permission exactly when it reads one; a known gap has it without reading one
    expected = (True, False) if function in KNOWN_UNUSED_MODEL_PERMISSIONS else (reads_model, reads_model)
    assert (spec.model_permission, reads_model) == expected
