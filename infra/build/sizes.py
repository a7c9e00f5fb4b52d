"""Unzipped size of each built function with its layers, against Lambda's 250 MB limit.

    python infra/build/sizes.py [.aws-sam/build]

Reads the template `sam build` wrote (`.aws-sam/build/template.yaml`: every CodeUri / ContentUri
there is a folder of the build) and prints one row per function: its own code, its layers
(the Globals' layers, then its own: SAM appends list-valued globals), the total and the headroom.
A layer published outside this template (an ARN such as the Lambda Web Adapter's) has no folder
in the build: it is listed as external, and its size is not in the total (the headroom is then
an upper bound; the Web Adapter layer is about 5 MB).
Lambda's quota is 250 MB for a function's code plus all its layers once unzipped, counted in
bytes as 250 x 1024 x 1024 (262,144,000), so sizes are in MiB of apparent file size (what
unzipping writes, not disk blocks). Exits 1 when a function is over the limit.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

MIB = 1024 * 1024
LIMIT_BYTES = 250 * MIB
FUNCTION_TYPE = "AWS::Serverless::Function"
LAYER_TYPE = "AWS::Serverless::LayerVersion"


class _TemplateLoader(yaml.SafeLoader):
    """A safe loader that keeps CloudFormation short tags as plain values (sizes need none of them)."""


_TemplateLoader.add_multi_constructor("!", lambda loader, suffix, node: None)


@dataclass(frozen=True)
class FunctionSize:
    """One row of the table (bytes)."""

    function: str
    own: int
    layers: dict[str, int]
    external: int = 0  # layers from outside the template (ARNs), not measured

    @property
    def total(self) -> int:
        return self.own + sum(self.layers.values())

    @property
    def headroom(self) -> int:
        return LIMIT_BYTES - self.total


def tree_bytes(path: Path) -> int:
    """Apparent size of every file under `path` (symlinks counted as links, as in a zip)."""
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() or p.is_symlink())


def _layer_id(layer: Any) -> str | None:
    """The logical id of a `!Ref` layer (SAM writes long-form Ref in the built template)."""
    return layer.get("Ref") if isinstance(layer, Mapping) else None


def function_sizes(build_dir: Path) -> list[FunctionSize]:
    """The size of every function of the built template, with each of its layers."""
    template = yaml.load((build_dir / "template.yaml").read_text(encoding="utf-8"), Loader=_TemplateLoader)
    resources: dict[str, Any] = template["Resources"]
    global_layers = template.get("Globals", {}).get("Function", {}).get("Layers", [])
    layer_bytes = {name: tree_bytes(build_dir / res["Properties"]["ContentUri"])
                   for name, res in resources.items() if res["Type"] == LAYER_TYPE}
    rows = []
    for name, res in sorted(resources.items()):
        if res["Type"] != FUNCTION_TYPE:
            continue
        props = res["Properties"]
        layers = [_layer_id(layer) for layer in [*global_layers, *props.get("Layers", [])]]
        unknown = [layer for layer in layers if layer is not None and layer not in layer_bytes]
        if unknown:
            raise ValueError(f"{name}: layers referenced but not in this template: {unknown}")
        rows.append(FunctionSize(name, tree_bytes(build_dir / props["CodeUri"]),
                                 {layer: layer_bytes[layer] for layer in layers if layer},
                                 external=sum(1 for layer in layers if layer is None)))
    return rows


def render(rows: list[FunctionSize]) -> str:
    """The table: a function's own code in KiB (it is one app.py), everything else in MiB."""
    width = max(len("function"), *(len(row.function) for row in rows))
    lines = [f"{'function':<{width}}  {'own KiB':>8}  {'layers MiB':>10}  {'total MiB':>9}  "
             f"{'headroom MiB':>12}"]
    for row in rows:
        layers_mib = sum(row.layers.values()) / MIB
        plural = "s" if row.external > 1 else ""
        external = f"  (+{row.external} external layer{plural})" if row.external else ""
        lines.append(f"{row.function:<{width}}  {row.own / 1024:8.1f}  {layers_mib:10.2f}  "
                     f"{row.total / MIB:9.2f}  {row.headroom / MIB:12.2f}{external}")
    layers = {name: size for row in rows for name, size in row.layers.items()}
    lines.append("layers: " + ", ".join(f"{name} {size / MIB:.2f} MiB"
                                        for name, size in sorted(layers.items())))
    lines.append(f"limit: {LIMIT_BYTES / MIB:.0f} MiB unzipped per function, its layers included")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dir", nargs="?", type=Path, default=Path(".aws-sam/build"))
    args = parser.parse_args(argv)
    if not (args.build_dir / "template.yaml").is_file():
        print(f"no SAM build in {args.build_dir}: run `make build` (sam build) first", file=sys.stderr)
        return 2
    rows = function_sizes(args.build_dir)
    print(render(rows))
    over = [row.function for row in rows if row.headroom < 0]
    if over:
        print(f"over Lambda's limit: {', '.join(over)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
