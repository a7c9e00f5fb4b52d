"""Knowledge questions through the customer chat API: `python -m devstack.kb_eval [--set held-out]`.

Each question of a knowledge evaluation set (`csagent.knowledge.evaluate.SETS`) is sent as a new
session's first message to the router's real HTTP app (uvicorn on a loopback port, the local
tier), as a tau-retail customer. Per set it reports:

- **fact in reply**: the share of replies that contain the question's `fact` (case and spacing
  ignored) - the whole reply the customer reads, not the retrieval;
- **cites a relevant section**: the share whose citations include a labelled document/section;
- how the turns ended (answered, needs clarification, ...).

Writes reports/kb-eval.{json,md}. Needs the local stack with tau-retail seeded (`make eval` runs
it after the labelled suite, which seeds it). Questions are never edited or filtered here.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "reports"
CUSTOMER = "mei_gonzalez_4785"


def _cites(citations: list[dict[str, Any]], labels: tuple[str, ...]) -> bool:
    for c in citations:
        for label in labels:
            doc_id, _, section = label.partition("#")
            in_section = not section or section.lower() in str(c.get("section", "")).lower()
            if c.get("doc_id") == doc_id and in_section:
                return True
    return False


def run_set(client: Any, name: str, path: Path) -> dict[str, Any]:
    from csagent.knowledge.evaluate import contains_fact, load_questions

    questions = [q for q in load_questions(path) if q.fact]
    facts = cited = 0
    statuses: Counter[str] = Counter()
    misses = []
    latencies = []
    for q in questions:
        started = time.perf_counter()
        response = client.post(f"/v1/sessions/kbq-{uuid.uuid4().hex[:10]}/messages",
                               json={"text": q.question}, headers={"Authorization": f"Bearer dev:{CUSTOMER}"})
        latencies.append((time.perf_counter() - started) * 1000)
        body = response.json() if response.status_code == 200 else {}
        reply = str((body.get("reply") or {}).get("text") or "")
        statuses[str(body.get("status") or f"http {response.status_code}")] += 1
        ok = bool(q.fact) and contains_fact(reply, str(q.fact))
        facts += ok
        cited += _cites((body.get("reply") or {}).get("citations") or [], q.relevant)
        if not ok:
            misses.append({"question": q.question, "fact": q.fact, "reply": reply[:300]})
    n = len(questions)
    latencies.sort()
    return {"set": name, "file": path.name, "questions": n, "fact_in_reply": facts,
            "fact_in_reply_rate": round(facts / n, 4) if n else 0.0,
            "cites_relevant": cited, "cites_relevant_rate": round(cited / n, 4) if n else 0.0,
            "statuses": dict(statuses), "turn_p50_ms": round(latencies[n // 2], 1) if n else None,
            "misses": misses}


def markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = ["# Knowledge questions through the chat API", "",
             f"`{meta['command']}` at commit {meta['commit']}, local tier, load average "
             f"{meta['load_average']} ({meta['cpus']} CPUs).", "",
             "| set | questions | fact in reply | cites a relevant section | turn p50 ms |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for r in results:
        lines.append(f"| {r['set']} ({r['file']}) | {r['questions']} | {r['fact_in_reply']} "
                     f"({r['fact_in_reply_rate']:.1%}) | {r['cites_relevant']} "
                     f"({r['cites_relevant_rate']:.1%}) | {r['turn_p50_ms']} |")
    for r in results:
        lines += ["", f"## {r['set']}: replies without the fact ({len(r['misses'])})", "",
                  f"Turn statuses: {r['statuses']}", ""]
        lines += [f"- {m['question']} — fact *{m['fact']}* — reply: {m['reply'][:200]!r}"
                  for m in r["misses"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    import subprocess

    import httpx

    from csagent.knowledge.evaluate import SETS, load_questions
    from devstack.evaluation.runner import ApiServer, prepare_environment

    parser = argparse.ArgumentParser(prog="python -m devstack.kb_eval", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=[*SETS, "both"], default="both")
    parser.add_argument("--out", type=Path, default=REPORTS)
    args = parser.parse_args(argv)
    os.environ.setdefault("RATE_LIMIT_MAX_MESSAGES", "1000000")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    prepare_environment()
    sets = SETS if args.set == "both" else {args.set: SETS[args.set]}
    server = ApiServer()
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=60.0) as client:
            # Only sets whose questions carry a fact (the development set has none).
            results = [run_set(client, name, path) for name, path in sets.items()
                       if any(q.fact for q in load_questions(path))]
    finally:
        server.stop()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT, check=False).stdout.strip()
    meta = {"command": "python -m devstack.kb_eval" + (f" --set {args.set}" if args.set != "both" else ""),
            "commit": commit, "cpus": os.cpu_count(),
            "load_average": ", ".join(f"{x:.2f}" for x in os.getloadavg())}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "kb-eval.json").write_text(json.dumps({"meta": meta, "sets": results}, indent=2) + "\n")
    (args.out / "kb-eval.md").write_text(markdown(results, meta))
    for r in results:
        print(f"{r['set']:12} {r['questions']:4} questions  fact in reply {r['fact_in_reply_rate']:.3f}  "
              f"cites a relevant section {r['cites_relevant_rate']:.3f}  statuses {r['statuses']}")
    print(f"written {args.out / 'kb-eval.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
