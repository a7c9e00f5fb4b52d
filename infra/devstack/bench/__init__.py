"""`make bench`: performance figures on the local stack with the tau-retail store.

    python -m devstack.bench            # the full run (about 4-6 minutes on 2 cores)
    python -m devstack.bench --quick    # a smoke run of every section (about a minute)

Writes `reports/bench.json` (every figure and the raw samples), `reports/bench.md` (the
summary) and PNG charts of the latency distributions in `reports/`. Targets from the issues are
printed beside the figures; nothing asserts: a benchmark reports, tests decide. The machines
are noisy, so figures are medians and percentiles, and comparisons are ratios within one run.

One module per concern:

    workload     what is sent (workload.yaml: turn types, messages, template families) and the
                 leak check's identifiers, drawn from the tau-retail data
    turns        turn latency by turn type (in-process ConversationService)
    concurrency  concurrent sessions over HTTP against a uvicorn subprocess (`make serve`)
    imports      cold import of every Lambda handler beside `import langgraph.graph`
    cold         the first reply of a fresh process (router handler, an API Gateway event) beside
                 `import langgraph.graph`, with its breakdown (`--only cold` runs it alone)
    dynamodb     writes and checkpoint bytes per turn over one long session
    tools        Neo4j tool latencies (template families, knowledge search, Text2Cypher, actions)
    fanout       Step Functions fan-out (moto bridge) vs in-process, per wave and per turn
    models       the model layer's figures from devstack.bench_models (issue 8), when present
    stats, report, charts   pure: percentiles and ratios, targets / JSON / Markdown, PNG charts

The run writes to the store (the confirmation turns cancel orders, approvals refund them):
re-seed tau-retail afterwards (`make bench` does).
"""
