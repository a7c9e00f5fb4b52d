"""The bench's pure parts on synthetic numbers: percentiles and ratios, the figures each section
derives from its samples, the targets, the Markdown summary, the PNG charts and the leak check.
(The measuring itself needs the running stack and is `make bench`'s business.)"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from devstack.bench import charts, report
from devstack.bench.cold import (
    TOOL_PHASES,
    FunctionCase,
    asgi_request,
    cold_figures,
    core_bytecode_share,
    event_for,
    function_figures,
    function_run,
    outcome,
    tool_case,
)
from devstack.bench.concurrency import Exchange, concurrency_figures, phase_figures
from devstack.bench.dynamodb import item_bytes, session_figures
from devstack.bench.imports import LANGGRAPH, import_figures
from devstack.bench.stats import percentile, ratio, summarise
from devstack.bench.tools import action_latencies, family_of, own_question
from devstack.bench.turns import Sample, figures, meets
from devstack.bench.workload import StoreData, build_scenarios, leaked_identifiers, load_workload

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    header = path.read_bytes()[:24]
    assert header[:8] == PNG_SIGNATURE
    return struct.unpack(">II", header[16:24])


# ------------------------------------------------------------------------------ statistics
def test_percentiles_interpolate_between_ranks():
    # Given the samples 1..101 ms (shuffled)
    values = [float(v) for v in range(101, 0, -1)]
    # Then the median, p95 and the extremes are the interpolated ranks
    assert percentile(values, 50) == 51.0
    assert percentile(values, 95) == 96.0
    assert (percentile(values, 0), percentile(values, 100)) == (1.0, 101.0)
    assert percentile([10.0, 20.0], 50) == 15.0


def test_a_percentile_of_nothing_is_refused():
    # Given no samples, or a percentile outside 0-100, Then there is no figure to give
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_a_ratio_is_rounded_and_absent_when_it_cannot_be_computed():
    # Given two medians, Then their ratio; Given a zero or missing one, Then no ratio at all
    assert ratio(3.0, 2.0) == 1.5
    assert ratio(1.0, 3.0) == 0.33
    assert ratio(1.0, 0) is None and ratio(None, 2.0) is None


def test_a_summary_gives_count_median_p95_and_max():
    # Given five samples (and, below, none), Then n, p50, p95 and max (or only n = 0)
    summary = summarise([5.0, 1.0, 3.0, 2.0, 4.0])
    assert summary == {"n": 5, "p50_ms": 3.0, "p95_ms": 4.8, "max_ms": 5.0}
    assert summarise([]) == {"n": 0}


# ------------------------------------------------------------------------------ sections
def test_turn_figures_keep_the_legacy_keys_and_break_down_by_type():
    # Given single-intent turns of two tools, compound turns and one turn that failed to run
    samples = [Sample("single_predefined_cypher", 100.0, "answered", tasks=1, intended=True),
               Sample("single_knowledge_search", 200.0, "answered", tasks=1, intended=True),
               Sample("compound", 300.0, "answered", tasks=3, intended=True),
               Sample("compound", 500.0, "partial", tasks=2, intended=False),
               Sample("general", 0.0, error="RuntimeError: boom")]
    # When the figures are derived
    legacy, section, ms = figures(samples)
    # Then "single intent" pools the single_* types and compound is compared with it
    assert legacy["single_intent_p50_ms"] == 150.0
    assert legacy["compound_p50_ms"] == 400.0
    assert legacy["compound_over_single_p50"] == 2.67
    assert legacy["compound_tasks"] == 2.5 and legacy["runs"] == 5
    # And the failed turn is counted as an error, not as a latency
    assert section["errors"] == 1 and ms["general"] == []
    assert section["by_type"]["compound"]["as_intended"] == 0.5
    assert section["as_intended"] == 0.6


def test_a_turn_meets_only_what_its_step_names():
    # Given a step expecting a route and a status, Then a turn matching both meets it, one that
    # differs in either does not, and keys the step does not name are not checked
    expect = {"route": "general", "status": "answered"}
    assert meets(expect, route="general", status="answered", tools=[], tasks=0)
    assert not meets(expect, route="general", status="refused", tools=[], tasks=0)
    assert meets({"tool": "text2cypher", "tasks": 1}, route="x", status="partial", tools=["text2cypher"],
                 tasks=1)
    assert not meets({"tasks": 2}, route="x", status="answered", tools=[], tasks=1)


def test_dynamodb_figures_over_a_session():
    # Given 4 turns whose checkpoint writes grow after the second
    by_turn = [{"turn": i + 1, "writes": 4, "turn_state_writes": 3, "checkpoint_bytes": b}
               for i, b in enumerate([1000, 1200, 2000, 2400])]
    figures_ = session_figures(by_turn)
    # Then the maxima, the median and the growth of the second half are reported
    assert figures_["turn_state_writes_per_turn_max"] == 3
    assert figures_["writes_per_turn_with_rate_limit_max"] == 4
    assert figures_["checkpoint_bytes_per_turn_median"] == 1600
    assert figures_["checkpoint_bytes_second_half_over_first"] == 2.0
    assert figures_["checkpoint_bytes_total"] == 6600


def test_item_bytes_follow_dynamodbs_size_rule():
    # Given an item of a string, a number and binary, Then names plus values, binary counted raw
    item = {"PK": {"S": "abc"}, "n": {"N": "12"}, "blob": {"B": b"\x00" * 10}}
    assert item_bytes(item) == (2 + 3) + (1 + 2) + (4 + 10)


def test_import_figures_are_medians_and_ratios_to_langgraph():
    # Given three repetitions of langgraph, the router and a tool handler
    samples = {LANGGRAPH: [400.0, 500.0, 450.0], "router": [600.0, 500.0, 550.0],
               "tools/knowledge_search": [900.0, 800.0, 1000.0]}
    out = import_figures(samples, repeats=3)
    # Then each is its median, compared with langgraph's; the slowest handler is named
    assert out["router_import_ms"] == 550.0 and out["langgraph_import_ms"] == 450.0
    assert out["ratio"] == 1.22
    assert out["slowest_handler"] == "tools/knowledge_search" and out["slowest_handler_ratio"] == 2.0


def test_concurrency_figures_count_errors_and_leaks_of_both_phases():
    # Given a sequential phase with one leak and a concurrent one with one error
    seq = [Exchange("a", "hi", 200, 100.0, 0.1), Exchange("b", "hi", 200, 120.0, 0.2, leaks=["#W0000001"])]
    conc = [Exchange("c", "hi", 200, 300.0, 0.3), Exchange("d", "hi", 500, 50.0, 0.3, error="boom"),
            Exchange("e", "hi", 200, 500.0, 0.5)]
    out = concurrency_figures(phase_figures(seq, 0.5), phase_figures(conc, 0.5), 3, 1, [])
    # Then both are counted, and the errored request is left out of the latencies
    assert out["errors"] == 1 and out["cross_session_leaks"] == 1
    assert out["p50_ms"] == 400.0 and out["turns"] == 3
    assert out["throughput_turns_per_s"] == 6.0 and out["sequential_throughput_turns_per_s"] == 4.0
    assert out["throughput_over_sequential"] == 1.5
    # And Little's law says how long 3 sessions always in flight wait at 6 turns/s
    assert out["queueing_estimate_ms"] == 500.0


def test_action_latencies_split_propose_from_execute():
    # Given the tasks of a confirmation request, its "yes" (one of them failed) and a compound read
    def task(turn_type: str, tool: str, status: str, ms: float) -> dict[str, object]:
        return {"turn_type": turn_type, "tool": tool, "status": status, "latency_ms": ms}

    tasks = [task("confirmation_request", "customer_actions", "success", 5),
             task("confirmation_yes", "customer_actions", "success", 9),
             task("confirmation_yes", "customer_actions", "failed", 1),
             task("compound", "predefined_cypher", "success", 2)]
    # Then proposals and executions are told apart, failures and other tools left out
    assert action_latencies(tasks) == {"customer_actions_propose": [5.0], "customer_actions_execute": [9.0]}


def test_a_template_no_family_lists_is_reported_as_unlisted():
    # Given a new template no family names, Then it is reported, under "unlisted"
    families = family_of(["order_status", "brand_new"], {"orders": ["order_status"]})
    assert families == {"order_status": "orders", "brand_new": "unlisted"}


def test_an_example_question_is_asked_about_the_customers_own_order():
    # Given catalogue examples naming some order / tracking number, Then the customer's own replace them
    assert own_question("Where is order #W1234567?", ["#W7654321"], None, 0) == "Where is order #W7654321?"
    assert own_question("Track 123456789012", [], "999999999999", 0) == "Track 999999999999"


# ------------------------------------------------------------------------------ leaks
def test_another_customers_identifiers_are_leaks_and_ones_own_are_not():
    owners = {"#W0000001": "ann", "#W0000002": "bob", "ann@example.com": "ann", "123456789012": "bob"}
    reply = "Order #W0000001 ships to ann@example.com; tracking 123456789012, and #W0000002 too."
    # Then as ann, only bob's order and tracking number are leaks
    assert leaked_identifiers(reply, "ann", owners) == ["#W0000002", "123456789012"]
    # And another session's customer id in the text is one as well
    assert leaked_identifiers("hello bob_1", "ann", owners, others=["bob_1", "ann"]) == ["bob_1"]


def test_scenarios_give_each_order_scenario_its_own_customer():
    # Given a tiny store of three customers with one pending order each
    users = {c: {"name": {"first_name": c, "last_name": "X"}} for c in ("a", "b", "c")}
    orders = tuple({"order_id": f"#W000000{i}", "user_id": c, "status": "pending",
                    "items": [{"name": "Lamp"}], "payment_history": []} for i, c in enumerate(users))
    workload = {"scenarios": {"status": {"count": 3, "order": {"statuses": ["pending"]},
                                         "steps": [{"type": "s", "texts": ["Where is {o}?"]}]}}}
    # When three scenarios are drawn
    scenarios = build_scenarios(workload, StoreData(users, orders))
    # Then each has a different customer, asking about that customer's own order
    assert sorted(s.customer_id for s in scenarios) == ["a", "b", "c"]
    assert all(s.steps[0].text == f"Where is {s.order_id}?" for s in scenarios)


def test_the_workload_file_has_every_turn_type_the_issue_names():
    # Given the workload file, Then every turn type of issue 7 is in it, over 200 turns in all
    types = {step["type"] for spec in load_workload()["scenarios"].values() for step in spec["steps"]}
    assert {"single_predefined_cypher", "single_knowledge_search", "single_text2cypher",
            "single_customer_actions", "compound", "clarification", "out_of_scope", "general",
            "confirmation_request", "confirmation_yes", "image"} <= types
    full = sum(spec["count"] * len(spec["steps"]) for spec in load_workload()["scenarios"].values())
    assert full >= 200


# ------------------------------------------------------------------------------ report
def test_targets_are_checked_and_a_missing_figure_is_neither_met_nor_missed():
    # Given a report with one target met, one missed and one figure absent
    checks = {(c.section, c.figure): c.met for c in report.check_targets(
        {"turns": {"single_intent_p50_ms": 120.0, "single_intent_p95_ms": 500.0},
         "concurrency": {"errors": 0}})}
    # Then each is marked as such
    assert checks[("turns", "single_intent_p50_ms")] is True
    assert checks[("turns", "single_intent_p95_ms")] is False
    assert checks[("concurrency", "errors")] is True
    assert checks[("tools", "knowledge_search_p50_ms")] is None


def test_the_markdown_table_aligns_numbers_and_shows_missing_cells():
    # Given a text column and a number column with one cell missing
    out = report.table(["name", "ms"], [["a", 1.5], ["b", None]])
    # Then numbers are right-aligned and the missing cell is a dash
    assert out.splitlines() == ["| name | ms |", "| --- | ---: |", "| a | 1.5 |", "| b | — |"]


def test_the_summary_lists_targets_sections_and_charts():
    # Given a report with a measured section, a failed one and the model layer not available
    rep = {"store": "tau-retail", "model_tier": "local", "meta": {"cpus": 2, "duration_s": 12.0},
           "turns": {"single_intent_p50_ms": 180.0, "runs": 10},
           "turn_types": {"by_type": {"general": {"n": 3, "p50_ms": 20.0, "p95_ms": 30.0, "max_ms": 31.0,
                                                  "as_intended": 1.0, "tasks_median": 0}}},
           "fanout": {"error": "RuntimeError: no bridge"},
           "models": {"available": False, "reason": "not there yet"}}
    text = report.markdown(rep, ["reports/bench-latency.png"])
    # Then the missed target is marked, each section says what it measured or why not
    assert "| turns | single_intent_p50_ms | 180 | <= 150 | **no** |" in text
    assert "| general | 3 | 20 | 30 | 31 | 0 | 1 |" in text
    assert "Not measured: RuntimeError: no bridge" in text
    assert "Not available: not there yet" in text
    assert "![bench-latency](bench-latency.png)" in text


def test_figures_of_any_shape_become_tables():
    # Given the model layer's figures: a scalar, per-peer mappings and a two-level mapping
    figures_ = {"calls": 200, "openai": {"median_ms": 3.0, "ratio": 1.5}, "bedrock": {"median_ms": 8.0},
                "local": {"single": {"model_calls": 0}}}
    text = report.nested_tables(figures_, label="peer")
    # Then the scalar is in a figure table and each mapping is a row, nested ones flattened
    assert "| calls | 200 |" in text
    assert "| peer | median_ms | ratio | model_calls |" in text
    assert "| openai | 3 | 1.5 | — |" in text and "| local / single | — | — | 0 |" in text


def test_the_console_line_puts_the_target_beside_the_figure():
    # Given a figure with a target and a table, Then one line, the target beside the figure
    [line] = report.console_lines("turns", {"single_intent_p50_ms": 88.5, "by_type": {}})
    assert line.split() == ["turns", "single_intent_p50_ms", "88.5", "(target", "<=", "150)"]


def test_both_reports_are_written(tmp_path):
    # When a report is written, Then the JSON holds its figures and the Markdown summarises it
    report.write_reports({"turns": {"runs": 1}}, tmp_path / "bench.json", tmp_path / "bench.md")
    assert '"runs": 1' in (tmp_path / "bench.json").read_text()
    assert (tmp_path / "bench.md").read_text().startswith("# Benchmark")


# ------------------------------------------------------------------------------ charts
def test_a_latency_chart_is_a_non_empty_png(tmp_path):
    # Given two turn types with samples and one without
    path = charts.distribution_chart({"general": [10.0, 12.0, 30.0], "compound": [100.0, 150.0, 400.0],
                                      "not measured": []}, tmp_path / "latency.png", title="t")
    # Then a real PNG is drawn
    assert path == tmp_path / "latency.png"
    width, height = png_size(path)
    assert width > 500 and height > 100 and path.stat().st_size > 5_000


def test_a_concurrency_chart_is_a_non_empty_png(tmp_path):
    # Given both phases' latencies and the concurrent timeline, Then a real PNG is drawn
    path = charts.concurrency_chart({"sequential": [100.0, 110.0], "concurrent": [300.0, 450.0, 500.0]},
                                    [(0.3, 300.0), (0.6, 450.0), (0.9, 500.0)], tmp_path / "c.png")
    assert path is not None and png_size(path)[0] > 500 and path.stat().st_size > 5_000


def test_no_samples_draw_no_chart(tmp_path):
    # Given nothing measured, Then no chart and no file
    assert charts.distribution_chart({"a": []}, tmp_path / "x.png", title="t") is None
    assert not (tmp_path / "x.png").exists()


def test_cold_figures_are_medians_of_the_processes_beside_langgraph():
    # Given three fresh processes' figures and three `import langgraph.graph` timings
    def run(total: float, turn: float) -> dict[str, object]:
        return {"total_ms": total, "warm_turn_ms": 100.0, "answered": ["answered", "answered"],
                "phases": {"imports": 400.0, "turn": turn, "other": total - 400.0 - turn}}

    runs = [run(2000.0, 300.0), run(1800.0, 250.0), run(2600.0, 350.0)]
    # When they are summarised
    out = cold_figures(runs, [1000.0, 900.0, 1100.0])
    # Then the first reply is the median total, its ratio to langgraph's median, and each phase a median
    assert out["cold_first_reply_ms"] == 2000.0 and out["langgraph_import_ms"] == 1000.0
    assert out["ratio"] == 2.0 and out["router_import_ms"] == 400.0 and out["warm_turn_ms"] == 100.0
    assert out["breakdown"]["turn"] == {"median_ms": 300.0, "share": 0.15}
    assert out["breakdown"]["model_load"] == {"median_ms": None, "share": None}  # not measured
    assert out["processes"] == 3 and out["answered"] is True
    assert out["core_bytecode_share"] is None  # not measured


def test_the_core_bytecode_share_counts_the_modules_with_an_up_to_date_pyc(tmp_path):
    # Given a package of three modules: one compiled, one compiled and edited since, one never compiled
    import py_compile

    package = tmp_path / "pkg"
    package.mkdir()
    for name in ("fresh", "edited", "never"):
        (package / f"{name}.py").write_text(f"NAME = {name!r}\n")
    for name in ("fresh", "edited"):
        py_compile.compile(str(package / f"{name}.py"), doraise=True)
    (package / "edited.py").write_text("NAME = 'edited at last'\n")
    # When the share is measured
    share = core_bytecode_share(package)
    # Then only the module whose pyc records its source's mtime and size counts
    assert share == 0.33


def test_the_cold_event_is_the_order_status_message_in_its_own_session():
    # Given the router's order-status event
    # When it is addressed to a new session
    event = event_for("bench-cold-1")
    # Then only the session changes
    assert event["rawPath"] == "/v1/sessions/bench-cold-1/messages"
    assert event["pathParameters"]["proxy"] == "v1/sessions/bench-cold-1/messages"
    assert "#W4435622" in event["body"]


def test_the_snapstart_first_reply_is_reported_beside_the_cold_one():
    # Given cold processes and processes that warmed as before a snapshot
    runs = [{"total_ms": 3000.0, "warm_turn_ms": 100.0, "phases": {"turn": 300.0}}]
    restored = [{"total_ms": 600.0, "after_restore_ms": 50.0, "turn_ms": 550.0, "init_ms": 4000.0},
                {"total_ms": 800.0, "after_restore_ms": 70.0, "turn_ms": 730.0, "init_ms": 4200.0}]
    # When they are summarised against langgraph's import
    out = cold_figures(runs, [1000.0], restored)
    # Then the restored first reply and its ratio stand beside the cold one
    assert out["cold_first_reply_ms"] == 3000.0 and out["ratio"] == 3.0
    assert out["snapstart_first_reply_ms"] == 700.0 and out["snapstart_ratio"] == 0.7
    assert out["snapstart_after_restore_ms"] == 60.0 and out["snapstart_init_ms"] == 4100.0


def test_each_tool_function_has_a_cold_case_serving_its_own_event_cold_then_warm():
    # Given the tool functions under functions/tools
    root = Path(__file__).resolve().parents[2]
    shipped = {path.parent.name for path in (root / "functions" / "tools").glob("*/app.py")}
    # Then each has its phases, and its case serves its events/tools/ event twice
    assert set(TOOL_PHASES) == shipped
    case = tool_case("knowledge_search")
    assert case.app == root / "functions" / "tools" / "knowledge_search" / "app.py"
    assert case.events[0] == case.events[1]
    assert case.events[0]["task"]["tool"] == "knowledge_search"
    assert case.phases == ("model_load", "neo4j_first_query")
    # and the local tier's Text2Cypher counts its template fallback as served, the others do not
    assert "fallback" in tool_case("text2cypher").expect and "fallback" not in case.expect


def test_a_handlers_result_in_a_word():
    assert outcome({"statusCode": 202, "body": "{}"}) == "http 202"
    assert outcome({"statusCode": 200, "last_event": "error"}) == "http 200 error"
    assert outcome({"task_id": "t1", "status": "success", "data": {}}) == "success"
    assert outcome({"batchItemFailures": [{"itemIdentifier": "m1"}]}) == "1 failed"
    assert outcome({"results": [{"document_id": "d"}]}) == "results"
    assert outcome(None) == "NoneType"


def test_function_figures_are_medians_per_function_beside_langgraph():
    # Given two tool functions' fresh processes (one opens the embedding model's session first)
    def run(total: float, imports: float, model: float | None = None) -> dict[str, object]:
        phases = {"imports": imports, "neo4j_first_query": 100.0, "invocation": 50.0, "other": 0.0}
        if model is not None:
            phases["model_load"] = model
        return {"total_ms": total, "phases": phases, "warm_ms": [5.0], "outcomes": ["success", "success"],
                "gc_ms": 0.0}

    runs = {"predefined_cypher": [run(500.0, 300.0), run(700.0, 400.0), run(600.0, 350.0)],
            "knowledge_search": [run(900.0, 300.0, 400.0)]}
    # When they are summarised against langgraph's import
    out = function_figures(runs, [1000.0, 1000.0])
    # Then each function's first result is its median total and the ratio to langgraph's median
    assert out["predefined_cypher_first_result_ms"] == 600.0 and out["predefined_cypher_ratio"] == 0.6
    assert out["predefined_cypher_import_ms"] == 350.0 and out["knowledge_search_ratio"] == 0.9
    assert out["functions"]["knowledge_search"] == {
        "first_result_ms": 900.0, "ratio": 0.9, "import_ms": 300.0, "warm_ms": 5.0, "gc_ms": 0.0,
        "processes": 1, "outcome": "success"}
    # and the breakdown has each phase some function went through, in the children's order
    assert list(out["breakdown"]) == ["imports", "model_load", "neo4j_first_query", "invocation", "other"]
    assert out["breakdown"]["model_load"] == {"predefined_cypher": None, "knowledge_search": 400.0}
    assert out["processes"] == 3


def test_the_tool_functions_cold_start_is_a_table_per_function_and_phase():
    # Given the section's figures
    figures = function_figures({"customer_actions": [{"total_ms": 500.0, "warm_ms": [4.0], "gc_ms": 0.0,
                                                      "phases": {"imports": 300.0, "invocation": 200.0},
                                                      "outcomes": ["success"]}]}, [1000.0])
    # When the summary is written
    text = report.markdown({"meta": {}, "cold_tools": figures})
    # Then it has the section, a row per function and a row per phase
    assert "## Cold start of the tool functions" in text
    assert "| customer_actions | 500 | 0.5 | 300 | 4 | 0 | success |" in text
    assert "| imports | 300 |" in text and "| invocation | 200 |" in text
    # and the console prints each function's first result beside the router's figures' way
    assert any("customer_actions_first_result_ms" in line and line.rstrip().endswith("500")
               for line in report.console_lines("cold_tools", figures))


def test_an_asgi_request_is_served_to_the_end_of_its_stream():
    # Given an ASGI app streaming server-sent events up to `done`
    import asyncio

    async def app(scope, receive, send):
        request = await receive()
        assert scope["path"] == "/v1/x" and request["body"] == b"{}"
        await send({"type": "http.response.start", "status": 200, "headers": []})
        progress = b"event: progress\ndata: {}\n\n"
        await send({"type": "http.response.body", "body": progress, "more_body": True})
        await send({"type": "http.response.body", "body": b"event: done\ndata: {}\n\n"})

    # When a request is served
    served = asyncio.run(asgi_request(app, {"method": "POST", "path": "/v1/x", "headers": {}, "body": "{}"}))
    # Then its status and the stream's last event are reported
    assert served == {"statusCode": 200, "last_event": "done"} and outcome(served) == "http 200 done"


def test_before_and_after_figures_are_each_rounds_median():
    from devstack.bench.cold_functions import round_medians

    # Given two rounds of three processes each, in the order they ran
    runs = [{"total_ms": v} for v in (300.0, 100.0, 200.0, 900.0, 700.0, 800.0)]
    # Then each round has its own median
    assert round_medians(runs, 3) == [200.0, 800.0]


def _handler_module(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "app.py"
    path.write_text("import gc\n\ndef handler(event, context):\n" + body)
    return path


def test_a_function_run_times_a_fresh_process_and_counts_its_collections(tmp_path):
    # Given a handler whose first invocation runs one full collection
    app = _handler_module(tmp_path, "    gc.collect()\n    return {'status': 'success'}\n")
    # When a fresh process serves it twice
    figures = function_run(FunctionCase(app, ({}, {})))
    # Then the figures have its import, its first invocation, the warm one and the collection
    assert set(figures["phases"]) == {"imports", "invocation", "other"}
    assert figures["outcomes"] == ["success", "success"] and len(figures["warm_ms"]) == 1
    assert figures["gc_collections"] >= 1


def test_a_function_run_whose_answer_is_not_the_expected_one_fails(tmp_path):
    app = _handler_module(tmp_path, "    return {'status': 'failed'}\n")
    with pytest.raises(RuntimeError, match="answered"):
        function_run(FunctionCase(app, ({},)))


def test_a_run_of_some_sections_keeps_the_others_from_the_previous_report(tmp_path):
    # Given a full report written by an earlier run
    previous = {"meta": {"commit": "abc1234", "started_at": "2026-12-01T00:00:00+00:00"},
                "cold": {"ratio": 4.0}, "tools": {"p50_ms": 9.0},
                "samples": {"cold": {"cold_first_reply": [1.0]}, "tools": {"x": [2.0]}}}
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(previous))
    # When a `--only cold` run carries over what it did not measure
    new = {"meta": {"commit": "def5678"}, "cold": {"ratio": 3.0}}
    samples = {"cold": {"cold_first_reply": [0.5]}}
    kept = report.carry_over(new, samples, path)
    # Then its own section stands, the other is the earlier run's, and the report says so
    assert kept == ["tools"]
    assert new["cold"] == {"ratio": 3.0} and new["tools"] == {"p50_ms": 9.0}
    assert samples == {"cold": {"cold_first_reply": [0.5]}, "tools": {"x": [2.0]}}
    assert "Sections tools are from an earlier run (commit abc1234" in report.markdown(new)


def test_without_a_previous_report_nothing_is_carried_over(tmp_path):
    new = {"meta": {}, "cold": {"ratio": 3.0}}
    assert report.carry_over(new, {}, tmp_path / "missing.json") == []
    assert "earlier run" not in report.markdown(new)
