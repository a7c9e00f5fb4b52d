"""`make tau`: replay tau-retail tasks through the HTTP API with scripted customers, then compare
the store with the benchmark's reference end state (issue 13).

    python -m devstack.tau                     # every scripted task (infra/tau/sample.txt)
    python -m devstack.tau --task train-064 -v # one task, with the conversation
    python -m devstack.tau --limit 20          # the first 20 tasks of the sample

A task's scripted customer (`infra/tau/scripts/*.jsonl`, see `infra/tau/SCRIPTS.md`) is played
without reading the assistant's words: the first turn, then `confirm` whenever the reply's status
is `awaiting_confirmation`, else the next turn, at most `MAX_MESSAGES` messages.

A task passes when, afterwards, every record of the task's customer (the user and each of their
orders) equals the reference: the task's `expected_changes` where it has one, the dataset's
record otherwise (no write the reference did not make), floats compared to the cent; and every
expected output string appears in a reply. Between tasks the customer is restored from the
dataset (`evaluation.store.restore_customers`), so tasks are independent. A refund over the
approval threshold pauses the turn for a person; the harness approves it as an agent
(`Bearer dev-agent:tau`), as the store's staff would.

Writes `reports/tau.json` (every task, its messages, statuses and differences) and
`reports/tau.md` (pass^1 overall and by action kind, every failure with its first difference).
The local tier is deterministic, so pass^k = pass^1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TAU_DIR = ROOT / "infra" / "tau"
DATA = ROOT.parent / "shared" / "data" / "tau-retail"
REPORTS = ROOT / "reports"
MAX_MESSAGES = 14
KIND = {  # the benchmark's tool names -> our action names
    "cancel_pending_order": "cancel_order",
    "return_delivered_order_items": "return_items",
    "exchange_delivered_order_items": "exchange_items",
    "modify_pending_order_items": "modify_items",
    "modify_pending_order_payment": "change_payment",
    "modify_pending_order_address": "change_order_address",
    "modify_user_address": "update_default_address",
}


@dataclass(frozen=True)
class Script:
    task_id: str
    user_id: str
    turns: tuple[str, ...]
    confirm: str


@dataclass
class TaskResult:
    task_id: str
    user_id: str
    kinds: list[str]
    messages: list[dict[str, Any]] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)
    missing_outputs: list[str] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.differences and not self.missing_outputs and self.error is None


def load_scripts(directory: Path = TAU_DIR / "scripts") -> dict[str, Script]:
    scripts: dict[str, Script] = {}
    for path in sorted(directory.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            raw = json.loads(line)
            turns = tuple(str(t) for t in raw["turns"])
            if not turns or not raw.get("confirm"):
                raise ValueError(f"{path.name}:{number}: a script needs turns and a confirm")
            scripts[raw["task_id"]] = Script(raw["task_id"], raw["user_id"], turns, str(raw["confirm"]))
    return scripts


def sample(path: Path = TAU_DIR / "sample.txt") -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# ----------------------------------------------------------------------------------- compare
def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return abs(float(a) - float(b)) < 0.005
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def differences(
    kind: str, key: str, ours: Mapping[str, Any] | None, reference: Mapping[str, Any]
) -> list[str]:
    """Readable differences between our record and the reference's (empty: equal)."""
    if ours is None:
        return [f"{kind} {key}: missing from the store"]
    out = []
    for field_name in sorted(set(ours) | set(reference)):
        if field_name not in ours:
            out.append(
                f"{kind} {key}.{field_name}: absent, expected {json.dumps(reference[field_name])[:160]}"
            )
        elif field_name not in reference:
            out.append(f"{kind} {key}.{field_name}: unexpected {json.dumps(ours[field_name])[:160]}")
        elif not _same(ours[field_name], reference[field_name]):
            out.append(
                f"{kind} {key}.{field_name}: {json.dumps(ours[field_name])[:160]} != expected "
                f"{json.dumps(reference[field_name])[:160]}"
            )
    return out


