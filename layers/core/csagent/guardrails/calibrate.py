"""Calibrate the guardrails' thresholds and measure them on held-out lines.

    python -m csagent.guardrails.calibrate            # print the report, write data/calibration.json
    python -m csagent.guardrails.calibrate --dry-run  # print only

Injection: the semantic layer's threshold (attack margin, see `injection`) is chosen on the
TRAINING lines of `attacks.jsonl` and `benign.jsonl`, each scored leave-one-out (a line is never
its own nearest neighbour), maximising F0.5 of the combined screen (patterns OR margin):
precision weighs double because a false block refuses a real customer. Only thresholds >= 0 are
considered (`MIN_THRESHOLD`): a message that is more like a customer than like any attack is
never blocked on similarity, and text unlike both (margin near 0) is left to the patterns. Ties
go to the middle of the tied plateau. Precision / recall are then measured on the HELD-OUT
lines, which are in no reference set. The reference sets used at runtime are exactly the ones
measured here.

Scope: the two thresholds of `scope` (similarity alone; similarity with a keyword anchor) are
chosen on the training lines of `benign.jsonl` (in scope) and `out_of_scope.jsonl`, maximising
accuracy (ties: higher in-scope recall, then the middle of the plateau), and measured on the
held-out lines, together with the area accuracy.

Caveat for readers of the figures: the patterns and all three data files were written by the
same people; held-out lines were never used to choose a threshold, but the pattern list was
written knowing the kinds of attack in the file, so the pattern layer's held-out recall is
optimistic for attacks of a kind nobody wrote down.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from csagent.guardrails.injection import (
    MIN_THRESHOLD,
    InjectionScreen,
    LabelledText,
    decoded_payloads,
    load_labelled,
    pattern_hits,
)
from csagent.guardrails.scope import ScopeChecker

BETA = 0.5
MODEL = "all-MiniLM-L6-v2-onnx-int8"


@dataclass(frozen=True)
class Scores:
    """Precision / recall / F1 of a binary decision (positive = blocked, or = in scope)."""

    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int
    tn: int


def scores(gold: Sequence[bool], pred: Sequence[bool]) -> Scores:
    tp = sum(g and p for g, p in zip(gold, pred, strict=True))
    fp = sum(p and not g for g, p in zip(gold, pred, strict=True))
    fn = sum(g and not p for g, p in zip(gold, pred, strict=True))
    tn = len(gold) - tp - fp - fn
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Scores(round(precision, 4), round(recall, 4), round(f1, 4), tp, fp, fn, tn)


def f_beta(s: Scores, beta: float = BETA) -> float:
    b2 = beta * beta
    denominator = b2 * s.precision + s.recall
    return (1 + b2) * s.precision * s.recall / denominator if denominator else 0.0


def cut_points(values: Sequence[float]) -> list[float]:
    """Candidate thresholds: midpoints between distinct observed values, plus both ends."""
    ordered = sorted(set(values))
    if not ordered:
        return [0.0]
    middles = [(a + b) / 2 for a, b in zip(ordered, ordered[1:], strict=False)]
    return [ordered[0] - 1e-3, *middles, ordered[-1] + 1e-3]


def plateau_middle(candidates: Sequence[float], objective: Callable[[float], tuple[float, ...]]) -> float:
    """The candidate in the middle of the best-scoring run."""
    best = max(objective(c) for c in candidates)
    tied = [c for c in candidates if objective(c) == best]
    return tied[len(tied) // 2]


# -- injection -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScoredLine:
    line: LabelledText
    attack: bool
    pattern: bool
    margin: float | None  # None when the semantic layer does not apply (non-English)


def _pattern_flag(text: str) -> bool:
    return bool(pattern_hits(text) or decoded_payloads(text))


def score_injection_lines(screen: InjectionScreen, attacks: Sequence[LabelledText],
                          benign: Sequence[LabelledText]) -> list[ScoredLine]:
    """Pattern flag and margin of every line; training lines are scored leave-one-out."""
    from csagent.nlp.intents import detect_language

    scored = []
    for line, is_attack in [*((a, True) for a in attacks), *((b, False) for b in benign)]:
        margin = None
        if detect_language(line.text) == "en":
            exclude = line.text if line.split == "train" else None
            margin, _ = screen.margin(line.text, exclude=exclude)
        scored.append(ScoredLine(line, is_attack, _pattern_flag(line.text), margin))
    return scored


def _blocked(lines: Sequence[ScoredLine], threshold: float, *, patterns: bool = True,
             semantic: bool = True) -> list[bool]:
    return [(patterns and s.pattern) or (semantic and s.margin is not None and s.margin >= threshold)
            for s in lines]


def calibrate_injection(screen: InjectionScreen | None = None) -> dict[str, Any]:
    """Choose the injection threshold on training lines; measure on held-out lines."""
    screen = screen or InjectionScreen(threshold=float("inf"))
    attacks = load_labelled("attacks.jsonl", "category")
    benign = load_labelled("benign.jsonl", "area")
    scored = score_injection_lines(screen, attacks, benign)
    train = [s for s in scored if s.line.split == "train"]
    heldout = [s for s in scored if s.line.split == "heldout"]
    gold_train = [s.attack for s in train]

    def objective(t: float) -> tuple[float, ...]:
        return (round(f_beta(scores(gold_train, _blocked(train, t))), 6),)

    margins = [s.margin for s in train if s.margin is not None]
    candidates = [c for c in cut_points(margins) if c >= MIN_THRESHOLD]
    threshold = round(plateau_middle(candidates or [MIN_THRESHOLD], objective), 4)
    gold = [s.attack for s in heldout]
    combined = _blocked(heldout, threshold)
    return {
        "threshold": threshold,
        "objective": f"F{BETA} of patterns OR margin>=threshold on training lines (leave-one-out), "
                     f"threshold >= {MIN_THRESHOLD}",
        "train": asdict(scores(gold_train, _blocked(train, threshold))),
        "heldout": {
            "combined": asdict(scores(gold, combined)),
            "patterns_only": asdict(scores(gold, _blocked(heldout, threshold, semantic=False))),
            "semantic_only": asdict(scores(gold, _blocked(heldout, threshold, patterns=False))),
        },
        "heldout_misses": [s.line.text for s, p in zip(heldout, combined, strict=True) if s.attack and not p],
        "heldout_false_blocks": [s.line.text for s, p in zip(heldout, combined, strict=True)
                                 if p and not s.attack],
        "sizes": {"attacks_train": sum(a.split == "train" for a in attacks),
                  "attacks_heldout": sum(a.split == "heldout" for a in attacks),
                  "benign_train": sum(b.split == "train" for b in benign),
                  "benign_heldout": sum(b.split == "heldout" for b in benign),
                  "normal_reference": len(screen.normal)},
    }


def measure_latency(texts: Sequence[str], threshold: float) -> dict[str, float]:
    """Milliseconds per `screen()`, with a fresh embedder whose text cache is off (so every call
    really runs the model): the first call (loads the model, embeds the reference sets), then
    one call per text."""
    from csagent.nlp.embeddings import MiniLMEmbedder

    screen = InjectionScreen(MiniLMEmbedder(cache_size=0), threshold=threshold)
    started = time.perf_counter()
    screen.screen("hello")
    first = (time.perf_counter() - started) * 1000
    timings = []
    for text in texts:
        started = time.perf_counter()
        screen.screen(text)
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    return {"first_call_ms": round(first, 1), "mean_ms": round(statistics.fmean(timings), 2),
            "p50_ms": round(timings[len(timings) // 2], 2),
            "p95_ms": round(timings[max(0, int(len(timings) * 0.95) - 1)], 2), "calls": len(timings)}


# -- scope -----------------------------------------------------------------------------------
def calibrate_scope(checker: ScopeChecker | None = None) -> dict[str, Any]:
    """Choose the scope thresholds on training lines; measure on held-out lines."""
    from csagent.nlp.intents import detect_language

    checker = checker or ScopeChecker(threshold=float("inf"), anchored_threshold=float("inf"))
    lines = [(b, True) for b in load_labelled("benign.jsonl", "area")]
    lines += [(o, False) for o in load_labelled("out_of_scope.jsonl", "area")]
    features = []
    for line, in_scope in lines:
        english = detect_language(line.text) == "en"
        similarity, area = checker.similarity(line.text) if english else (0.0, None)
        features.append((line, in_scope, english, similarity, area, checker.anchors.hits(line.text)))

    def predict(rows: Sequence[Any], t1: float, t2: float) -> list[bool]:
        return [(bool(hits) if not en else (sim >= t1 or (bool(hits) and sim >= t2)))
                for _, _, en, sim, _, hits in rows]

    train = [f for f in features if f[0].split == "train"]
    heldout = [f for f in features if f[0].split == "heldout"]
    cuts = cut_points([f[3] for f in train if f[2]])
    gold_train = [f[1] for f in train]

    def accuracy(rows: Sequence[Any], t1: float, t2: float) -> float:
        pred = predict(rows, t1, t2)
        return sum(p == f[1] for p, f in zip(pred, rows, strict=True)) / len(rows)

    best: tuple[float, float] | None = None
    best_key: tuple[float, float] | None = None
    tied: list[tuple[float, float]] = []
    for t1 in cuts:
        for t2 in (c for c in cuts if c <= t1):
            key = (round(accuracy(train, t1, t2), 6), scores(gold_train, predict(train, t1, t2)).recall)
            if best_key is None or key > best_key:
                best_key, tied = key, [(t1, t2)]
            elif key == best_key:
                tied.append((t1, t2))
    t1s = sorted({t for t, _ in tied})
    t1 = t1s[len(t1s) // 2]
    t2s = sorted(t for a, t in tied if a == t1)
    best = (round(t1, 4), round(t2s[len(t2s) // 2], 4))
    gold = [f[1] for f in heldout]
    pred = predict(heldout, *best)
    in_scope_rows = [f for f in heldout if f[1]]
    area_hits = 0
    for f in in_scope_rows:
        result = ScopeChecker(checker.embedder, threshold=best[0], anchored_threshold=best[1],
                              anchors=checker.anchors, lines=checker.lines).check(f[0].text)
        area_hits += result.area == f[0].label
    return {
        "threshold": best[0], "anchored_threshold": best[1],
        "objective": "accuracy on training lines (ties: in-scope recall, then the middle of the plateau)",
        "train_accuracy": round(accuracy(train, *best), 4),
        "heldout": {"accuracy": round(sum(p == g for p, g in zip(pred, gold, strict=True)) / len(gold), 4),
                    "in_scope": asdict(scores(gold, pred)),
                    "area_accuracy": round(area_hits / len(in_scope_rows), 4) if in_scope_rows else None},
        "heldout_errors": [f[0].text for f, p in zip(heldout, pred, strict=True) if p != f[1]],
    }


# -- entry point -----------------------------------------------------------------------------
def calibration_path() -> Path:
    return Path(__file__).resolve().parent / "data" / "calibration.json"


def run(dry_run: bool = False) -> dict[str, Any]:
    injection = calibrate_injection()
    heldout_texts = [line.text for name, field in (("attacks.jsonl", "category"), ("benign.jsonl", "area"))
                     for line in load_labelled(name, field) if line.split == "heldout"]
    latency = measure_latency(heldout_texts, injection["threshold"])
    scope = calibrate_scope()
    report = {"injection": injection, "scope": scope, "model": MODEL,
              "calibrated_at": datetime.now(UTC).date().isoformat()}
    json.dump({**report, "latency_this_machine": latency}, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    if not dry_run:
        text = json.dumps(report, indent=2, ensure_ascii=False) + "\n"
        calibration_path().write_text(text, encoding="utf-8")
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dry-run", action="store_true", help="print the report without writing the file")
    run(parser.parse_args(argv).dry_run)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
