"""Progress of a turn in the customer's words, from LangGraph's own "updates" stream.

Each graph node that finishes yields one `Progress`: the node's name, a label from
`progress_labels.yaml` ("Understanding your message") and a step counter. Nothing of the
node's output goes into it: no intermediate answer, no task argument, no internal error; so a
progress event can never show something the final answer later contradicts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

LABELS_PATH = Path(__file__).resolve().parent / "progress_labels.yaml"


@dataclass(frozen=True)
class Progress:
    """One finished step of the graph, as the customer may see it."""

    node: str
    label: str
    step: int

    def as_dict(self) -> dict[str, Any]:
        return {"node": self.node, "label": self.label, "step": self.step}


@dataclass(frozen=True)
class ProgressLabels:
    received: str
    default: str
    nodes: dict[str, str]

    def label(self, node: str) -> str:
        return self.nodes.get(node, self.default)


@lru_cache(maxsize=1)
def progress_labels(path: Path = LABELS_PATH) -> ProgressLabels:
    """The labels file, read once (on the first streamed turn, never at import)."""
    from csagent import yamlio

    data = yamlio.load_file(path)
    return ProgressLabels(received=str(data["received"]), default=str(data["default"]),
                          nodes={str(k): str(v) for k, v in data["nodes"].items()})


def received() -> Progress:
    """Step 0: the turn was accepted and the graph is about to run."""
    return Progress(node="received", label=progress_labels().received, step=0)


def progress_of(update: Any, first_step: int) -> Iterator[Progress]:
    """The progress in one chunk of `graph.stream(..., stream_mode="updates")`.

    A chunk maps the node that finished to its state update ({"route": {...}}); LangGraph's own
    keys ("__interrupt__", "__metadata__") are not nodes and are skipped."""
    if not isinstance(update, dict):
        return
    labels = progress_labels()
    step = first_step
    for node in update:
        if str(node).startswith("__"):
            continue
        yield Progress(node=str(node), label=labels.label(str(node)), step=step)
        step += 1
