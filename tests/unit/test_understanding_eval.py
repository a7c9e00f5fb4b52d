"""The customer-message evaluation's figures: per file, and a sealed set's report without its text."""

from __future__ import annotations

import json
from pathlib import Path

from devstack.understanding_eval import Judged, load, summary, write_report


def _judged(id_: str, source: str, *, failed: bool = False, refused: bool = False,
            write: bool = False, categories: tuple[str, ...] = ("order_status",)) -> Judged:
    return Judged(id_, "terse", list(categories), source=source,
                  turns=[{"text": "where is my kettle", "status": "answered"}],
                  failures=["missing fact"] if failed else [], refused_in_scope=refused,
                  unrequested_write=write)


RESULTS = [
    _judged("a1", "part1"),
    _judged("a2", "part1", failed=True, refused=True),
    _judged("b1", "part2", failed=True, write=True),
    _judged("b2", "part2", failed=True, refused=True, categories=("out_of_scope",)),
]


def test_summary_reports_each_file_apart() -> None:
    by_file = summary(RESULTS)["by_file"]
    assert by_file["part1"] == {"n": 2, "resolution": 0.5, "refused_but_in_scope_count": 1,
                                "unrequested_writes": 0}
    # b2 is out of scope: its refusal is not a store question refused.
    assert by_file["part2"] == {"n": 2, "resolution": 0.0, "refused_but_in_scope_count": 0,
                                "unrequested_writes": 1}


def test_sealed_report_keeps_figures_not_text(tmp_path: Path) -> None:
    write_report("sealed", RESULTS, out=tmp_path)
    saved = json.loads((tmp_path / "understanding-sealed.json").read_text(encoding="utf-8"))
    assert [c["id"] for c in saved["conversations"]] == ["a1", "a2", "b1", "b2"]
    assert all("turns" not in c and "failures" not in c for c in saved["conversations"])
    text = (tmp_path / "understanding-sealed.md").read_text(encoding="utf-8")
    assert "kettle" not in text and "missing fact" not in text
    assert "| part2 | 2 | 0.0 | 0 | 1 |" in text


def test_dev_report_keeps_the_failures_to_read(tmp_path: Path) -> None:
    write_report("dev", RESULTS, out=tmp_path)
    saved = json.loads((tmp_path / "understanding-dev.json").read_text(encoding="utf-8"))
    assert saved["conversations"][1]["failures"] == ["missing fact"]
    assert "`a2`: missing fact" in (tmp_path / "understanding-dev.md").read_text(encoding="utf-8")


def test_load_names_each_conversation_file() -> None:
    rows = load("dev", "part1")
    assert rows and {r["_file"] for r in rows} == {"part1"}


def test_an_id_in_two_files_of_a_set_is_refused(tmp_path: Path, monkeypatch) -> None:
    import pytest

    import devstack.understanding_eval as evaluation

    (tmp_path / "dev").mkdir()
    for part in ("part1", "part2"):
        (tmp_path / "dev" / f"{part}.jsonl").write_text(json.dumps({"id": "dev-terse-0001"}) + "\n")
    monkeypatch.setattr(evaluation, "SETS", tmp_path)
    with pytest.raises(ValueError, match="dev-terse-0001 is in part1 and part2"):
        load("dev")
    # the set as committed has none
    monkeypatch.undo()
    assert len({r["id"] for r in load("dev")}) == len(load("dev"))
