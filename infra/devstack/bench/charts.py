"""PNG charts of the latency distributions (matplotlib, Agg backend: no display needed).

    distribution_chart({"general": [...], "compound": [...]}, path, title=...)   # box plot per group
    concurrency_chart({"sequential": [...], "concurrent": [...]}, timeline, path)

matplotlib is imported when a chart is drawn, never at import: the bench's other parts and
their tests do not pay for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only; must precede importing pyplot
    import matplotlib.pyplot as plt

    return plt


def distribution_chart(groups: Mapping[str, Sequence[float]], path: Path, *, title: str,
                       xlabel: str = "latency (ms, log scale)") -> Path | None:
    """A horizontal box plot per group (whiskers at p5 / p95, the median marked), log x axis.
    Groups without samples are left out; returns None (no file) when none has any."""
    present = {name: list(values) for name, values in groups.items() if values}
    if not present:
        return None
    plt = _pyplot()
    names = list(present)
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(names) + 1.6))
    ax.boxplot([present[n] for n in names], vert=False, whis=(5, 95), showfliers=True,
               flierprops={"markersize": 2, "alpha": 0.5})
    ax.set_yticks(range(1, len(names) + 1), [f"{n} (n={len(present[n])})" for n in names])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def concurrency_chart(phases: Mapping[str, Sequence[float]], timeline: Sequence[tuple[float, float]],
                      path: Path, *, title: str = "HTTP turn latency") -> Path | None:
    """Left: the latency histogram of each phase (sequential, concurrent); right: each concurrent
    request's latency against when it finished. None (no file) when there are no samples."""
    present = {name: list(values) for name, values in phases.items() if values}
    if not present:
        return None
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    top = max(max(v) for v in present.values())
    bins = [top * i / 40 for i in range(41)]
    for name, values in present.items():
        left.hist(values, bins=bins, alpha=0.6, label=f"{name} (n={len(values)})")
    left.set_xlabel("latency (ms)")
    left.set_ylabel("turns")
    left.legend()
    left.set_title(title)
    if timeline:
        right.scatter([t for t, _ in timeline], [ms for _, ms in timeline], s=6, alpha=0.6)
    right.set_xlabel("finished at (s since the first request)")
    right.set_ylabel("latency (ms)")
    right.set_title("concurrent phase over time")
    right.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