def compare(
    task: Mapping[str, Any],
    exported: Mapping[str, Mapping[str, Any]],
    dataset: tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]],
) -> list[str]:
    """Every record of the task's customer against the reference end state."""
    users, orders, _ = dataset
    expected = task.get("expected_changes") or {}
    user_id = task["user_id"]
    reference_user = (expected.get("users") or {}).get(user_id) or users[user_id]
    found = differences("user", user_id, exported["users"].get(user_id), reference_user)
    for order_id in reference_user.get("orders", []):
        reference = (expected.get("orders") or {}).get(order_id) or orders[order_id]
        found += differences("order", order_id, exported["orders"].get(order_id), reference)
    return found


# ------------------------------------------------------------------------------------- play
def play(client: Any, script: Script) -> list[dict[str, Any]]:
    """Send the scripted customer's messages; the statuses decide what comes next, never the words."""
    session = f"tau-{script.task_id}-{uuid.uuid4().hex[:8]}"
    headers = {"Authorization": f"Bearer dev:{script.user_id}"}
    queue = list(script.turns)
    messages: list[dict[str, Any]] = []
    text = queue.pop(0)
    while len(messages) < MAX_MESSAGES:
        response = client.post(f"/v1/sessions/{session}/messages", json={"text": text}, headers=headers)
        body = (
            response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
        )
        status = str(body.get("status") or f"http {response.status_code}")
        reply = str((body.get("reply") or {}).get("text") or body.get("message") or "")
        messages.append(
            {
                "customer": text,
                "status": status,
                "reply": reply,
                "tasks": [(t.get("task_type"), t.get("status")) for t in body.get("tasks") or []],
            }
        )
        if status == "awaiting_approval":
            # A refund over the approval threshold waits for a person: the harness is that person.
            decided = _approve(client, body)
            messages[-1]["approval"] = decided
            status = str((decided.get("turn") or {}).get("status") or status)
            messages[-1]["status_after_approval"] = status
        if status == "awaiting_confirmation":
            text = script.confirm
        elif queue:
            text = queue.pop(0)
        else:
            break
    return messages


AGENT_AUTH = "Bearer dev-agent:tau"


def _approve(client: Any, body: Mapping[str, Any]) -> dict[str, Any]:
    approval_id = (body.get("trace") or {}).get("approval_id")
    if not approval_id:
        return {"error": "no pending approval"}
    response = client.post(
        f"/v1/approvals/{approval_id}", json={"decision": "approve"}, headers={"Authorization": AGENT_AUTH}
    )
    out = response.json() if response.status_code == 200 else {"http_status": response.status_code}
    return {"resumed": bool(out.get("resumed")), "turn": out.get("turn") or {}}


def run(task_ids: Sequence[str], *, data_dir: Path = DATA, verbose: bool = False) -> list[TaskResult]:
    from devstack.evaluation.runner import api_session
    from devstack.evaluation.store import restore_customers
    from devstack.export import export_store
    from devstack.seed.loader import read_dataset

    tasks = {t["id"]: t for t in json.loads((data_dir / "tasks_train.json").read_text(encoding="utf-8"))}
    scripts = load_scripts()
    dataset_files = read_dataset(data_dir)
    results: list[TaskResult] = []
    with api_session(data_dir) as (driver, dataset, client):
        for task_id in task_ids:
            task, script = tasks[task_id], scripts.get(task_id)
            result = TaskResult(
                task_id, task["user_id"], sorted({KIND.get(a["name"], a["name"]) for a in task["actions"]})
            )
            started = time.perf_counter()
            try:
                if script is None:
                    raise LookupError("no scripted customer for this task")
                restore_customers(driver, dataset, [task["user_id"]])
                result.messages = play(client, script)
                result.differences = compare(task, export_store(driver), dataset_files)
                replies = " ".join(m["reply"] for m in result.messages).lower()
                result.missing_outputs = [
                    o for o in task.get("outputs") or [] if str(o).lower() not in replies
                ]
            except Exception as exc:  # noqa: BLE001 - one task's failure is that task's result
                result.error = f"{type(exc).__name__}: {exc}"
            result.seconds = round(time.perf_counter() - started, 2)
            results.append(result)
            if verbose:
                _print(result)
            else:
                print("." if result.passed else "F", end="", flush=True)
    if not verbose:
        print()
    return results


