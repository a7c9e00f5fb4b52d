"""Choose `cypher_catalogue.CATALOGUE_QUESTION_MIN_SCORE` by cross-validation, and print it.

    python -m devstack.aspect_threshold [--folds 5] [--seed 0]

Two labelled sets, neither written for this threshold:

- **documents**: the knowledge eval's questions whose relevant passage is a product manual
  (`csagent/knowledge/eval/questions.jsonl`: "how often should I descale the espresso machine?");
- **catalogue**: the English `product_info` and `product_availability` intent examples
  (`csagent/nlp/data/intents.jsonl` and `intents_dev.jsonl`: "what colors does the backpack come in").

Each question's feature is `TemplateMatcher.catalogue_score` with the store's product names masked.
For each fold, the threshold that maximises balanced accuracy on the other folds is scored on the
fold; the figure reported is the mean held-out balanced accuracy, with each fold's threshold.
Needs no stack (the embedder and the template examples only).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np

from csagent.nlp.embeddings import get_embedder
from csagent.tools.cypher_catalogue import english_query, matcher_for

CORE = Path(__file__).resolve().parents[2] / "layers" / "core" / "csagent"
PRODUCTS = Path(__file__).resolve().parents[3] / "shared" / "data" / "tau-retail" / "products.json"
GRID = np.round(np.arange(0.15, 0.60, 0.01), 2)


def labelled() -> list[tuple[str, int]]:
    """(question, 1 when a product document answers it, 0 when the catalogue does)."""
    documents = [json.loads(line)["question"]
                 for line in (CORE / "knowledge" / "eval" / "questions.jsonl").read_text().splitlines()
                 if line.strip() and any(r.startswith("manual-") for r in json.loads(line)["relevant"])]
    catalogue = []
    for name in ("intents.jsonl", "intents_dev.jsonl"):
        for line in (CORE / "nlp" / "data" / name).read_text().splitlines():
            row = json.loads(line) if line.strip() else {}
            if row.get("intent") in ("product_info", "product_availability") and row.get("lang") == "en":
                catalogue.append(row["text"])
    return [(q, 1) for q in documents] + [(q, 0) for q in catalogue]


def balanced_accuracy(threshold: float, rows: list[tuple[float, int]]) -> float:
    docs = [s for s, y in rows if y]
    cat = [s for s, y in rows if not y]
    return (sum(s < threshold for s in docs) / max(1, len(docs))
            + sum(s >= threshold for s in cat) / max(1, len(cat))) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    products = json.loads(PRODUCTS.read_text()) if PRODUCTS.exists() else {}
    names = sorted({str(p["name"]) for p in products.values()})
    names += [n.lower() for n in names]
    matcher = matcher_for(get_embedder())
    rows = [(matcher.catalogue_score(english_query(q), entities=names), y) for q, y in labelled()]
    order = list(range(len(rows)))
    random.Random(args.seed).shuffle(order)
    held_out, chosen = [], []
    for fold in range(args.folds):
        test = set(order[fold::args.folds])
        train = [rows[i] for i in order if i not in test]
        threshold = max(GRID, key=lambda t: balanced_accuracy(t, train))
        chosen.append(float(threshold))
        held_out.append(balanced_accuracy(threshold, [rows[i] for i in test]))
    docs = [s for s, y in rows if y]
    cat = [s for s, y in rows if not y]
    print(f"documents {len(docs)} (median score {np.median(docs):.2f}), "
          f"catalogue {len(cat)} (median score {np.median(cat):.2f})")
    print(f"fold thresholds {chosen}; held-out balanced accuracy {np.mean(held_out):.3f}")
    print(f"threshold on all rows: {max(GRID, key=lambda t: balanced_accuracy(t, rows)):.2f}")


if __name__ == "__main__":
    main()
