"""Doing before the first request what every request needs, and Lambda SnapStart's hooks.

`warm_fixed_texts()` loads (or, without the layer's arrays, computes) every fixed text set a
turn compares against and the intent model: the build step (`csagent.nlp.fixed_vectors`) runs it
to write the arrays. `warm_router()` and `warm_tool()` do all a function's first request would do
lazily short of talking to a customer's data: the embedding model's session, those arrays, the
compiled graph and its services, the AWS clients and the Neo4j driver (built, not connected).

With SnapStart (template.yaml: the router and the tool functions), Lambda runs the init phase
once per published version, calls the before-snapshot hooks and snapshots the memory; each new
container resumes from it and runs the after-restore hooks. `register_snapstart_hooks(warm)`
makes `warm` the before-snapshot hook and `after_restore` the after-restore one, when the runtime
has the hooks' package (`snapshot_restore_py`, part of Lambda's Python runtime); elsewhere
(local runs, tests, `make serve`) it does nothing and everything stays lazy. Registering is no
I/O: importing a handler still connects to nothing.
"""

from __future__ import annotations

import importlib
import logging
import random
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

#: What the router's turns import on first use (deferred so that importing the handler stays
#: cheap): the actions and their policy, grounding, the clause splitter and the entity extractors,
#: the knowledge tool, the function's settings model, the ASGI thread pool's and LangChain's
#: tracing modules the first request loads, and SymSpell (the spelling corrector's index of the
#: store's words, built for the first message with a word no list knows). `warm_router` imports
#: them, so that a container restored from the snapshot does not
#: (tests/integration/test_warm_start.py runs turns after a warm-up and finds nothing new).
TURN_MODULES = (
    "csagent.actions", "csagent.actions.catalogue", "csagent.actions.execute", "csagent.actions.idempotency",
    "csagent.actions.kinds", "csagent.grounding.facts", "csagent.grounding.frame",
    "csagent.grounding.resolve", "csagent.grounding.status", "csagent.nlp.clauses",
    "csagent.nlp.entities.extract", "csagent.nlp.entities.questions",
    "csagent.tools.customer_actions", "csagent.tools.knowledge_search", "csagent.env_vars",
    "anyio._backends._asyncio", "langchain_core.tracers.context", "langchain_core.tracers.run_collector",
    "langchain_core.tracers.stdout", "symspellpy",
)


def warm_fixed_texts() -> None:
    """The embedding model's session, the intent examples and model, the injection and scope
    anchors and the Cypher catalogue's examples, on the process-wide embedder; the spelling
    corrector's word lists; the trained readers (consent, cancellation reason, staff process,
    purchase and product question: `nlp.text_models`), from the arrays `fixed_vectors.build`
    ships; the questions asked of the documents (`knowledge.asked`, for the knowledge tool run
    in-process). The build runs this to write those arrays."""
    from csagent import runtime
    from csagent.guardrails.injection import get_screen
    from csagent.guardrails.scope import get_scope_checker
    from csagent.nlp import spelling
    from csagent.nlp.consent import get_consent_reader
    from csagent.nlp.embeddings import get_embedder
    from csagent.nlp.intents import get_intent_classifier
    from csagent.nlp.product_question import get_product_question_reader
    from csagent.nlp.purchase_question import get_purchase_question_reader
    from csagent.nlp.reasons import get_reason_reader
    from csagent.nlp.staff_process import get_staff_reader
    from csagent.tools.cypher_catalogue import matcher_for

    embedder = get_embedder()
    embedder.load()
    get_intent_classifier().warm_up()
    get_screen().references()
    get_scope_checker().warm_up()
    matcher_for(embedder, matchers=runtime.template_matchers()).warm_up()
    spelling.warm_up()
    for reader in (get_consent_reader, get_reason_reader, get_staff_reader, get_purchase_question_reader,
                   get_product_question_reader):
        reader().warm_up()
    runtime.tool_caches().asked.on(embedder)


def warm_router() -> None:
    """Everything the router's first turn builds: the fixed texts, then the conversation service
    (its graph compiled with the DynamoDB checkpointer, the tools, the AWS clients, the Neo4j
    driver), and the modules a turn imports on first use (`TURN_MODULES`). No query and no call
    is made."""
    from csagent import runtime

    warm_fixed_texts()
    runtime.conversation_service()
    for module in TURN_MODULES:
        importlib.import_module(module)


def warm_tool(prepare: Callable[[], None] | None = None) -> None:
    """What a tool function's first call builds: the embedding model, the catalogue's vectors,
    the Neo4j driver, and the tool's own configuration (`prepare`)."""
    from csagent import runtime
    from csagent.nlp.embeddings import get_embedder
    from csagent.tools.cypher_catalogue import matcher_for

    embedder = get_embedder()
    embedder.load()
    matcher_for(embedder, matchers=runtime.template_matchers()).warm_up()
    runtime.graph_store()
    if prepare is not None:
        prepare()


def after_restore() -> None:
    """In a container resumed from the snapshot: draw new random seeds (every copy of the
    snapshot would otherwise share the jitter of its retries) and re-establish the connections
    (`runtime.reconnect`)."""
    from csagent import runtime
    from csagent.resilience.backoff import reseed

    random.seed()
    reseed()
    runtime.reconnect()


def register_snapstart_hooks(warm: Callable[[], None], env: str | type[Any] | None = None) -> bool:
    """`warm` before the snapshot, `after_restore` after each restore; False (and nothing
    registered) when the runtime has no SnapStart hooks. `env`: the function's configuration
    model (or its name in `csagent.env_vars`), validated before warming, so that a bad environment fails the
    snapshot with the same message as a cold start."""
    try:
        from snapshot_restore_py import register_after_restore, register_before_snapshot
    except ImportError:
        return False

    def before_snapshot() -> None:
        if env is not None:
            from csagent.env_init import load_environment

            load_environment(env)
        logger.info("SnapStart: warming before the snapshot")
        warm()

    register_before_snapshot(before_snapshot)
    register_after_restore(after_restore)
    return True
