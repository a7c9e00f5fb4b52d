"""Make a built layer's python/ folder load fast and weigh little: strip its native libraries and
byte-compile it for Lambda's CPython 3.12.

    python infra/build/compile_layer.py <layer>/python --sourceless   # the deps layer
    python infra/build/compile_layer.py <layer>/python                # the core layer (sources kept)

Lambda's /opt is read-only, so a layer without bytecode is compiled from source by every new
container, on every cold start (and the compiled code is thrown away). This writes the bytecode
once, with a CPython 3.12 (`--python`, else the first of `python3.12` on PATH and pyenv's 3.12.x;
bytecode depends on the minor version only, so any 3.12.x writes what Lambda's 3.12 reads).

- `--sourceless` (the deps layer): each `x.py` is replaced by `x.pyc` beside it, the layout
  CPython imports without a source (`SourcelessFileLoader`). The layer holds one copy of each
  module instead of two; a traceback through a dependency shows file and line, not the line's text.
- otherwise (our own code): `__pycache__/x.cpython-312.pyc` next to each source, with
  unchecked-hash invalidation (PEP 552): the pyc is used without comparing it to the source's
  mtime, which a zip's 2-second timestamps would not match. Tracebacks keep their source lines.

Native libraries (`*.so*`) lose their debug sections and the symbols no dynamic linking needs
(`strip --strip-unneeded`, what Debian's packages do), with llvm-strip (it reads every
architecture; none found: the libraries are left as they are, with a warning). Left alone: the
libraries auditwheel rewrote with patchelf (an RPATH/RUNPATH, or inside a `<package>.libs`
folder: numpy's, onnxruntime's): strip re-lays their segments out and the loader then refuses them
("ELF load command address/offset not page-aligned"), which `make build`'s import check caught on
numpy. Prints the bytes each step freed or added.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MIB = 1024 * 1024
TARGET = (3, 12)
#: What the layer's code is compiled with when nothing else is named (checked to be a 3.12).
PYENV_GLOBS = ("~/.pyenv/versions/3.12.*/bin/python3.12", "/opt/pyenv/versions/3.12.*/bin/python3.12")
#: An ELF strip that reads aarch64 as well as this machine's architecture, and its readelf.
STRIPPER, READELF = "llvm-strip", "llvm-readelf"
_ELF = b"\x7fELF"


class NoPython312(RuntimeError):
    """No CPython 3.12 to compile with."""


@dataclass(frozen=True)
class Step:
    """What one step did to the layer: files touched and bytes before and after."""

    name: str
    files: int
    before: int
    after: int


def tree_bytes(path: Path) -> int:
    """Apparent size of every file under `path` (what unzipping writes)."""
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() or p.is_symlink())


def python_version(python: str) -> tuple[int, int] | None:
    """(major, minor) of an interpreter, None when it does not run."""
    try:
        out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                             capture_output=True, text=True, check=True, timeout=30).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    return (int(out[0]), int(out[1])) if len(out) == 2 else None


def find_python312(explicit: str | None = None) -> str:
    """`explicit` if it is a CPython 3.12, else python3.12 on PATH, else pyenv's newest 3.12.x."""
    candidates = [explicit] if explicit else []
    if not explicit:
        candidates += [c for c in [shutil.which("python3.12")] if c]
        for pattern in PYENV_GLOBS:
            candidates += sorted(glob.glob(os.path.expanduser(pattern)), reverse=True)
    for candidate in candidates:
        if python_version(candidate) == TARGET:
            return candidate
    looked = explicit or "python3.12 on PATH, " + ", ".join(PYENV_GLOBS)
    raise NoPython312(f"no CPython 3.12 found ({looked})")


def find_stripper() -> tuple[str, str] | None:
    """llvm-strip and llvm-readelf (both read every architecture), None when either is missing."""
    strip, readelf = shutil.which(STRIPPER), shutil.which(READELF)
    return (strip, readelf) if strip and readelf else None


def patched(library: Path, readelf: str) -> bool:
    """True for a library auditwheel rewrote with patchelf: an RPATH/RUNPATH, or under `*.libs/`."""
    if any(part.endswith(".libs") for part in library.parts):
        return True
    dynamic = subprocess.run([readelf, "--dynamic", str(library)], capture_output=True, text=True,
                             check=True).stdout
    return "(RUNPATH)" in dynamic or "(RPATH)" in dynamic


def shared_objects(site: Path) -> list[Path]:
    """Every ELF shared library under `site` (`x.so`, `libx.so.1.2`), symlinks left out."""
    found = []
    for path in sorted(site.rglob("*.so*")):
        if path.is_file() and not path.is_symlink() and (path.suffix == ".so" or ".so." in path.name):
            with path.open("rb") as handle:
                if handle.read(4) == _ELF:
                    found.append(path)
    return found


def strip(site: Path, stripper: str, readelf: str) -> Step:
    """`strip --strip-unneeded` every shared library under `site` that patchelf did not rewrite."""
    libraries = [p for p in shared_objects(site) if not patched(p, readelf)]
    before = sum(p.stat().st_size for p in libraries)
    for library in libraries:
        subprocess.run([stripper, "--strip-unneeded", str(library)], check=True)
    return Step("strip native libraries", len(libraries), before, sum(p.stat().st_size for p in libraries))


def compile_tree(site: Path, python: str, *, sourceless: bool, workers: int = 0) -> Step:
    """Byte-compile every module under `site` with `python` (a 3.12); `sourceless`: the pyc
    replaces its source (legacy layout), else it goes to __pycache__ (unchecked hash)."""
    sources = sorted(site.rglob("*.py"))
    before = tree_bytes(site)
    flags = ["-b"] if sourceless else ["--invalidation-mode", "unchecked-hash"]
    # -q: errors only; a module that does not compile (a Python 2 example, a template) fails here.
    done = subprocess.run([python, "-m", "compileall", "-q", "-j", str(workers), *flags, str(site)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"compileall failed:\n{(done.stdout + done.stderr)[-3000:]}")
    if sourceless:
        for source in sources:
            if not source.with_suffix(".pyc").is_file():
                raise RuntimeError(f"{source} was not compiled")
            source.unlink()
    return Step("byte-compile for 3.12" + (" (sourceless)" if sourceless else ""), len(sources), before,
                tree_bytes(site))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="the layer's python/ folder")
    parser.add_argument("--sourceless", action="store_true", help="replace each .py by its .pyc")
    parser.add_argument("--python", help="a CPython 3.12 (default: python3.12 on PATH, pyenv's 3.12.x)")
    parser.add_argument("--no-strip", action="store_true", help="leave the native libraries as they are")
    args = parser.parse_args(argv)

    try:
        python = find_python312(args.python)
    except NoPython312 as exc:
        print(f"compile_layer: {exc}; install one (e.g. `pyenv install 3.12`) or pass --python",
              file=sys.stderr)
        return 2
    steps = []
    if not args.no_strip:
        tools = find_stripper()
        if tools is None:
            print("compile_layer: warning: no llvm-strip/llvm-readelf; the native libraries keep their "
                  "symbols", file=sys.stderr)
        else:
            steps.append(strip(args.site, *tools))
    steps.append(compile_tree(args.site, python, sourceless=args.sourceless))
    for step in steps:
        print(f"  {step.name}: {step.files} files, {step.before / MIB:.1f} -> {step.after / MIB:.1f} MiB "
              f"({(step.after - step.before) / MIB:+.1f})")
    print(f"  compiled with {python}; layer python/: {tree_bytes(args.site) / MIB:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
