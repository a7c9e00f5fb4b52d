"""`make eval-understanding`: the customer-message sets of issue 12 through the HTTP API.

    python -m devstack.understanding_eval                       # the development set (dev/)
    python -m devstack.understanding_eval --set sealed          # the sealed set: once per release
    python -m devstack.understanding_eval --id dev-terse-0001 -v
    python -m devstack.understanding_eval --part part4 -v       # one file of the development set

Sets and their format: `infra/eval/understanding/FORMAT.md`. Each conversation runs in its own
session as its customer; the customer is restored from the dataset afterwards. A turn is judged
on what a user sees: the reply's status, whether a write was proposed and which, and the facts
in the reply text:

| outcome | status |
| --- | --- |
| answer, explain_rule | answered or partial, nothing proposed |
| clarify | needs_clarification |
| propose | awaiting_confirmation (or awaiting_approval) with the expected write proposed |
| done | answered or partial, a write carried out (after the store's approval, see below) |
| declined | answered, nothing carried out |
| handoff | handed_off |
| refuse | refused |

A write over the refund threshold pauses for the store's approver (`awaiting_approval`): when the
turn expects `done`, the harness approves it as that person (POST /v1/approvals/{id} with
`Bearer dev-agent:eval`) and judges the resumed turn the customer then sees, so the write must
still be carried out and reported; `store_approvals` counts these turns.

A conversation is resolved when every judged turn passes. Figures per set (`reports/
understanding-<set>.{json,md}`): resolution, refused-but-in-scope (a store matter answered
as out of scope; target 0), unrequested writes (a write proposed where `proposes` is null;
target 0), negation accuracy (conversations tagged `negation`), order found without id
(conversations tagged `no_order_id` whose expected orders are named), by category and persona.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SETS = ROOT / "infra" / "eval" / "understanding"
DATA = ROOT.parent / "shared" / "data" / "tau-retail"
REPORTS = ROOT / "reports"
ACTION_TASKS = frozenset(
    {
        "cancel_order",
        "return_items",
        "exchange_items",
        "modify_items",
        "change_payment",
        "change_order_address",
        "update_default_address",
    }
)
ANSWERED = frozenset({"answered", "partial"})


@dataclass
class Judged:
    id: str
    persona: str
    categories: list[str]
    source: str = ""  # the file of the set the conversation comes from
    turns: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    refused_in_scope: bool = False
    unrequested_write: bool = False
    orders_found: bool | None = None
    approvals: int = 0

    @property
    def resolved(self) -> bool:
        return not self.failures


def load(set_name: str, part: str | None = None) -> list[dict[str, Any]]:
    """The set's conversations, every file of it or only the file `part` (`part4` is `part4.jsonl`),
    each with the key `_file` naming its file (figures are reported per file too). Ids are unique
    across the set's files: two conversations under one id would be reported, and compared between
    runs, as one."""
    rows: list[dict[str, Any]] = []
    for path in sorted((SETS / set_name).glob(f"{part or '*'}.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        rows += [{**json.loads(line), "_file": path.stem} for line in lines if line.strip()]
    seen: dict[str, str] = {}
    for row in rows:
        if row["id"] in seen:
            raise ValueError(f"conversation id {row['id']} is in {seen[row['id']]} and {row['_file']}")
        seen[row["id"]] = row["_file"]
    return rows


def _proposed(body: Mapping[str, Any]) -> list[str]:
    return [
        t["task_type"]
        for t in body.get("tasks") or []
        if t.get("task_type") in ACTION_TASKS and t.get("status") in ("success", "fallback")
    ]


def judge_turn(
    expect: Mapping[str, Any], body: Mapping[str, Any], previous: Mapping[str, Any] | None, result: Judged
) -> list[str]:
    """What is wrong with one reply (empty: it passes)."""
    status = str(body.get("status") or "")
    reply = str((body.get("reply") or {}).get("text") or "").lower()
    outcome = expect.get("outcome")
    proposed = _proposed(body) if status in ("awaiting_confirmation", "awaiting_approval") else []
    executed = _proposed(body) if previous and previous.get("status") == "awaiting_confirmation" else []
    failures: list[str] = []
    if status == "refused" and outcome != "refuse":
        result.refused_in_scope = True
    if proposed and expect.get("proposes") is None and outcome not in ("propose", "done"):
        result.unrequested_write = True
    wanted = {
        "answer": status in ANSWERED and not proposed,
        "explain_rule": status in ANSWERED and not proposed,
        "clarify": status == "needs_clarification",
        "propose": bool(proposed),
        "done": status in ANSWERED and bool(executed),
        "declined": status in ANSWERED and not executed,
        "handoff": status == "handed_off",
        "refuse": status == "refused",
    }.get(str(outcome), False)
    if not wanted:
        failures.append(f"outcome {outcome}: got {status} {proposed or executed or ''}".strip())
    if outcome == "propose" and expect.get("proposes") and expect["proposes"] not in proposed:
        failures.append(f"proposes {expect['proposes']}: got {proposed}")
    for order_id in expect.get("orders") or []:
        if order_id.lower() not in reply:
            failures.append(f"order {order_id} not named")
    for fact in expect.get("reply_contains") or []:
        if str(fact).lower() not in reply:
            failures.append(f"missing '{fact}'")
    for group in expect.get("reply_contains_any") or []:
        if not any(str(x).lower() in reply for x in group):
            failures.append(f"none of {group}")
    for fact in expect.get("reply_not_contains") or []:
        if str(fact).lower() in reply:
            failures.append(f"contains '{fact}'")
    return failures


def run(conversations: Sequence[Mapping[str, Any]], *, verbose: bool = False) -> list[Judged]:
    from devstack.evaluation.runner import api_session
    from devstack.evaluation.store import restore_changed

    results: list[Judged] = []
    with api_session(DATA) as (driver, dataset, client):
        for conv in conversations:
            results.append(_conversation(client, conv, verbose))
            restore_changed(driver, dataset)
            if not verbose:
                print("." if results[-1].resolved else "F", end="", flush=True)
    if not verbose:
        print()
    return results


def _conversation(client: Any, conv: Mapping[str, Any], verbose: bool) -> Judged:
    result = Judged(conv["id"], conv.get("persona", ""), list(conv.get("categories") or []),
                    source=conv.get("_file", ""))
    session = f"u-{conv['id']}-{uuid.uuid4().hex[:6]}"
    headers = {"Authorization": f"Bearer dev:{conv['customer']}"}
    previous: dict[str, Any] | None = None
    named: list[bool] = []
    for turn in conv["turns"]:
        response = client.post(
            f"/v1/sessions/{session}/messages", json={"text": turn["text"]}, headers=headers
        )
        try:
            body = response.json()
        except ValueError:
            body = {}
        if response.status_code != 200:
            body = {"status": f"http {response.status_code}", "reply": {"text": str(body)[:200]}}
        expect = turn.get("expect")
        if expect and expect.get("outcome") == "done" and body.get("status") == "awaiting_approval":
            body = _approved(client, body)
            result.approvals += 1
        failures = judge_turn(expect, body, previous, result) if expect else []
        if expect and "no_order_id" in result.categories and expect.get("orders"):
            text = str((body.get("reply") or {}).get("text") or "").lower()
            named.append(all(o.lower() in text for o in expect["orders"]))
        result.failures += failures
        result.turns.append(
            {
                "text": turn["text"],
                "status": body.get("status"),
                "reply": str((body.get("reply") or {}).get("text") or "")[:600],
                "tasks": [(t.get("task_type"), t.get("status")) for t in body.get("tasks") or []],
                "failures": failures,
            }
        )
        previous = body
    result.orders_found = all(named) if named else None
    if verbose:
        print(f"{'PASS' if result.resolved else 'FAIL'} {result.id} {result.categories}")
        for t in result.turns:
            print(f"  > {t['text']}\n  < [{t['status']}] {t['reply'][:300]}")
            for f in t["failures"]:
                print(f"  ! {f}")
    return result


def _approved(client: Any, body: Mapping[str, Any]) -> dict[str, Any]:
    """The turn the customer sees once the store's approver approves the paused write."""
    from devstack.evaluation.runner import decide_approval

    decided = decide_approval(client, body, "approve")
    turn = decided.get("turn")
    if decided.get("http_status") != 200 or not decided.get("resumed") or not isinstance(turn, dict):
        reply = f"approval not resumed: http {decided.get('http_status')}"
        return {"status": "approval failed", "reply": {"text": reply}}
    return dict(turn)


