"""Choose `understanding.REFUSAL_MIN` by 5-fold cross-validation over the development set, and print it.

    python -m devstack.refusal_cv [--folds 5] [--seed 0]      # needs no stack

A message whose every clause the intent classifier reads as out of scope is refused when one of them
is read so with at least `REFUSAL_MIN` confidence; below that, nothing vouches for "off-topic" more
than for a store request worded unusually ("why is it going to san diego", after an order's status),
and the customer is asked what they need instead. The examples: every turn of the development
conversations (`infra/eval/understanding/dev/`) whose clauses (`nlp.clauses.split_clauses`) all read
out of scope; the right decision is a refusal when the turn's expected outcome is one, else not. For
each fold the threshold with the fewest errors on the other folds (the middle of the best plateau)
is scored on the fold; the figure printed is the share right over the held-out folds, and the
threshold printed last is the one chosen on all examples.
"""

from __future__ import annotations

import argparse
import glob
import json
import random
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT / "infra" / "eval" / "understanding" / "dev"
GRID = tuple(round(0.2 + 0.01 * i, 2) for i in range(46))  # 0.20 .. 0.65

Example = tuple[float, bool]  # the highest out-of-scope confidence of the turn's clauses, refuse?


def examples(directory: Path = DEV) -> list[Example]:
    from csagent.nlp.clauses import split_clauses
    from csagent.nlp.intents import OUT_OF_SCOPE, get_intent_classifier

    classifier = get_intent_classifier()
    rows: list[Example] = []
    for path in sorted(glob.glob(str(directory / "*.jsonl"))):
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            for turn in json.loads(line)["turns"]:
                readings = [classifier.classify(c) for c in split_clauses(turn["text"])]
                if readings and all(r.intent == OUT_OF_SCOPE for r in readings):
                    refuse = (turn.get("expect") or {}).get("outcome") == "refuse"
                    rows.append((max(r.confidence for r in readings), refuse))
    return rows


def errors(rows: Sequence[Example], threshold: float) -> int:
    return sum(1 for confidence, refuse in rows if (confidence >= threshold) != refuse)


def choose(rows: Sequence[Example]) -> float:
    """The threshold with the fewest errors; of a plateau of them, its middle."""
    counted = [errors(rows, t) for t in GRID]
    best = min(counted)
    plateau = [t for t, e in zip(GRID, counted, strict=True) if e == best]
    return plateau[len(plateau) // 2]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows = examples()
    order = list(range(len(rows)))
    random.Random(args.seed).shuffle(order)
    right = 0
    for fold in range(args.folds):
        held = [rows[i] for n, i in enumerate(order) if n % args.folds == fold]
        train = [rows[i] for n, i in enumerate(order) if n % args.folds != fold]
        threshold = choose(train)
        right += len(held) - errors(held, threshold)
        print(f"fold {fold}: threshold {threshold:.2f} chosen on {len(train)}, "
              f"{len(held) - errors(held, threshold)}/{len(held)} right held out")
    refusals = sum(1 for _, refuse in rows if refuse)
    print(f"held out: {right}/{len(rows)} right ({right / len(rows):.3f}); "
          f"{refusals} turns to refuse, {len(rows) - refusals} store turns read as out of scope")
    print(f"REFUSAL_MIN chosen on all {len(rows)}: {choose(rows):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
