"""The evaluation suite (issue 7): labelled conversations on the tau-retail store, run through
the real HTTP API against the local stack, scored on resolution, safety and cost.

    python -m devstack.evaluation [--slice] [--trials K] [--model SPEC] [--category C] [--case ID]
    python -m devstack.evaluation --check

Modules: `cases` (schema, loader, coverage), `runner` (the API in-process, the cases over HTTP,
the run), `checks` (expectations, leaks, end state), `store` (reset and per-customer restore),
`metrics` (figures, thresholds), `report` (eval.json, eval.md). How to write a case:
`infra/eval/README.md`.
"""