def _rate(values: Sequence[bool]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def summary(results: Sequence[Judged]) -> dict[str, Any]:
    in_scope = [r for r in results if "out_of_scope" not in r.categories]
    in_scope_ids = {r.id for r in in_scope}
    by_category: dict[str, list[bool]] = defaultdict(list)
    by_persona: dict[str, list[bool]] = defaultdict(list)
    by_file: dict[str, list[Judged]] = defaultdict(list)
    for r in results:
        for c in r.categories:
            by_category[c].append(r.resolved)
        by_persona[r.persona].append(r.resolved)
        by_file[r.source].append(r)
    found = [bool(r.orders_found) for r in results if r.orders_found is not None]
    return {
        "conversations": len(results),
        "resolution": _rate([r.resolved for r in results]),
        "refused_but_in_scope": _rate([r.refused_in_scope for r in in_scope]),
        "refused_but_in_scope_count": sum(r.refused_in_scope for r in in_scope),
        "unrequested_writes": sum(r.unrequested_write for r in results),
        "negation_accuracy": _rate([r.resolved for r in results if "negation" in r.categories]),
        "order_found_without_id": _rate(found),
        "clarification_rate": _rate(
            [any(t["status"] == "needs_clarification" for t in r.turns) for r in results]
        ),
        "store_approvals": sum(r.approvals for r in results),
        "by_category": {k: {"n": len(v), "resolution": _rate(v)} for k, v in sorted(by_category.items())},
        "by_persona": {k: {"n": len(v), "resolution": _rate(v)} for k, v in sorted(by_persona.items())},
        "by_file": {
            k: {
                "n": len(v),
                "resolution": _rate([r.resolved for r in v]),
                "refused_but_in_scope_count": sum(r.refused_in_scope for r in v if r.id in in_scope_ids),
                "unrequested_writes": sum(r.unrequested_write for r in v),
            }
            for k, v in sorted(by_file.items())
        },
    }


def _record(set_name: str, judged: Judged) -> dict[str, Any]:
    """One conversation's result as the report keeps it; a sealed set's without its text, replies or
    failures, so that the report on disk never shows the set to whoever opens it."""
    record = dict(judged.__dict__)
    if set_name == "sealed":
        for key in ("turns", "failures"):
            record.pop(key)
    return record


def write_report(set_name: str, results: Sequence[Judged], out: Path = REPORTS) -> dict[str, Any]:
    figures = summary(results)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"understanding-{set_name}.json").write_text(
        json.dumps(
            {"set": set_name, "summary": figures, "conversations": [_record(set_name, r) for r in results]},
            indent=1,
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    lines = [
        f"# Customer-message set `{set_name}` (`make eval-understanding`)",
        "",
        "Local model tier through the HTTP API on the tau-retail store; judged on status, proposed "
        "write and facts in the reply (`infra/devstack/understanding_eval.py`).",
        "",
        "| figure | value |",
        "| --- | ---: |",
    ]
    for key in (
        "conversations",
        "resolution",
        "refused_but_in_scope",
        "refused_but_in_scope_count",
        "unrequested_writes",
        "negation_accuracy",
        "order_found_without_id",
        "clarification_rate",
        "store_approvals",
    ):
        lines.append(f"| {key} | {figures[key]} |")
    lines += ["", "| category | n | resolution |", "| --- | ---: | ---: |"]
    lines += [f"| {k} | {v['n']} | {v['resolution']} |" for k, v in figures["by_category"].items()]
    lines += ["", "| file | n | resolution | refused in scope | unrequested writes |",
              "| --- | ---: | ---: | ---: | ---: |"]
    lines += [
        f"| {k} | {f['n']} | {f['resolution']} | {f['refused_but_in_scope_count']} "
        f"| {f['unrequested_writes']} |"
        for k, f in figures["by_file"].items()
    ]
    lines += ["", "| persona | n | resolution |", "| --- | ---: | ---: |"]
    lines += [f"| {k} | {v['n']} | {v['resolution']} |" for k, v in figures["by_persona"].items()]
    if set_name != "sealed":  # a sealed set's failures are not read: only its figures are reported
        lines += ["", "## Unresolved", ""]
        lines += [f"- `{r.id}`: {'; '.join(r.failures)[:300]}" for r in results if not r.resolved]
    (out / f"understanding-{set_name}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devstack.understanding_eval")
    parser.add_argument("--set", default="dev", choices=("dev", "sealed"))
    parser.add_argument("--id", action="append", default=[], help="only this conversation (dev only)")
    parser.add_argument("--part", default=None, help="only this file of the set, e.g. part4 (dev only)")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("-v", "--verbose", action="store_true", help="every conversation (dev only)")
    args = parser.parse_args(argv)
    conversations = load(args.set, args.part)
    if args.set == "sealed" and (args.id or args.verbose or args.part):
        parser.error("the sealed set is measured whole and never read: no --id, --part or -v")
    if not conversations:
        parser.error(f"no conversations in set {args.set!r}" + (f", part {args.part!r}" if args.part else ""))
    if not args.verbose:
        # The router logs every turn with its text: a run that is not read turn by turn (above all
        # the sealed set's) prints only its progress and figures.
        os.environ["POWERTOOLS_LOG_LEVEL"] = "WARNING"
    if args.id:
        conversations = [c for c in conversations if c["id"] in set(args.id)]
    conversations = conversations[: args.limit]
    results = run(conversations, verbose=args.verbose)
    figures = write_report(args.set, results) if not (args.id or args.part) else summary(results)
    shown = {k: v for k, v in figures.items() if not k.startswith("by_") or k == "by_file"}
    print(json.dumps(shown, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