def _print(result: TaskResult) -> None:
    print(
        f"{'PASS' if result.passed else 'FAIL'} {result.task_id} ({', '.join(result.kinds)}) "
        f"{result.seconds}s"
    )
    for m in result.messages:
        print(f"  > {m['customer']}\n  < [{m['status']}] {m['reply'][:400]}")
    for d in result.differences[:8]:
        print(f"  ! {d}")
    if result.error:
        print(f"  ! {result.error}")


# ------------------------------------------------------------------------------------ report
def summary(results: Sequence[TaskResult]) -> dict[str, Any]:
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        for kind in r.kinds:
            by_kind[kind].append(r.passed)
    return {
        "tasks": len(results),
        "passed": sum(r.passed for r in results),
        "pass_1": round(sum(r.passed for r in results) / len(results), 4) if results else 0.0,
        "by_kind": {
            k: {"tasks": len(v), "passed": sum(v), "pass_1": round(sum(v) / len(v), 4)}
            for k, v in sorted(by_kind.items())
        },
        "messages": sum(len(r.messages) for r in results),
        "statuses": dict(Counter(m["status"] for r in results for m in r.messages)),
    }


def write_report(results: Sequence[TaskResult], out: Path = REPORTS) -> dict[str, Any]:
    figures = summary(results)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tau.json").write_text(
        json.dumps(
            {"summary": figures, "tasks": [{**r.__dict__, "passed": r.passed} for r in results]}, indent=1
        ),
        encoding="utf-8",
    )
    lines = [
        "# tau-retail replay (`make tau`)",
        "",
        f"Scripted customers (`infra/tau/scripts/`) on {figures['tasks']} train/dev tasks of "
        "tau-bench retail, through the HTTP API, local model tier (deterministic: pass^k = pass^1). "
        "A task passes when the customer's user and order records equal the reference end state "
        "and every expected output appears in a reply.",
        "",
        f"**pass^1 = {figures['pass_1']:.3f}** ({figures['passed']}/{figures['tasks']})",
        "",
        "| action kind | tasks | passed | pass^1 |",
        "| --- | ---: | ---: | ---: |",
    ]
    for kind, row in figures["by_kind"].items():
        lines.append(f"| {kind} | {row['tasks']} | {row['passed']} | {row['pass_1']:.3f} |")
    lines += ["", "A task with several action kinds counts under each of them.", "", "## Failures", ""]
    for r in results:
        if r.passed:
            continue
        first = r.error or (r.differences[0] if r.differences else f"missing outputs {r.missing_outputs}")
        last = r.messages[-1] if r.messages else {}
        lines.append(
            f"- `{r.task_id}` ({', '.join(r.kinds)}): {first[:300]}"
            + (f" — last status `{last.get('status')}`" if last else "")
        )
    (out / "tau.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devstack.tau", description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", default=[], help="only this task id (repeatable)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks of the sample")
    parser.add_argument("--data", type=Path, default=DATA, help="the tau-retail dataset directory")
    parser.add_argument("--out", type=Path, default=REPORTS, help="report directory (default reports/)")
    parser.add_argument("--min-pass", type=float, default=0.0, help="exit 1 below this pass^1")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every conversation")
    args = parser.parse_args(argv)
    ids = args.task or sample()[: args.limit]
    results = run(ids, data_dir=args.data, verbose=args.verbose)
    figures = write_report(results, args.out) if not args.task else summary(results)
    print(f"pass^1 {figures['pass_1']:.3f} ({figures['passed']}/{figures['tasks']})")
    for kind, row in figures["by_kind"].items():
        print(f"  {kind:24} {row['passed']:3}/{row['tasks']:<3} {row['pass_1']:.3f}")
    return 0 if figures["pass_1"] >= args.min_pass else 1


if __name__ == "__main__":
    sys.exit(main())
