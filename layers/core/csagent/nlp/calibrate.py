"""Calibrate the out-of-scope threshold (and top-k) on the held-out labelled set.

    python -m csagent.nlp.calibrate            # sweep, print the report, write data/calibration.json
    python -m csagent.nlp.calibrate --dry-run  # sweep and print only

Why a held-out set: a threshold chosen on the training examples would be optimistic (every
training phrasing is its own nearest neighbour). `data/intents_heldout.jsonl` holds in-scope and
out-of-scope questions that are not in `data/intents.jsonl`.

For each candidate top-k, English held-out texts are scored once; every candidate threshold
(midpoints between observed winning scores) is then evaluated without re-embedding. The pick
maximises accuracy over the whole held-out set, ties broken by macro-F1, then by the middle of the
tied plateau (the threshold furthest from both edges generalises best).

Chinese (character n-grams, `nlp.ngrams`) is chosen first and apart: its top-k and threshold by
5-fold cross-validation over the Chinese training examples (each read by a model trained without
its fold), so the held-out set's Chinese lines, scored at that choice, measure it without having
chosen it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from csagent.nlp.intents import (
    OUT_OF_SCOPE,
    Example,
    IntentClassifier,
    detect_language,
    load_examples,
    training_examples,
)


@dataclass(frozen=True)
class Candidate:
    """One evaluated (top_k, threshold) setting."""

    top_k: int
    threshold: float
    accuracy: float
    macro_f1: float
    oos_precision: float
    oos_recall: float


def macro_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Unweighted mean F1 over the labels present in gold or predictions."""
    labels = set(gold) | set(pred)
    f1s = []
    for label in labels:
        tp = sum(1 for g, p in zip(gold, pred, strict=True) if g == p == label)
        fp = sum(1 for g, p in zip(gold, pred, strict=True) if p == label != g)
        fn = sum(1 for g, p in zip(gold, pred, strict=True) if g == label != p)
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(f1s) / len(f1s) if f1s else 0.0


def _oos_pr(gold: Sequence[str], pred: Sequence[str]) -> tuple[float, float]:
    tp = sum(1 for g, p in zip(gold, pred, strict=True) if g == p == OUT_OF_SCOPE)
    predicted = sum(1 for p in pred if p == OUT_OF_SCOPE)
    actual = sum(1 for g in gold if g == OUT_OF_SCOPE)
    return (tp / predicted if predicted else 0.0, tp / actual if actual else 0.0)


def sweep(heldout: Sequence[Example], top_ks: Sequence[int] = (1, 3, 5),
          classifier_factory: type[IntentClassifier] = IntentClassifier) -> list[Candidate]:
    """Evaluate every (top_k, threshold) candidate on the held-out set."""
    gold = [e.intent for e in heldout]
    english = {i for i, e in enumerate(heldout) if detect_language(e.text) == "en"}
    results: list[Candidate] = []
    for k in top_ks:
        clf = classifier_factory(top_k=k)
        base = clf.classify_many([e.text for e in heldout], threshold=0.0)
        scores = sorted({p.confidence for i, p in enumerate(base) if i in english})
        cuts = [0.0] + [(a + b) / 2 for a, b in zip(scores, scores[1:], strict=False)] + [1.0]
        for cut in cuts:
            pred = [p.intent if (i not in english or p.confidence >= cut) else OUT_OF_SCOPE
                    for i, p in enumerate(base)]
            acc = sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)
            prec, rec = _oos_pr(gold, pred)
            results.append(Candidate(k, round(cut, 4), acc, macro_f1(gold, pred), prec, rec))
    return results


def sweep_chinese(examples: Sequence[Example], top_ks: Sequence[int] = (1, 2, 3, 5),
                  folds: int = 5) -> list[Candidate]:
    """5-fold cross-validation over the Chinese examples: each fold is read by a classifier trained
    on the other folds (`IntentClassifier.chinese_decisions`), for every top-k and threshold."""
    chinese = [e for e in examples if e.lang == "zh"]
    gold = [e.intent for e in chinese]
    results: list[Candidate] = []
    for k in top_ks:
        best: list[tuple[str, float]] = [(OUT_OF_SCOPE, 0.0)] * len(chinese)
        for fold in range(folds):
            held = [i for i in range(len(chinese)) if i % folds == fold]
            train = [e for i, e in enumerate(chinese) if i % folds != fold]
            clf = IntentClassifier(examples=train, zh_top_k=k)
            for i, (intent, score, _) in zip(held, clf.chinese_decisions([chinese[i].text for i in held]),
                                             strict=True):
                best[i] = (intent, score)
        values = sorted({score for _, score in best})
        cuts = [0.0] + [(a + b) / 2 for a, b in zip(values, values[1:], strict=False)]
        for cut in cuts:
            pred = [intent if score >= cut else OUT_OF_SCOPE for intent, score in best]
            acc = sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)
            prec, rec = _oos_pr(gold, pred)
            results.append(Candidate(k, round(cut, 4), acc, macro_f1(gold, pred), prec, rec))
    return results


