"""The knowledge ingest Lambda end to end on moto's S3 and the real Neo4j: an admin asks the API
for a presigned upload, posts the file to (moto's) S3 with it, and the bucket's Object Created
event - events/kb_ingest/object_created.json, what EventBridge delivers in AWS - runs
functions/kb_ingest/app.py, which makes the document searchable."""

from __future__ import annotations

import copy
import importlib.util
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
EVENT = ROOT / "events" / "kb_ingest" / "object_created.json"
ADMIN = {"Authorization": "Bearer dev-admin:e2e"}
DOC_ID = "e2e-care-guide"
GUIDE = b"""<html><head><title>Leather care guide</title><style>p{}</style></head><body>
<h1>Leather care guide</h1>
<h2>Cleaning</h2><p>Wipe leather boots with a damp cloth and let them dry away from radiators.</p>
<h2>Conditioning plans</h2>
<table><tr><th>Plan</th><th>Interval</th></tr><tr><td>Daily wear</td><td>every 3 months</td></tr>
<tr><td>Occasional wear</td><td>every 6 months</td></tr></table>
</body></html>"""


class Context:
    function_name = "KnowledgeIngestFunction"
    memory_limit_in_mb = 1769
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:KnowledgeIngestFunction"
    aws_request_id = "e2e-kb-ingest"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 300_000


@pytest.fixture
def ingest(tau_store: Any, moto_endpoint: str) -> Iterator[Callable[[dict[str, Any]], dict[str, Any]]]:
    from csagent import runtime

    runtime.reset()
    path = ROOT / "functions" / "kb_ingest" / "app.py"
    spec = importlib.util.spec_from_file_location("kb_ingest_app_e2e", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield lambda event: module.handler(event, Context())
    if runtime.knowledge_base().index.document(DOC_ID) is not None:
        runtime.knowledge_base().delete(DOC_ID)
    runtime.reset()


@pytest.fixture
def api() -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from csagent import runtime
    from csagent.http.app import create_app

    app = create_app(runtime.conversation_service, runtime.health, lambda: "dev",
                     get_knowledge=runtime.knowledge_base, presign_kb_upload=runtime.presign_kb_upload)
    with TestClient(app) as client:
        yield client


def _event_for(key: str) -> dict[str, Any]:
    event = copy.deepcopy(json.loads(EVENT.read_text()))
    event["detail"]["object"]["key"] = key
    return event


def _post_to_s3(presigned: dict[str, Any], name: str, body: bytes) -> httpx.Response:
    upload = presigned["upload"]
    return httpx.post(upload["url"], data=upload["fields"], files={"file": (name, body)}, timeout=30)


def test_a_presigned_upload_is_ingested_by_the_bucket_event(api: Any, ingest: Any) -> None:
    from csagent import runtime
    from csagent.knowledge.search import KnowledgeSearch
    from csagent.nlp.embeddings import get_embedder

    # Given a presigned upload for the care guide, and the file posted to S3 with it
    presigned = api.post("/v1/kb/uploads", headers=ADMIN, json={"filename": "Care Guide.html",
                                                                 "document_id": DOC_ID})
    assert presigned.status_code == 201, presigned.text
    assert presigned.json()["key"] == "kb/uploads/e2e-care-guide/Care Guide.html"
    assert _post_to_s3(presigned.json(), "Care Guide.html", GUIDE).status_code in (200, 204)
    # When the bucket's Object Created event (the shipped event file) reaches the ingest function
    out = ingest(json.loads(EVENT.read_text()))
    # Then the document is indexed, titled from the HTML, with its table rows as labelled lines
    [result] = out["results"]
    assert (result["document_id"], result["version"], result["format"]) == (DOC_ID, 1, "html")
    assert result["title"] == "Leather care guide"
    search = KnowledgeSearch(runtime.graph_store(), get_embedder())
    found = search.search("conditioning plan interval for leather").hits
    hits = {h.section: h for h in found if h.doc_id == DOC_ID}
    table = hits["Leather care guide > Conditioning plans"]
    assert "Plan: Daily wear; Interval: every 3 months." in table.text
    assert table.citation()["version"] == 1


def test_the_same_event_again_embeds_nothing(api: Any, ingest: Any) -> None:
    presigned = api.post("/v1/kb/uploads", headers=ADMIN, json={"filename": "Care Guide.html",
                                                                 "document_id": DOC_ID}).json()
    assert _post_to_s3(presigned, "Care Guide.html", GUIDE).status_code in (200, 204)
    ingest(json.loads(EVENT.read_text()))
    # When S3 delivers the event twice (at-least-once)
    [again] = ingest(json.loads(EVENT.read_text()))["results"]
    # Then the second ingest changes nothing
    assert (again["version"], again["embedded"], again["unchanged"]) == (1, 0, True)


def test_an_unreadable_upload_is_reported_and_indexes_nothing(api: Any, ingest: Any) -> None:
    from csagent import runtime

    presigned = api.post("/v1/kb/uploads", headers=ADMIN, json={"filename": "scan.pdf",
                                                                 "document_id": DOC_ID}).json()
    assert _post_to_s3(presigned, "scan.pdf", b"%PDF-1.4 not really").status_code in (200, 204)
    [result] = ingest(_event_for("kb/uploads/e2e-care-guide/scan.pdf"))["results"]
    assert result["rejected"]["status"] == 422 and result["rejected"]["code"] == "corrupt_document"
    assert runtime.knowledge_base().index.document(DOC_ID) is None


def test_an_unsupported_type_gets_no_presigned_upload(api: Any, ingest: Any) -> None:
    response = api.post("/v1/kb/uploads", headers=ADMIN, json={"filename": "policy.docx"})
    assert response.status_code == 415 and response.json()["error"]["code"] == "unsupported_type"


def test_an_object_over_the_size_limit_is_refused_unread(api: Any, ingest: Any,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # S3 enforces the presigned POST's content-length-range in AWS; moto does not, so this checks
    # the ingest function's own limit (an object put another way must not be read into memory).
    from csagent import runtime

    monkeypatch.setenv("KB_MAX_OBJECT_BYTES", "1000")
    runtime.reset()
    presigned = api.post("/v1/kb/uploads", headers=ADMIN, json={"filename": "big.txt",
                                                                 "document_id": DOC_ID}).json()
    assert _post_to_s3(presigned, "big.txt", b"word " * 400).status_code in (200, 204)
    [result] = ingest(_event_for("kb/uploads/e2e-care-guide/big.txt"))["results"]
    assert result["rejected"]["status"] == 413 and result["rejected"]["code"] == "document_too_large"
    assert runtime.knowledge_base().index.document(DOC_ID) is None
