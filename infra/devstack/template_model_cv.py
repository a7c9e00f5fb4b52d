"""Choose `cypher_catalogue.DEFAULT_MARGIN` (the template model's probability lead) by 5-fold
cross-validation, beside the closest-examples rule the model replaced, and print both.

    python -m devstack.template_model_cv [--folds 5] [--seed 0]

Every example question of the catalogue is matched by a matcher built without its fold: the
similarity gate (`DEFAULT_THRESHOLD`: the best template's score, mean of its `top_k` closest
texts of the other folds) and then either the old rule (the best-scoring template, ahead of the
runner-up by 0.02 in score) or the model's (`SoftmaxRegression` trained on the other folds; the
likeliest template, ahead of the runner-up by the margin in probability). A wrong template costs
as much as a right one gains (a wrong answer is worse than the Text2Cypher fallback or a
question), so the margin maximises right minus wrong on the other folds and is scored on the
fold. Needs no stack.
"""

from __future__ import annotations

import argparse
import random

import numpy as np

from csagent.nlp.embeddings import get_embedder
from csagent.nlp.intents import SoftmaxRegression
from csagent.tools.cypher_catalogue import DEFAULT_MARGIN, DEFAULT_THRESHOLD, load_catalogue, matcher_for

MARGINS = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4)
OLD_MARGIN = 0.02


Old = list[tuple[int, str, str | None]]
New = list[tuple[int, str, str, float]]


def outcomes(folds: int, seed: int) -> tuple[Old, New]:
    """Per held-out example: (fold, gold, old rule's template or None) and (fold, gold, the
    model's template, its probability lead) for the examples that pass the similarity gate."""
    matcher = matcher_for(get_embedder(), load_catalogue())
    index = matcher._ensure_index()
    ids = [t.id for t in matcher.catalogue.templates]
    examples = [i for i, kind in enumerate(index.kinds) if kind == "example"]
    shuffled = list(examples)
    random.Random(seed).shuffle(shuffled)
    fold_of = {i: n % folds for n, i in enumerate(shuffled)}
    owners = np.asarray(index.owners)
    old, new = [], []
    for fold in range(folds):
        held = [i for i in examples if fold_of[i] == fold]
        kept = np.asarray([i for i in range(len(index.texts)) if fold_of.get(i, -1) != fold])
        train = [i for i in examples if fold_of[i] != fold]
        model = SoftmaxRegression().fit(index.vectors[train], [ids[int(owners[i])] for i in train])
        probs = model.predict_proba(index.vectors[held])
        for i, row in zip(held, probs, strict=True):
            gold = ids[int(owners[i])]
            sims = index.vectors[kept] @ index.vectors[i]
            scores = {}
            for t in set(owners[kept].tolist()):
                values = np.sort(sims[owners[kept] == t])[::-1][: matcher.top_k]
                scores[ids[t]] = float(values.mean())
            ranked = sorted(scores.items(), key=lambda kv: -kv[1])
            if ranked[0][1] < DEFAULT_THRESHOLD:
                old.append((fold, gold, None))
                continue
            lead = ranked[0][1] - ranked[1][1]
            old.append((fold, gold, ranked[0][0] if lead >= OLD_MARGIN else None))
            order = np.argsort(-row)
            new.append((fold, gold, model.classes[int(order[0])], float(row[order[0]] - row[order[1]])))
    return old, new


def _tally(pairs: list[tuple[str, str | None]]) -> tuple[int, int]:
    right = sum(1 for gold, got in pairs if got == gold)
    wrong = sum(1 for gold, got in pairs if got is not None and got != gold)
    return right, wrong


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m devstack.template_model_cv")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    old, new = outcomes(args.folds, args.seed)
    total = len(old)

    def model_pairs(rows: list[tuple[int, str, str, float]], margin: float) -> list[tuple[str, str | None]]:
        return [(gold, got if lead >= margin else None) for _, gold, got, lead in rows]

    right, wrong = _tally([(g, t) for _, g, t in old])
    print(f"{total} examples; similarity gate {DEFAULT_THRESHOLD} passed by {len(new)}")
    print(f"closest examples (margin {OLD_MARGIN}): right {right}, wrong {wrong}, "
          f"coverage {(right + wrong) / total:.3f}, precision {right / max(1, right + wrong):.3f}")
    for margin in MARGINS:
        right, wrong = _tally(model_pairs(new, margin))
        print(f"model, margin {margin:.2f}: right {right}, wrong {wrong}, "
              f"coverage {(right + wrong) / total:.3f}, "
              f"precision {right / max(1, right + wrong):.3f}")
    chosen, right_all, wrong_all = [], 0, 0
    for fold in range(args.folds):
        rest = [r for r in new if r[0] != fold]
        best = max(MARGINS, key=lambda m: (lambda t: t[0] - t[1])(_tally(model_pairs(rest, m))))
        chosen.append(best)
        right, wrong = _tally(model_pairs([r for r in new if r[0] == fold], best))
        right_all, wrong_all = right_all + right, wrong_all + wrong
    print(f"fold margins {chosen}; held out: right {right_all}, wrong {wrong_all}, "
          f"precision {right_all / max(1, right_all + wrong_all):.3f}; DEFAULT_MARGIN now {DEFAULT_MARGIN}")


if __name__ == "__main__":
    main()