def choose(candidates: Sequence[Candidate]) -> Candidate:
    """Best accuracy, then macro-F1; among exact ties, the middle threshold of the plateau."""
    best_key = max((c.accuracy, c.macro_f1) for c in candidates)
    tied = [c for c in candidates if (c.accuracy, c.macro_f1) == best_key]
    by_k: dict[int, list[Candidate]] = {}
    for c in tied:
        by_k.setdefault(c.top_k, []).append(c)
    k = max(by_k, key=lambda kk: (len(by_k[kk]), -kk))  # widest plateau, then the smaller k
    plateau = sorted(by_k[k], key=lambda c: c.threshold)
    return plateau[len(plateau) // 2]


def at_threshold(heldout: Sequence[Example], threshold: float, top_k: int,
                 factory: type[IntentClassifier] = IntentClassifier) -> Candidate:
    """The held-out figures at a given English threshold and top-k (a threshold kept in use)."""
    gold = [e.intent for e in heldout]
    classifier = factory(top_k=top_k, threshold=threshold)
    pred = [p.intent for p in classifier.classify_many([e.text for e in heldout])]
    prec, rec = _oos_pr(gold, pred)
    accuracy = sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)
    return Candidate(top_k, threshold, accuracy, macro_f1(gold, pred), prec, rec)


def _with_chinese(chinese: Candidate) -> type[IntentClassifier]:
    """The classifier class with the Chinese settings chosen by `sweep_chinese`."""

    class WithChinese(IntentClassifier):
        def __init__(self, *, threshold: float | None = None, top_k: int | None = None) -> None:
            super().__init__(threshold=threshold, top_k=top_k, zh_threshold=chinese.threshold,
                             zh_top_k=chinese.top_k)

    return WithChinese


def errors(heldout: Sequence[Example], chosen: Candidate,
           factory: type[IntentClassifier] = IntentClassifier) -> list[tuple[str, str, str, float]]:
    """(text, gold, predicted, confidence) for every held-out miss at the chosen setting."""
    clf = factory(top_k=chosen.top_k, threshold=chosen.threshold)
    preds = clf.classify_many([e.text for e in heldout])
    return [(e.text, e.intent, p.intent, p.confidence) for e, p in zip(heldout, preds, strict=True)
            if p.intent != e.intent]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sweep, print a report, and (unless --dry-run) write `data/calibration.json`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print, do not write")
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "data" / "calibration.json")
    parser.add_argument("--keep-threshold", action="store_true",
                        help="keep the English threshold and top-k in use (and its threshold_note), "
                             "reporting the held-out figures at it; the optimum is printed")
    args = parser.parse_args(argv)

    chinese = choose(sweep_chinese(training_examples()))
    heldout = load_examples("intents_heldout.jsonl")
    candidates = sweep(heldout, classifier_factory=_with_chinese(chinese))
    chosen = choose(candidates)
    previous = json.loads(args.output.read_text(encoding="utf-8")) if args.output.exists() else {}
    if args.keep_threshold and "threshold" in previous:
        print(f"optimum: threshold {chosen.threshold} top_k {chosen.top_k} "
              f"(held-out accuracy {chosen.accuracy:.4f})", file=sys.stderr)
        chosen = at_threshold(heldout, float(previous["threshold"]), int(previous["top_k"]),
                              _with_chinese(chinese))
    misses = errors(heldout, chosen, _with_chinese(chinese))
    n_en = sum(1 for e in heldout if detect_language(e.text) == "en")
    report = {
        "threshold": chosen.threshold,
        "top_k": chosen.top_k,
        "zh_threshold": chinese.threshold,
        "zh_top_k": chinese.top_k,
        "zh_cross_validated_accuracy": round(chinese.accuracy, 4),
        "zh_cross_validated_macro_f1": round(chinese.macro_f1, 4),
        "heldout_accuracy": round(chosen.accuracy, 4),
        "heldout_macro_f1": round(chosen.macro_f1, 4),
        "heldout_oos_precision": round(chosen.oos_precision, 4),
        "heldout_oos_recall": round(chosen.oos_recall, 4),
        "heldout_size": len(heldout),
        "heldout_english": n_en,
        "heldout_chinese": len(heldout) - n_en,
        "model": "all-MiniLM-L6-v2-onnx-int8",
        "method": "mean cosine of the top-k examples per intent; below threshold -> out_of_scope "
                  "(Chinese: logistic regression over character 1-3-gram TF-IDF, threshold by 5-fold "
                  "cross-validation)",
        "calibrated_at": datetime.now(UTC).strftime("%Y-%m-%d"),
    }
    if args.keep_threshold and previous.get("threshold_note"):
        report["threshold_note"] = previous["threshold_note"]
    print(json.dumps(report, indent=2, ensure_ascii=False))
    for text, gold, pred, conf in misses:
        print(f"  miss: {text!r}: gold={gold} pred={pred} conf={conf:.3f}", file=sys.stderr)
    if not args.dry_run:
        args.output.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
