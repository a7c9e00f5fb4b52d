"""Remove from a built layer what is never loaded at run time, as listed in a rules file.

    python infra/build/prune_layer.py <layer>/python layers/deps/prune.txt

The rules file holds one glob per line (relative to the layer's `python/` folder, `**` allowed)
with `#` comments saying why each group is safe to remove. A rule `<glob> except <name> ...`
removes what the glob matches but the entries of those names (a glob ending in `/` matches
folders only): the way to keep a few of many (botocore's service models). Every rule must match
at least one path, and every name a rule keeps must exist: when a package upgrade moves or drops
a file, the build fails here instead of the list quietly pruning nothing (or something else).
Prints what each rule freed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

MIB = 1024 * 1024


class StaleRule(RuntimeError):
    """A rule matched nothing in the layer."""


@dataclass(frozen=True)
class Pruned:
    """What one rule removed."""

    rule: str
    paths: int
    bytes: int


def read_rules(path: Path) -> list[str]:
    """The globs of a rules file, in order (blank lines and `#` comments dropped)."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line]


def tree_bytes(path: Path) -> int:
    """Apparent size of a file, or of every file under a folder (what Lambda counts when unzipped)."""
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() or p.is_symlink())


def prune(site: Path, rules: list[str]) -> list[Pruned]:
    """Remove every path matching each rule under `site`; raise StaleRule for a rule that matches nothing."""
    results = []
    for rule in rules:
        pattern, _, kept_names = rule.partition(" except ")
        pattern, folders_only = pattern.strip().rstrip("/"), pattern.strip().endswith("/")
        kept = set(kept_names.split())
        found = [p for p in site.glob(pattern) if not folders_only or p.is_dir()]
        missing = kept - {p.name for p in found}
        if missing:
            raise StaleRule(f"prune rule {rule!r} keeps what is not there: {sorted(missing)}")
        # Deepest first, and a path already removed with its parent is skipped.
        matches = sorted((p for p in found if p.name not in kept), key=lambda p: len(p.parts), reverse=True)
        if not matches:
            raise StaleRule(f"prune rule {rule!r} matches nothing under {site}")
        freed = 0
        for path in matches:
            if not path.exists() and not path.is_symlink():
                continue
            freed += tree_bytes(path)
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        results.append(Pruned(rule, len(matches), freed))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="the layer's python/ folder")
    parser.add_argument("rules", type=Path, help="the rules file (e.g. layers/deps/prune.txt)")
    args = parser.parse_args(argv)

    before = tree_bytes(args.site)
    try:
        results = prune(args.site, read_rules(args.rules))
    except StaleRule as exc:
        print(f"prune_layer: {exc}", file=sys.stderr)
        return 1
    for result in results:
        print(f"  pruned {result.bytes / MIB:7.1f} MiB  {result.paths:4d} path(s)  {result.rule}")
    after = tree_bytes(args.site)
    print(f"  layer python/: {before / MIB:.1f} MiB -> {after / MIB:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
