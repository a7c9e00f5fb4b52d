"""Import every function's handler from the built layers on CPython 3.12, the way Lambda loads them.

    python infra/build/smoke_layers.py [--python /path/to/python3.12] [--build-dir .aws-sam/build]
                                       [--repeat 3] [--sources]

`make build` runs it after `sam build`. The built deps layer holds aarch64 wheels, which this
machine cannot load, so the script installs the same `layers/deps/requirements.txt` for this
machine's architecture into a temporary twin and builds it exactly as layers/deps/Makefile builds
the layer (the same `prune.txt`, then `compile_layer.py --sourceless`: stripped, sourceless 3.12
bytecode). Then, in a fresh `python3.12 -S -B` per import (no site-packages, no bytecode written:
Lambda's /opt is read-only), with only the built core layer, the twin and the function's own
folder on sys.path, it imports each function's `app.py` (`--repeat` times, the median is
reported), runs one embedding, makes a client of every AWS service whose model the layer keeps,
and checks that nothing of `layers/deps/exclude.txt` was imported. `--sources`: the twin keeps
its sources and the core layer's bytecode is left out (the layer as it was before it was
compiled: every import compiles). Prints a table of import times; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from compile_layer import NoPython312, find_python312  # noqa: E402 - sibling script
from lambda_requirements import GLIBC_MINOR_RANGE, OUTPUT  # noqa: E402 - sibling script
from prune_layer import read_rules  # noqa: E402 - sibling script

PROBE = textwrap.dedent("""
    import importlib.util, json, sys, time
    layers, folder, blocked = json.loads(sys.argv[1])
    sys.path[:0] = [folder, *layers]
    started = time.perf_counter()
    spec = importlib.util.spec_from_file_location("app", folder + "/app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    report = {"import_ms": round((time.perf_counter() - started) * 1000, 1),
              # the stream function is an ASGI app behind the Web Adapter (run.sh): `app`, no handler
              "handler": callable(getattr(module, "handler", None) or getattr(module, "app", None))}
    if "Embed" in sys.argv[2:]:
        from csagent.nlp.embeddings import get_embedder
        report["dims"] = len(get_embedder().embed(["where is my order"])[0])
        import boto3
        report["clients"] = sorted(boto3.client(name, region_name="us-east-1").meta.service_model.service_name
                                   for name in json.loads(sys.argv[3]))
    report["left_out_loaded"] = sorted({m.split(".")[0] for m in sys.modules} & set(blocked))
    report["python"] = sys.version.split()[0]
    print(json.dumps(report))
""")


def _left_out_modules(requirements: Path) -> list[str]:
    """Top-level module names of the packages the layer leaves out (as installed in this venv)."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    text = requirements.read_text(encoding="utf-8")
    section = text.split("# Left out", 1)[1].splitlines()[1:] if "# Left out" in text else []
    names = {canonicalize_name(Requirement(line.removeprefix("#").strip()).name)
             for line in section if "==" in line}
    return sorted(module for module, dists in metadata.packages_distributions().items()
                  if any(canonicalize_name(d) in names for d in dists))


def kept_services(rules: Path = ROOT / "layers" / "deps" / "prune.txt") -> list[str]:
    """The AWS services whose botocore models the deps layer keeps (its `botocore/data/*/ except` rule)."""
    return sorted(name for rule in read_rules(rules) if rule.startswith("botocore/data/")
                  for name in rule.partition(" except ")[2].split())


def install_twin(target: Path, python312: str, *, compiled: bool = True) -> None:
    """The deps layer for this machine's architecture, built with the layer's own rules and steps."""
    machine = platform.machine()
    platforms = [arg for minor in GLIBC_MINOR_RANGE
                 for arg in ("--platform", f"manylinux_2_{minor}_{machine}")]
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile",
                    "--only-binary=:all:", "--implementation", "cp", "--python-version", "3.12",
                    "--abi", "cp312", *platforms, "--platform", f"manylinux2014_{machine}",
                    "--target", str(target), "-r", str(OUTPUT)], check=True)
    subprocess.run([sys.executable, str(Path(__file__).with_name("prune_layer.py")), str(target),
                    str(ROOT / "layers" / "deps" / "prune.txt")], check=True, stdout=subprocess.DEVNULL)
    if compiled:
        subprocess.run([sys.executable, str(Path(__file__).with_name("compile_layer.py")), str(target),
                        "--sourceless", "--python", python312], check=True, stdout=subprocess.DEVNULL)


def render(reports: dict[str, dict[str, object]]) -> str:
    """One row per function: its cold import's median and range."""
    width = max(len("function"), *(len(name) for name in reports))
    lines = [f"{'function':<{width}}  {'import ms':>9}  {'min-max ms':>13}"]
    for name, report in reports.items():
        runs = [float(ms) for ms in report["import_ms_runs"]]  # type: ignore[attr-defined]
        lines.append(f"{name:<{width}}  {statistics.median(runs):9.0f}  {min(runs):6.0f}-{max(runs):<6.0f}")
    return "\n".join(lines)


