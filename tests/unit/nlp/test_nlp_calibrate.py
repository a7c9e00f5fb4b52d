"""Threshold calibration: metric and selection logic (the sweep itself runs on the real model)."""

from __future__ import annotations

import json

import pytest

from csagent.nlp.calibrate import Candidate, choose, macro_f1, main


def test_macro_f1_is_one_for_perfect_predictions_and_lower_otherwise() -> None:
    # Given gold labels and two prediction sets
    gold = ["a", "a", "b", "out_of_scope"]
    # When scored / Then perfect predictions score 1 and a mistake lowers the score
    assert macro_f1(gold, gold) == 1.0
    assert macro_f1(gold, ["a", "b", "b", "out_of_scope"]) < 1.0


def test_choose_prefers_accuracy_then_the_middle_of_the_best_plateau() -> None:
    # Given candidates where thresholds 0.3-0.5 tie for the best accuracy
    candidates = [Candidate(3, t, acc, 0.9, 1.0, 1.0) for t, acc in
                  [(0.2, 0.80), (0.3, 0.95), (0.4, 0.95), (0.5, 0.95), (0.6, 0.90)]]
    # When the best is chosen / Then it is the middle of the tied range, away from both edges
    assert choose(candidates).threshold == 0.4


@pytest.mark.usefixtures("embedder")
def test_calibration_dry_run_reports_accuracy_without_writing(tmp_path, capsys) -> None:  # noqa: ANN001
    # Given an output path / When the calibration runs with --dry-run
    target = tmp_path / "calibration.json"
    assert main(["--dry-run", "--output", str(target)]) == 0
    # Then it prints a threshold and held-out accuracy, and writes nothing
    report = json.loads(capsys.readouterr().out)
    assert 0.0 < report["threshold"] < 1.0 and report["heldout_accuracy"] >= 0.9
    assert not target.exists()
