"""How `cypher_catalogue.ORDER_QUESTION_MARGIN` does on the order templates' own examples.

    python -m devstack.order_question_margin

An order question read as one of `planning.ORDER_QUESTIONS`' intents is answered by the closest of
its allowed templates when that template's group score reaches `ORDER_QUESTION_MIN_SCORE` and beats
the intent's own template (`planning.ORDER_READS`) by the margin; else by its own. Each example of
an allowed template, or of the intent's own template (with the templates that answer the same,
`SAME_ANSWER`), is scored leave-one-out (its own vector excluded) and decided at each margin; the
right answer is its template (its own group's fallback for the latter). Needs no stack.
"""

from __future__ import annotations

from csagent.nlp.embeddings import get_embedder
from csagent.planning import ORDER_QUESTIONS, ORDER_READS
from csagent.tools.cypher_catalogue import (
    ORDER_QUESTION_MARGIN,
    ORDER_QUESTION_MIN_SCORE,
    SAME_ANSWER,
    load_catalogue,
    matcher_for,
)

MARGINS = (0.0, 0.01, 0.02, 0.03, 0.05, 0.08, 0.1)


def decisions() -> list[tuple[str, str, float, float, str]]:
    """(right template, best allowed, its group score, the own template's, the own template)."""
    matcher = matcher_for(get_embedder(), load_catalogue())
    index = matcher._ensure_index()
    ids = [t.id for t in matcher.catalogue.templates]
    rows = []
    for intent, allowed in ORDER_QUESTIONS.items():
        fallback = ORDER_READS[intent][1]
        own_group = {fallback, *SAME_ANSWER.get(fallback, ())}
        for i, owner in enumerate(index.owners):
            template = ids[int(owner)]
            if index.kinds[i] != "example" or (template not in allowed and template not in own_group):
                continue
            scores, _ = matcher._template_scores(index.vectors @ index.vectors[i], exclude=i)
            by_id = {ids[k]: float(scores[k]) for k in range(len(ids))}

            def group(t: str, by_id: dict[str, float] = by_id) -> float:
                return max(by_id.get(x, 0.0) for x in (t, *SAME_ANSWER.get(t, ())))

            best = max(allowed, key=group)
            right = template if template in allowed else fallback
            rows.append((right, best, group(best), group(fallback), fallback))
    return rows


def main() -> None:
    rows = decisions()
    print(f"{len(rows)} examples; ORDER_QUESTION_MIN_SCORE {ORDER_QUESTION_MIN_SCORE}, "
          f"ORDER_QUESTION_MARGIN {ORDER_QUESTION_MARGIN}")
    for margin in MARGINS:
        right = sum((best if score >= ORDER_QUESTION_MIN_SCORE and score >= own + margin else fallback)
                    == gold for gold, best, score, own, fallback in rows)
        print(f"margin {margin:.2f}: {right}/{len(rows)} = {right / len(rows):.3f}")


if __name__ == "__main__":
    main()