def template_variables() -> dict[str, dict[str, str]]:
    """Each function's environment as template.yaml sets it (Globals included): a parameter's
    default where the template refers to one (`!Ref`, `!FindInMap` on it), else a placeholder of
    the form the stack would resolve it to (a resource's name, queue URL, ARN)."""
    sys.path.insert(0, str(ROOT / "infra"))
    from devstack.template import load_template

    template = load_template(ROOT / "template.yaml")
    common = template["Globals"]["Function"].get("Environment", {}).get("Variables", {})
    out: dict[str, dict[str, str]] = {}
    for name, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        variables = {**common, **resource["Properties"].get("Environment", {}).get("Variables", {})}
        out[name] = {key: _resolved(key, value, template) for key, value in variables.items()}
    return out


def _resolved(key: str, value: object, template: dict[str, Any]) -> str:
    if isinstance(value, str | int | float | bool):
        return str(value)
    parameters = template.get("Parameters", {})

    def default(ref: object) -> str | None:
        if isinstance(ref, dict) and "Ref" in ref:
            found = parameters.get(ref["Ref"], {}).get("Default")
            return None if found in (None, "") else str(found)
        return ref if isinstance(ref, str) else None

    if isinstance(value, dict) and "Ref" in value and default(value) is not None:
        return str(default(value))
    if isinstance(value, dict) and "Fn::FindInMap" in value:
        table, first, second = value["Fn::FindInMap"]
        key_one, key_two = default(first), default(second)
        if key_one is not None and key_two is not None:
            return str(template["Mappings"][table][key_one][key_two])
    return _placeholder(key)


def _placeholder(key: str) -> str:
    """A value of the form the variable holds once the stack resolves it."""
    if key.endswith("_URL"):
        return f"https://sqs.us-east-1.amazonaws.com/123456789012/smoke-{key.lower()}"
    if key.endswith("_ARN"):
        return f"arn:aws:secretsmanager:us-east-1:123456789012:secret:smoke-{key.lower()}"
    if key == "NEO4J_URI":
        return "neo4j+s://smoke.databases.neo4j.io"
    return f"smoke-{key.lower().replace('_', '-')}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", help="a CPython 3.12 (default: python3.12 on PATH, pyenv's 3.12.x)")
    parser.add_argument("--build-dir", type=Path, default=ROOT / ".aws-sam" / "build")
    parser.add_argument("--repeat", type=int, default=3, help="cold imports per function (median)")
    parser.add_argument("--sources", action="store_true", help="measure the layers without their bytecode")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON, not the table")
    args = parser.parse_args(argv)
    try:
        python = find_python312(args.python)
    except NoPython312 as exc:
        print(f"smoke_layers: {exc}; install one (e.g. `pyenv install 3.12`) or pass --python",
              file=sys.stderr)
        return 2

    args.build_dir = args.build_dir.resolve()  # the probes run in a scratch folder
    functions = {p.parent.name: str(p.parent) for p in sorted(args.build_dir.glob("*Function/app.py"))}
    reports: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        twin = Path(tmp) / "deps" / "python"
        install_twin(twin, python, compiled=not args.sources)
        core = Path(tmp) / "core"
        shutil.copytree(args.build_dir / "CoreLayer" / "python", core,
                        ignore=shutil.ignore_patterns("__pycache__") if args.sources else None)
        blocked = _left_out_modules(OUTPUT)
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "STAGE": "dev", "AUTH_MODE": "jwt",
               "AWS_REGION": "us-east-1"}
        stack_env = template_variables()
        services = kept_services()
        for _ in range(args.repeat):  # round-robin, one fresh interpreter each: a cold start
            for name, folder in functions.items():
                payload = json.dumps([[str(core), str(twin)], folder, blocked])
                flags = ["Embed", json.dumps(services)] if name == "KnowledgeSearchFunction" else []
                # What Lambda gives the function: the template's variables (the stack's names as
                # placeholders), since a handler validates its configuration when it is loaded.
                function_env = {**stack_env.get(name, {}), **env}
                result = subprocess.run([python, "-S", "-B", "-c", PROBE, payload, *flags],
                                        capture_output=True, text=True, cwd=tmp, env=function_env,
                                        check=False)
                if result.returncode != 0:
                    print(f"{name}:\n{result.stderr[-4000:]}", file=sys.stderr)
                    return 1
                report = json.loads(result.stdout.splitlines()[-1])
                runs = [*reports.get(name, {}).get("import_ms_runs", []), report.pop("import_ms")]
                reports[name] = {**report, "import_ms_runs": runs}
    print(json.dumps(reports, indent=2) if args.json else render(reports))
    print(f"({python}, {'sources, no bytecode' if args.sources else 'the layers as built'}, "
          f"{args.repeat} cold imports each)")
    search = reports.get("KnowledgeSearchFunction", {})
    ok = all(str(r["python"]).startswith("3.12") and r["handler"] and not r["left_out_loaded"]
             for r in reports.values())
    if search.get("dims") != 384 or search.get("clients") != sorted(services):
        print(f"the embedder or an AWS client failed: {search}", file=sys.stderr)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
