"""The Step Functions fan-out overhead: the same wave of tasks run in-process (as the graph's
Send branches run them: the registry's tools, concurrently) and through the dispatch state
machine on the local bridge (`devstack.sfn_bridge`: moto's ASL interpreter, the real tool
Lambda handlers in-process, StartSyncExecution emulated), plus a whole compound turn in each
`DISPATCH_MODE`.

What the overhead includes locally and AWS would not have: moto re-parses the ASL on every
execution (about 50 ms) and the emulated StartSyncExecution polls every 10 ms. What AWS has and
this does not: the network hops and each tool Lambda's own cold start. Read the ratio as the
orchestration's cost on this machine, not as an AWS latency.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from typing import Any

from devstack.bench.stats import group_summaries, percentile, ratio, timed

COMPOUND_TEXT = "Check order {o}, tell me the warranty of the {p}, and what is your return policy?"


def wave_tasks(order_id: str, product: str, size: int) -> list[Any]:
    """A wave of `size` independent tasks (1-3): the order lookup, the product's warranty, the
    return policy - what a three-part compound message plans."""
    from csagent.domain.models import Task

    tasks = [Task(task_id="t1", task_type="order_status", tool="predefined_cypher",
                  args={"template_id": "order_overview", "params": {"order_id": order_id}}),
             Task(task_id="t2", task_type="warranty", tool="knowledge_search",
                  args={"question": f"What is the warranty on the {product}?"}),
             Task(task_id="t3", task_type="policy", tool="knowledge_search",
                  args={"question": "What is your return policy?"})]
    return tasks[:size]


def in_process_wave(tasks: Sequence[Any], customer_id: str) -> list[Any]:
    """The wave as the in-process graph runs it: each task's tool concurrently, one thread each."""
    from csagent import runtime

    deps = runtime.graph_deps()
    ctx = deps.make_tool_context(customer_id)
    with ThreadPoolExecutor(max_workers=len(tasks)) as pool:
        return list(pool.map(lambda t: deps.tools[t.tool](t, ctx), tasks))


def _alternate(runs: int, first: Callable[[], Any], second: Callable[[], Any]
               ) -> tuple[list[float], list[float], int]:
    """Both callables `runs` times, alternating; (first's ms, second's ms, failed results)."""
    a: list[float] = []
    b: list[float] = []
    failed = 0
    for _ in range(runs):
        for fn, out in ((first, a), (second, b)):
            results, ms = timed(fn)
            out.append(ms)
            failed += sum(str(getattr(r, "status", "")) == "failed" for r in results)
    return a, b, failed


@contextmanager
def dispatch_mode(mode: str) -> Iterator[None]:
    """`DISPATCH_MODE=mode` for the runtime built inside; the previous value and runtime after."""
    from csagent import runtime

    saved = os.environ.get("DISPATCH_MODE")
    os.environ["DISPATCH_MODE"] = mode
    runtime.reset()
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("DISPATCH_MODE", None)
        else:
            os.environ["DISPATCH_MODE"] = saved
        runtime.reset()


def compound_turns(customer_id: str, text: str, runs: int) -> list[float]:
    """`runs` compound turns (fresh sessions) with the current runtime, after one untimed."""
    from csagent import runtime
    from csagent.domain.models import Principal
    from csagent.service.schemas import MessageIn

    service = runtime.conversation_service()
    principal = Principal(subject=customer_id, customer_id=customer_id)
    out = []
    for i in range(runs + 1):
        session = f"bench-fanout-{uuid.uuid4().hex[:10]}"
        _, ms = timed(partial(service.handle_message, principal, session, MessageIn(text=text)))
        if i:
            out.append(ms)
    return out


def bench_fanout(customer_id: str, order_id: str, product: str, runs: int
                 ) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """(the `fanout` section, samples per path for the chart)."""
    from devstack.sfn_bridge import LocalStepFunctionsDispatcher

    dispatcher = LocalStepFunctionsDispatcher.for_process()
    waves: dict[str, list[float]] = {}
    failed = 0
    for size in (1, 3):
        tasks = wave_tasks(order_id, product, size)
        session = f"bench-fanout-{uuid.uuid4().hex[:8]}"

        def local(t: Sequence[Any] = tasks) -> list[Any]:
            return in_process_wave(t, customer_id)

        def sfn(t: Sequence[Any] = tasks, s: str = session) -> list[Any]:
            return dispatcher.run_wave(t, customer_id, s)

        local()
        sfn()  # deploys nothing new, but loads each tool handler once: not a figure
        a, b, bad = _alternate(runs, local, sfn)
        waves[f"{size} task(s), in-process"], waves[f"{size} task(s), step functions"] = a, b
        failed += bad
    text = COMPOUND_TEXT.format(o=order_id, p=product)
    turns: dict[str, list[float]] = {}
    for mode in ("inprocess", "stepfunctions"):
        with dispatch_mode(mode):
            turns[f"compound turn, {mode}"] = compound_turns(customer_id, text, max(3, runs // 2))

    def p50(values: list[float]) -> float:
        return percentile(values, 50)

    one_in, one_sfn = p50(waves["1 task(s), in-process"]), p50(waves["1 task(s), step functions"])
    three_in, three_sfn = p50(waves["3 task(s), in-process"]), p50(waves["3 task(s), step functions"])
    turn_in, turn_sfn = p50(turns["compound turn, inprocess"]), p50(turns["compound turn, stepfunctions"])
    section = {
        "wave_1_task_overhead_p50_ms": round(one_sfn - one_in, 1),
        "wave_1_task_ratio": ratio(one_sfn, one_in),
        "wave_3_tasks_overhead_p50_ms": round(three_sfn - three_in, 1),
        "wave_3_tasks_ratio": ratio(three_sfn, three_in),
        "compound_turn_overhead_p50_ms": round(turn_sfn - turn_in, 1),
        "compound_turn_ratio": ratio(turn_sfn, turn_in),
        "failed_task_results": failed,
        "runs": runs,
        "waves": group_summaries(waves),
        "turns": group_summaries(turns),
        "notes": ["locally the bridge adds moto's ASL re-parse per execution (~50 ms) and 10 ms "
                  "polling; AWS adds network hops and tool-Lambda cold starts instead"],
    }
    return section, {**waves, **turns}
