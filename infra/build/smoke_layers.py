"""Import every function's handler from the built layers on CPython 3.12, the way Lambda loads them.

    python infra/build/smoke_layers.py --python /path/to/python3.12 [--build-dir .aws-sam/build]

Optional (not part of `make build`): it needs a CPython 3.12, which the build does not. The
built deps layer holds aarch64 wheels, which this machine cannot load, so the script installs the
same `layers/deps/requirements.txt` for this machine's architecture into a temporary twin, prunes
it with the same `layers/deps/prune.txt`, and then, in a fresh `python3.12 -S -B` (no
site-packages, no bytecode written: Lambda's /opt is read-only), with only the core layer, the
twin and the function's own folder on sys.path: imports each function's `app.py`, runs one
embedding, and checks that nothing of `layers/deps/exclude.txt` was imported. It prints each
import's time: a cold start without bytecode, as the layer ships. Exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lambda_requirements import GLIBC_MINOR_RANGE, OUTPUT  # noqa: E402 - sibling script

PROBE = textwrap.dedent("""
    import importlib.util, json, sys, time
    layers, folder, blocked = json.loads(sys.argv[1])
    sys.path[:0] = [folder, *layers]
    started = time.perf_counter()
    spec = importlib.util.spec_from_file_location("app", folder + "/app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    report = {"import_s": round(time.perf_counter() - started, 2), "handler": callable(module.handler)}
    if "Embed" in sys.argv[2:]:
        from csagent.nlp.embeddings import get_embedder
        report["dims"] = len(get_embedder().embed(["where is my order"])[0])
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


def install_twin(target: Path) -> None:
    """The deps layer for this machine's architecture, pruned with the layer's own rules."""
    machine = platform.machine()
    platforms = [arg for minor in GLIBC_MINOR_RANGE
                 for arg in ("--platform", f"manylinux_2_{minor}_{machine}")]
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile",
                    "--only-binary=:all:", "--implementation", "cp", "--python-version", "3.12",
                    "--abi", "cp312", *platforms, "--platform", f"manylinux2014_{machine}",
                    "--target", str(target), "-r", str(OUTPUT)], check=True)
    subprocess.run([sys.executable, str(Path(__file__).with_name("prune_layer.py")), str(target),
                    str(ROOT / "layers" / "deps" / "prune.txt")], check=True, stdout=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True, help="a CPython 3.12 interpreter")
    parser.add_argument("--build-dir", type=Path, default=ROOT / ".aws-sam" / "build")
    args = parser.parse_args(argv)

    functions = {p.parent.name: str(p.parent) for p in sorted(args.build_dir.glob("*Function/app.py"))}
    reports: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        twin = Path(tmp) / "deps" / "python"
        install_twin(twin)
        core = Path(tmp) / "core"
        shutil.copytree(args.build_dir / "CoreLayer" / "python", core)
        blocked = _left_out_modules(OUTPUT)
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "STAGE": "dev", "AUTH_MODE": "jwt",
               "AWS_REGION": "us-east-1"}
        for name, folder in functions.items():  # one fresh interpreter each: a cold start
            payload = json.dumps([[str(core), str(twin)], folder, blocked])
            flags = ["Embed"] if name == "KnowledgeSearchFunction" else []
            result = subprocess.run([args.python, "-S", "-B", "-c", PROBE, payload, *flags],
                                    capture_output=True, text=True, cwd=tmp, env=env, check=False)
            if result.returncode != 0:
                print(f"{name}:\n{result.stderr[-4000:]}", file=sys.stderr)
                return 1
            reports[name] = json.loads(result.stdout.splitlines()[-1])
    print(json.dumps(reports, indent=2))
    ok = all(str(r["python"]).startswith("3.12") and r["handler"] and not r["left_out_loaded"]
             for r in reports.values())
    return 0 if ok and reports.get("KnowledgeSearchFunction", {}).get("dims") == 384 else 1


if __name__ == "__main__":
    sys.exit(main())
