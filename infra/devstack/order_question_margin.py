"""Choose `cypher_catalogue.ORDER_QUESTION_MARGIN` by 5-fold cross-validation, and print it.

    python -m devstack.order_question_margin [--folds 5] [--seed 0]

An order question read as one of `planning.ORDER_QUESTIONS`' intents is answered by the allowed
template the template model finds likeliest when its probability (with the templates that answer
the same, `SAME_ANSWER`) beats the intent's own template's (`planning.ORDER_READS`) by the margin
and its examples' similarity reaches `ORDER_QUESTION_MIN_SCORE`; else by its own. Each example of
an allowed template, or of the intent's own template, is decided by a model trained without its
fold (and the similarity to the other folds' texts), at each margin; the right answer is its
template (its own group's fallback for the latter). For each fold the margin best on the other
folds is scored on the fold. Needs no stack.
"""

from __future__ import annotations

import argparse
import random

from csagent.nlp.embeddings import get_embedder
from csagent.nlp.intents import SoftmaxRegression
from csagent.planning import ORDER_QUESTIONS, ORDER_READS
from csagent.tools.cypher_catalogue import (
    ORDER_QUESTION_MARGIN,
    ORDER_QUESTION_MIN_SCORE,
    SAME_ANSWER,
    group_probability,
    load_catalogue,
    matcher_for,
)

MARGINS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3)


def decisions(folds: int, seed: int) -> list[tuple[int, str, str, float, float, str]]:
    """(fold, right template, best allowed, its group probability, the own template's, own); the
    best allowed one's probability is 0 when its examples are not similar enough."""
    matcher = matcher_for(get_embedder(), load_catalogue())
    index = matcher._ensure_index()
    ids = [t.id for t in matcher.catalogue.templates]
    examples = [i for i, kind in enumerate(index.kinds) if kind == "example"]
    labels = {i: ids[int(index.owners[i])] for i in examples}
    shuffled = list(examples)
    random.Random(seed).shuffle(shuffled)
    fold_of = {i: n % folds for n, i in enumerate(shuffled)}
    rows = []
    for fold in range(folds):
        train = [i for i in examples if fold_of[i] != fold]
        model = SoftmaxRegression().fit(index.vectors[train], [labels[i] for i in train])
        held = [i for i in examples if fold_of[i] == fold]
        kept = [i for i in range(len(index.texts)) if fold_of.get(i, -1) != fold]
        probs = model.predict_proba(index.vectors[held])
        for i, row in zip(held, probs, strict=True):
            p = {c: float(v) for c, v in zip(model.classes, row, strict=True)}
            sims = index.vectors[kept] @ index.vectors[i]
            owners = [ids[int(index.owners[k])] for k in kept]

            def similarity(t: str, sims: object = sims, owners: list[str] = owners) -> float:
                group = {t, *SAME_ANSWER.get(t, ())}
                values = sorted((float(s) for s, o in zip(sims, owners, strict=True) if o in group),
                                reverse=True)[:2]
                return sum(values) / len(values) if values else 0.0

            for intent, allowed in ORDER_QUESTIONS.items():
                fallback = ORDER_READS[intent][1]
                own_group = {fallback, *SAME_ANSWER.get(fallback, ())}
                if labels[i] not in allowed and labels[i] not in own_group:
                    continue
                best = max(allowed, key=lambda t, p=p: group_probability(p, t))
                right = labels[i] if labels[i] in allowed else fallback
                close = similarity(best) >= ORDER_QUESTION_MIN_SCORE
                rows.append((fold, right, best, group_probability(p, best) if close else 0.0,
                             group_probability(p, fallback), fallback))
    return rows


def _right(rows: list[tuple[int, str, str, float, float, str]], margin: float) -> int:
    return sum((best if score >= own + margin else fallback) == gold
               for _, gold, best, score, own, fallback in rows)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m devstack.order_question_margin")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = decisions(args.folds, args.seed)
    print(f"{len(rows)} decisions; ORDER_QUESTION_MARGIN now {ORDER_QUESTION_MARGIN}")
    for margin in MARGINS:
        right = _right(rows, margin)
        print(f"margin {margin:.2f}: {right}/{len(rows)} = {right / len(rows):.3f}")
    chosen, held = [], 0
    for fold in range(args.folds):
        rest = [r for r in rows if r[0] != fold]
        best = max(MARGINS, key=lambda m: (_right(rest, m), -m))
        chosen.append(best)
        held += _right([r for r in rows if r[0] == fold], best)
    print(f"fold margins {chosen}; held-out accuracy {held / len(rows):.3f}")


if __name__ == "__main__":
    main()
