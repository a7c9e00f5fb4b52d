"""Composition root: builds the real adapters from settings, lazily and once per process.

Nothing here runs at import. Handlers call these getters; tests clear the caches
(`reset()`) after changing the environment.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any

from csagent.config import Deployment, ModelConfig, Neo4jConfig, get_settings

if TYPE_CHECKING:
    from csagent.adapters.neo4j_graph import Neo4jGraph
    from csagent.adapters.product_catalogue import CatalogueGeneration
    from csagent.adapters.s3_kb_uploads import S3KnowledgeUploads
    from csagent.adapters.stepfunctions_dispatch import WaveDispatcher
    from csagent.approvals.service import ApprovalService
    from csagent.caching import IdentityCache
    from csagent.graph.context import GraphDeps
    from csagent.handoff.service import HandoffService
    from csagent.knowledge.catalogue import CatalogueSync
    from csagent.knowledge.service import KnowledgeBase
    from csagent.service.conversation import ConversationService
    from csagent.tools.caches import ToolCaches
    from csagent.tools.cypher_catalogue import TemplateMatcher


#: Every AWS client this process built, for `reconnect` (a SnapStart restore closes their pools).
_aws_clients: list[Any] = []


def _kept(client: Any) -> Any:
    _aws_clients.append(client)
    return client


def _boto_kwargs(settings: Deployment) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"region_name": settings.aws_region}
    if settings.aws_endpoint_url:
        kwargs["endpoint_url"] = settings.aws_endpoint_url
    return kwargs


@lru_cache(maxsize=1)
def boto_session() -> Any:
    """The one boto3 session every AWS client of the process is made from. Clients of one session
    share its loaded endpoint rules and service models: the checkpointer's DynamoDB and S3
    clients, made from a session of their own each, used to load them again (about 0.2-0.4 s of
    a fresh process's first reply)."""
    import boto3

    return boto3.Session(region_name=get_settings.of(Deployment).aws_region)


def _neo4j_driver() -> Any:
    from csagent.adapters.neo4j_graph import neo4j_driver

    s = get_settings.of(Neo4jConfig)  # a tool function reads only the parts it needs
    user, password = s.neo4j_user, s.neo4j_password
    if s.neo4j_secret_arn:
        from aws_lambda_powertools.utilities import parameters

        secret = parameters.get_secret(s.neo4j_secret_arn, transform="json", max_age=s.secret_max_age_s)
        user, password = secret.get("username", user), secret["password"]
    return neo4j_driver(s.neo4j_uri, user, password)


@lru_cache(maxsize=1)
def graph_store() -> Neo4jGraph:
    from csagent.adapters.neo4j_graph import Neo4jGraph

    s = get_settings.of(Neo4jConfig)
    return Neo4jGraph(_neo4j_driver(), s.neo4j_database, s.neo4j_query_timeout_s)


@lru_cache(maxsize=1)
def tool_caches() -> ToolCaches:
    """What the tools keep between calls about `graph_store()` (its vocabulary, value hints) read
    through `get_embedder()`: every tool context of the process carries this one. `reset()` drops
    it with the store; a catalogue change clears it (`catalogue_sync`). Its template matchers are
    `template_matchers()`, the process's."""
    from csagent.tools.caches import ToolCaches

    return ToolCaches(matchers=template_matchers())


@lru_cache(maxsize=1)
def template_matchers() -> IdentityCache[TemplateMatcher]:
    """The predefined-Cypher template matchers of the process (`cypher_catalogue.matcher_for`),
    shared by the tools (`tool_caches()`), the understanding path and warm-up, so the catalogue's
    examples are loaded and its model trained once. They depend only on the process-wide
    embedder and the shipped templates, not on the store or settings, so `reset()` keeps them."""
    from csagent.caching import IdentityCache

    return IdentityCache()


@lru_cache(maxsize=1)
def dynamodb_client() -> Any:
    return _kept(boto_session().client("dynamodb", **_boto_kwargs(get_settings.of(Deployment))))


@lru_cache(maxsize=1)
def sqs_client() -> Any:
    return _kept(boto_session().client("sqs", **_boto_kwargs(get_settings.of(Deployment))))


@lru_cache(maxsize=1)
def handoff_service() -> HandoffService:
    from csagent.handoff.repository import DynamoDBHandoffs, SqsHandoffPublisher
    from csagent.handoff.service import HandoffService

    s = get_settings()
    # Without HANDOFF_QUEUE_URL (the local stack) the queue is looked up by name on the first
    # handoff, not while the graph is built: most turns hand nothing over.
    def queue_url() -> str:
        return str(sqs_client().get_queue_url(QueueName=s.handoff_queue_name)["QueueUrl"])

    url = s.handoff_queue_url or queue_url
    return HandoffService(DynamoDBHandoffs(dynamodb_client(), s.handoffs_table, s.sessions_table),
                          SqsHandoffPublisher(sqs_client(), url), max_messages=s.handoff_max_messages)


@lru_cache(maxsize=1)
def approval_service() -> ApprovalService:
    from csagent.approvals.repository import DynamoDBApprovals
    from csagent.approvals.service import ApprovalService

    s = get_settings()
    return ApprovalService(DynamoDBApprovals(dynamodb_client(), s.handoffs_table), ttl_s=s.approval_ttl_s)


@lru_cache(maxsize=1)
def checkpointer() -> Any:
    from langgraph_checkpoint_aws import DynamoDBSaver

    s = get_settings()
    offload = None
    if s.checkpoint_bucket:
        offload = {"bucket_name": s.checkpoint_bucket, "endpoint_url": s.aws_endpoint_url}
    saver = DynamoDBSaver(table_name=s.checkpoints_table, session=boto_session(), region_name=s.aws_region,
                          endpoint_url=s.aws_endpoint_url, ttl_seconds=s.checkpoint_ttl_seconds,
                          enable_checkpoint_compression=s.checkpoint_compression,
                          s3_offload_config=offload)  # type: ignore[arg-type]
    _kept(getattr(saver, "client", None))
    return saver


@lru_cache(maxsize=1)
def wave_dispatcher() -> WaveDispatcher | None:
    """How a wave of ready tasks runs: None = in-process (one Send per task); otherwise one
    synchronous execution of the dispatch state machine per wave."""
    s = get_settings()
    if s.dispatch_mode != "stepfunctions":
        return None
    if not s.state_machine_arn:  # STAGE=local only (the settings refuse it elsewhere)
        from devstack.sfn_bridge import LocalStepFunctionsDispatcher  # dev tooling, never deployed

        return LocalStepFunctionsDispatcher.for_process()
    from botocore.config import Config

    from csagent.adapters.stepfunctions_dispatch import StepFunctionsDispatcher

    # No SDK retries: a retried StartSyncExecution would run the tools twice (the healer retries).
    config = Config(connect_timeout=2, read_timeout=s.dispatch_timeout_s, retries={"total_max_attempts": 1})
    client = boto_session().client("stepfunctions", config=config, **_boto_kwargs(s))
    return StepFunctionsDispatcher(_kept(client), s.state_machine_arn)


@lru_cache(maxsize=1)
def compiled_graph() -> Any:
    from csagent.graph.builder import build_graph

    return build_graph().compile(checkpointer=checkpointer())


@lru_cache(maxsize=1)
def configure_text2cypher() -> None:
    """Give the Text2Cypher tool its model and limits from the settings (once per process):
    the router and the Text2Cypher Lambda both call this."""
    from csagent.tools import text2cypher

    s = get_settings.of(ModelConfig)
    from csagent.models.gateway import role_chain
    from csagent.models.roles import Role

    text2cypher.configure(role_chain(s, Role.TEXT2CYPHER), query_timeout_s=s.text2cypher_timeout_s,
                          max_rows=s.text2cypher_max_rows)


@lru_cache(maxsize=1)
def graph_deps() -> GraphDeps:
    from csagent.adapters.product_catalogue import ProductCatalogue
    from csagent.graph.context import GraphDeps
    from csagent.guardrails.injection import screen
    from csagent.guardrails.output import guard_output
    from csagent.guardrails.scope import check_scope
    from csagent.handoff.triggers import TriggerPolicy
    from csagent.knowledge.scope import with_uploaded_knowledge
    from csagent.models.gateway import get_gateway
    from csagent.models.roles import Role
    from csagent.nlp.embeddings import get_embedder
    from csagent.resilience.bounds import get_bounds
    from csagent.resilience.faults import faulty_tool, get_fault_plan, wrap_graph_store
    from csagent.tools.context import ToolContext
    from csagent.tools.registry import default_tools
    from csagent.understanding_local import LocalUnderstanding

    s = get_settings()
    plan = get_fault_plan()
    store = wrap_graph_store(graph_store(), plan)
    embedder = get_embedder()
    caches = tool_caches()
    configure_text2cypher()
    from csagent.adapters.ocr_tesseract import TesseractReader

    models = get_gateway()
    image_reader: Any = TesseractReader()
    if s.image_reader == "model":  # the settings refuse "bedrock": label photos carry addresses
        from csagent.models.image import ModelImageReader

        image_reader = ModelImageReader(models, fallback=image_reader)
    generation = catalogue_generation()
    catalogue = ProductCatalogue(store, generation=generation)
    from csagent.adapters.customer_view import CatalogueVariants, CustomerViews

    understanding: Any = LocalUnderstanding(catalogue=catalogue, customer_view=CustomerViews(store),
                                            variants=CatalogueVariants(store, generation=generation))
    if models.has_model(Role.ROUTER):
        from csagent.understanding_model import ModelUnderstanding

        understanding = ModelUnderstanding(models, understanding, catalogue=catalogue)
    return GraphDeps(
        understand=understanding.understand,
        models=models,
        documents_know=partial(caches.asked.documents_know, embedder),
        tools={name: faulty_tool(fn, plan, name) for name, fn in default_tools().items()},
        make_tool_context=lambda customer_id: ToolContext(graph=store, customer_id=customer_id,
                                                          embedder=embedder, caches=caches),
        image_reader=image_reader,
        dispatcher=wave_dispatcher(),
        bounds=get_bounds(),
        screen=screen,
        scope_check=with_uploaded_knowledge(check_scope, graph_store(), embedder),
        output_guard=guard_output,
        fault_plan=plan,
        handoffs=handoff_service(),
        handoff_policy=TriggerPolicy(repeated_failures=s.handoff_repeated_failures,
                                     high_value_amount=s.handoff_high_value_amount),
        approvals=approval_service(),
        max_tasks=s.max_tasks_per_turn,
        max_message_chars=s.max_message_chars,
    )


@lru_cache(maxsize=1)
def conversation_service() -> ConversationService:
    from csagent.adapters.sessions_dynamodb import DynamoDBSessions
    from csagent.service.conversation import ConversationService

    s = get_settings()
    deps = graph_deps()
    from csagent.guardrails.ratelimit import rate_limiter_from_settings

    return ConversationService(compiled_graph(), DynamoDBSessions(dynamodb_client(), s.sessions_table), deps,
                               handoffs=deps.handoffs, approvals=deps.approvals,
                               rate_limiter=rate_limiter_from_settings(dynamodb_client()))


def text2cypher_debug(question: str, model: str | None = None) -> dict[str, Any]:
    """Every step of a Text2Cypher run, for the agent/admin debug endpoint (the TEXT2CYPHER
    chain through the model gateway, or `model` instead of it)."""
    from csagent.nlp.embeddings import get_embedder
    from csagent.tools import text2cypher

    graph_deps()  # configures the tool from settings
    cfg = text2cypher.current_config()
    chat = text2cypher.model_for(model or cfg.model, question)
    return text2cypher.explain(question, graph=graph_store(), model=chat, embedder=get_embedder(),
                               timeout_s=cfg.query_timeout_s, max_rows=cfg.max_rows, caches=tool_caches())


@lru_cache(maxsize=1)
def knowledge_base() -> KnowledgeBase:
    """The knowledge-base service (admin API, ingest function) on Neo4j and the embedder."""
    from csagent.adapters.neo4j_knowledge import Neo4jKnowledgeIndex
    from csagent.knowledge.service import KnowledgeBase
    from csagent.nlp.embeddings import get_embedder

    s = get_settings()
    return KnowledgeBase(Neo4jKnowledgeIndex(_neo4j_driver(), s.neo4j_database), get_embedder(),
                         max_bytes=s.kb_max_upload_bytes)


@lru_cache(maxsize=1)
def catalogue_sync() -> CatalogueSync:
    """Catalogue changes (the admin API), with the knowledge links and this process's catalogue
    caches following them (the understanding's names and variants, the tools' vocabulary and
    value hints)."""
    from csagent.adapters.neo4j_catalogue import Neo4jCatalogueWriter
    from csagent.knowledge.catalogue import CatalogueSync

    return CatalogueSync(Neo4jCatalogueWriter(graph_store()), knowledge_base(),
                         on_change=[catalogue_generation().changed, tool_caches().catalogue_changed])


@lru_cache(maxsize=1)
def catalogue_generation() -> CatalogueGeneration:
    """The catalogue changes made in this process, shared by the understanding's caches of
    `graph_store()`'s catalogue (product names, variants): `catalogue_sync` moves it on."""
    from csagent.adapters.product_catalogue import CatalogueGeneration

    return CatalogueGeneration()


@lru_cache(maxsize=1)
def s3_client() -> Any:
    return _kept(boto_session().client("s3", **_boto_kwargs(get_settings())))


@lru_cache(maxsize=1)
def kb_uploads() -> S3KnowledgeUploads:
    """The knowledge bucket's uploads (presigned POSTs; the ingest function's reads)."""
    from csagent.adapters.s3_kb_uploads import S3KnowledgeUploads

    return S3KnowledgeUploads(s3_client(), get_settings().kb_bucket)


def presign_kb_upload(filename: str, document_id: str | None, title: str | None) -> dict[str, Any]:
    """A presigned POST for one knowledge document (the admin API's `POST /v1/kb/uploads`)."""
    from csagent.knowledge.uploads import presign_upload

    s = get_settings()
    return presign_upload(kb_uploads(), s.kb_upload_prefix, filename, document_id=document_id, title=title,
                          max_bytes=s.kb_max_object_bytes, expires_in=s.kb_presign_ttl_s).as_dict()


def ingest_kb_object(key: str) -> dict[str, Any]:
    """Ingest one uploaded object of the knowledge bucket (the ingest function's call)."""
    from csagent.knowledge.uploads import ingest_object

    s = get_settings()
    return ingest_object(knowledge_base(), kb_uploads(), s.kb_upload_prefix, key,
                         max_bytes=s.kb_max_object_bytes)


def health() -> dict[str, bool]:
    """Reachability of each dependency the router needs (never raises)."""
    from botocore.exceptions import BotoCoreError, ClientError

    s = get_settings()
    checks = {"neo4j": graph_store().ping()}
    try:
        dynamodb_client().describe_table(TableName=s.checkpoints_table)
        checks["dynamodb"] = True
    except (ClientError, BotoCoreError):  # refused, missing or unreachable: reported, never raised
        checks["dynamodb"] = False
    return checks


def reconnect() -> None:
    """After a SnapStart restore the snapshot's sockets are dead: every AWS client this process
    built drops its connection pool (its next call opens a new connection), the Neo4j store
    gets a new driver, and one query opens its first connection. What was never built is left
    alone."""
    for client in _aws_clients:
        if client is not None and hasattr(client, "close"):
            client.close()
    if graph_store.cache_info().currsize:
        from csagent.adapters.neo4j_graph import neo4j_driver

        neo4j_driver.cache_clear()
        store = graph_store()
        store.reconnect(_neo4j_driver())
        store.ping()


def reset() -> None:
    """Forget every cached client and setting (tests, after changing the environment)."""
    from csagent.guardrails.ratelimit import get_rate_limit_settings
    from csagent.models.gateway import get_gateway

    get_rate_limit_settings.cache_clear()
    get_gateway.cache_clear()
    for factory in (configure_text2cypher, graph_store, tool_caches, catalogue_generation, boto_session,
                    dynamodb_client, sqs_client, handoff_service, approval_service, checkpointer,
                    wave_dispatcher, compiled_graph, graph_deps, conversation_service, knowledge_base,
                    s3_client, kb_uploads, catalogue_sync, get_settings):
        factory.cache_clear()
    _aws_clients.clear()
