"""The development messages `devstack.knowledge_cv` chooses its settings on."""

from __future__ import annotations

import json
from pathlib import Path

from devstack.knowledge_cv import messages


def _conversation(cid: str, turns: list[dict[str, object]]) -> dict[str, object]:
    return {"id": cid, "persona": "terse", "lang": "en", "customer": "x", "categories": ["policy_question"],
            "turns": turns}


def test_a_first_turn_left_unjudged_is_skipped_and_an_answered_one_is_read(tmp_path: Path) -> None:
    answered = {"text": "do returns cost anything", "expect": {
        "outcome": "answer", "reply_contains_any": [["prepaid", "free"]], "reply_contains": []}}
    lines = [_conversation("dev-terse-1", [answered]),
             _conversation("dev-terse-2", [{"text": "hi"}, answered])]  # FORMAT.md allows an unjudged turn
    (tmp_path / "part1.jsonl").write_text("".join(json.dumps(c) + "\n" for c in lines), encoding="utf-8")
    assert messages(tmp_path) == [("do returns cost anything", [["prepaid", "free"]], [])]
