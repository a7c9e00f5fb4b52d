"""Choose a text model's threshold (`nlp.text_models`) by 5-fold cross-validation over its
labelled file, beside the word lists it backs up, and print both.

    python -m devstack.text_model_cv consent        # nlp.consent.CONSENT_MIN_PROBABILITY
    python -m devstack.text_model_cv cancel_reason  # nlp.reasons.REASON_MIN_PROBABILITY
    python -m devstack.text_model_cv staff_process  # nlp.staff_process.STAFF_MIN_PROBABILITY
    python -m devstack.text_model_cv purchase_question  # nlp.purchase_question.MIN_PROBABILITY
    python -m devstack.text_model_cv product_question   # nlp.product_question.MIN_PROBABILITY

Every message is read by a model trained without its fold. A reading is used only at the
threshold's probability or above; below it the message is left to the word lists (and, when they
know nothing, the assistant asks, which costs the customer one message). A reading that would act
wrongly costs more than a missed one: a `yes` read for a reply that is not one would carry out a
change nobody agreed to (5); a cancellation reason the customer did not give would be listed in
the proposal they are asked to confirm (2); a message read as asking for a warranty claim or a
carrier investigation hands the customer to a person they did not need (5); a question about an
order read as one about the product answers with the product's pages instead of where the order is
(2). Other wrong readings cost as much as a missed answer gains. The threshold maximises right
minus costs on the other folds and is scored on the fold. Needs no stack.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from csagent.nlp.embeddings import get_embedder
from csagent.nlp.fixed_vectors import embed_all
from csagent.nlp.intents import mask_entities
from csagent.nlp.text_models import SETTINGS, TextModel, training_examples

THRESHOLDS = (0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)

Row = tuple[int, str, str, float]  # fold, gold, reading, probability


@dataclass(frozen=True)
class Spec:
    filenames: tuple[str, ...]
    costly: Callable[[str], float]  # what a wrong reading of this label costs
    word_lists: Callable[[str], str]  # the word lists' reading of a message
    #: For a yes/no reader: the label every message has unless the model reads the other one at the
    #: threshold (so every message counts, and a missed reading is a wrong one).
    default: str | None = None


def _consent_words(text: str) -> str:
    from csagent.nlp.confirmation import classify_confirmation, lean

    return classify_confirmation(text) or lean(text) or "other"


def _reason_words(text: str) -> str:
    from csagent.nlp.reasons import find_cancel_reason

    return {"no longer needed": "no_longer_needed", "ordered by mistake": "ordered_by_mistake"}.get(
        find_cancel_reason(text) or "", "none")


def _staff_words(text: str) -> str:
    from csagent.handoff.triggers import lexicon, warranty_remedy_asked

    asked = lexicon("staff_processes.json").matches(text) or warranty_remedy_asked(text)
    return "staff" if asked else "other"


def _purchase_words(text: str) -> str:
    from csagent.grounding.frame import _about_the_product

    return "product" if _about_the_product(text) else "order"


def _template_words(text: str) -> str:
    from csagent.understanding_local import nearest_template_reads_documents

    return "documents" if nearest_template_reads_documents(text, _product_names()) else "catalogue"


@lru_cache(maxsize=1)
def _product_names() -> list[str]:
    """The store's product names, masked before a question is matched to the catalogue's templates
    (as the assistant masks the catalogue's names)."""
    from devstack.aspect_threshold import PRODUCTS

    names = sorted({str(p["name"]) for p in json.loads(PRODUCTS.read_text()).values()})
    return names + [n.lower() for n in names]


SPECS = {
    "consent": Spec(("consent.jsonl",), lambda got: 5.0 if got == "yes" else 1.0, _consent_words),
    "cancel_reason": Spec(("cancel_reasons.jsonl",), lambda got: 1.0 if got == "none" else 2.0,
                          _reason_words),
    "staff_process": Spec(("staff_processes.jsonl", "staff_processes_dev.jsonl"),
                          lambda got: 5.0 if got == "staff" else 1.0, _staff_words, default="other"),
    "purchase_question": Spec(("purchase_questions.jsonl", "purchase_questions_dev.jsonl"),
                              lambda got: 2.0 if got == "product" else 1.0,
                              _purchase_words, default="order"),
    "product_question": Spec(("product_questions.jsonl",), lambda got: 1.0, _template_words),
}


def outcomes(filenames: tuple[str, ...], folds: int, seed: int) -> list[Row]:
    examples = list(training_examples(*filenames))
    embedder = get_embedder()
    vectors = embed_all(embedder, [mask_entities(e.text) for e in examples])
    order = list(range(len(examples)))
    random.Random(seed).shuffle(order)
    fold_of = {i: n % folds for n, i in enumerate(order)}
    rows: list[Row] = []
    for fold in range(folds):
        train = [i for i in range(len(examples)) if fold_of[i] != fold]
        held = [i for i in range(len(examples)) if fold_of[i] == fold]
        model = TextModel.train(embedder, [examples[i] for i in train], vectors=vectors[train])
        for i, (label, p) in zip(held, model.read([examples[i].text for i in held]), strict=True):
            rows.append((fold, examples[i].label, label, p))
    return rows


def score(rows: list[Row], threshold: float, spec: Spec) -> tuple[int, int, float]:
    """Right readings, wrong ones, and the gain (right minus what the wrong ones cost)."""
    right = wrong = 0
    cost = 0.0
    for _, gold, got, p in rows:
        if spec.default is not None and (p < threshold or got == spec.default):
            got = spec.default
        elif p < threshold:
            continue
        if got == gold:
            right += 1
        else:
            wrong += 1
            cost += spec.costly(got)
    return right, wrong, right - cost


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m devstack.text_model_cv")
    parser.add_argument("model", choices=sorted(SPECS))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    spec = SPECS[args.model]
    rows = outcomes(spec.filenames, args.folds, args.seed)
    total = len(rows)
    labels = sorted({r[1] for r in rows})
    counts = ", ".join(f"{k} {sum(1 for r in rows if r[1] == k)}" for k in labels)
    print(f"{args.model}: {total} messages ({counts}); settings {SETTINGS}")
    words = [(e.label, spec.word_lists(e.text)) for e in training_examples(*spec.filenames)]
    right = sum(1 for gold, got in words if gold == got)
    costly = sum(1 for gold, got in words if gold != got and spec.costly(got) > 1.0)
    print(f"word lists: right {right} ({right / total:.3f}), costly wrong {costly}")
    accuracy = sum(1 for _, gold, got, _ in rows if gold == got) / total
    print(f"model, every reading: accuracy {accuracy:.3f}")
    for threshold in THRESHOLDS:
        right, wrong, gain = score(rows, threshold, spec)
        wrong_costly = sum(1 for _, g, got, p in rows
                           if p >= threshold and got != g and got != spec.default and spec.costly(got) > 1.0)
        print(f"model, probability >= {threshold:.2f}: right {right} ({right / total:.3f}), wrong {wrong} "
              f"(costly {wrong_costly}), gain {gain:.0f}")
    chosen, totals = [], np.zeros(2)
    for fold in range(args.folds):
        rest = [r for r in rows if r[0] != fold]
        best = max(THRESHOLDS, key=lambda t: score(rest, t, spec)[2])
        chosen.append(best)
        totals += score([r for r in rows if r[0] == fold], best, spec)[:2]
    print(f"fold thresholds {chosen}; held out: right {int(totals[0])} ({totals[0] / total:.3f}), "
          f"wrong {int(totals[1])}")


if __name__ == "__main__":
    main()
