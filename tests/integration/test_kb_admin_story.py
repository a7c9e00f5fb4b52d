"""The knowledge-base admin story on the real local stack (issue 16): an admin uploads a new
policy through `POST /v1/kb/documents`, a customer asks about it through the chat API and the
answer cites it; the admin replaces it and the answer changes; the admin deletes it and no answer
cites it any more. Every step goes through the router's real HTTP app, Neo4j and moto.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from api_support import say

pytestmark = pytest.mark.integration

CUSTOMER = "mei_gonzalez_4785"
ADMIN = {"Authorization": "Bearer dev-admin:store-owner"}
DOC_ID = "itest-gift-wrapping"
QUESTION = "what is your policy on gift wrapping?"

POLICY_V1 = b"""# Gift wrapping policy

## Price
Gift wrapping costs $4 per item and includes a handwritten card.

## Availability
Gift wrapping is offered on every order of up to 10 items.
"""

POLICY_V2 = POLICY_V1.replace(b"costs $4 per item", b"costs $7 per item")


@pytest.fixture
def kb_client(module_api: Any) -> Iterator[Any]:
    _, _, client = module_api
    yield client
    client.delete(f"/v1/kb/documents/{DOC_ID}", headers=ADMIN)


def _upload(client: Any, body: bytes, *, method: str = "POST", name: str = "gift-wrapping.md") -> Any:
    url = "/v1/kb/documents" if method == "POST" else f"/v1/kb/documents/{DOC_ID}"
    return client.request(method, url, headers=ADMIN, files={"file": (name, body, "text/markdown")},
                          data={"document_id": DOC_ID} if method == "POST" else {})


def _ask(client: Any) -> dict[str, Any]:
    return say(client, CUSTOMER, f"kb-{uuid.uuid4().hex[:8]}", QUESTION)


def _cited(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in body["reply"].get("citations") or [] if c.get("doc_id") == DOC_ID]


def test_upload_ask_replace_ask_delete_ask(kb_client: Any) -> None:
    # Given a new policy uploaded by an admin
    created = _upload(kb_client, POLICY_V1)
    assert created.status_code == 201, created.text
    assert created.json()["document_id"] == DOC_ID
    assert created.json()["version"] == 1 and created.json()["chunks"] == 2
    # When a customer asks about it, Then the answer states it and cites version 1
    first = _ask(kb_client)
    assert "$4 per item" in first["reply"]["text"], first["reply"]["text"]
    assert [c["version"] for c in _cited(first)][:1] == [1], first["reply"]
    assert {"doc_id": DOC_ID, "version": 1} in [{k: s[k] for k in ("doc_id", "version")}
                                                for s in first["trace"]["knowledge_sources"]], first["trace"]
    assert "Gift wrapping policy" in first["reply"]["text"], first["reply"]["text"]

    # When the admin replaces it with a new price
    replaced = _upload(kb_client, POLICY_V2, method="PUT")
    assert replaced.status_code == 200, replaced.text
    assert (replaced.json()["version"], replaced.json()["embedded"], replaced.json()["reused"]) == (2, 1, 1)
    # Then the same question gets the new price, citing version 2
    second = _ask(kb_client)
    assert "$7 per item" in second["reply"]["text"] and "$4" not in second["reply"]["text"], second["reply"]
    assert [c["version"] for c in _cited(second)][:1] == [2], second["reply"]
    assert DOC_ID not in [s["doc_id"] for s in second["trace"]["knowledge_sources"] if s["version"] == 1]

    # When the admin deletes it
    deleted = kb_client.delete(f"/v1/kb/documents/{DOC_ID}", headers=ADMIN)
    assert deleted.status_code == 204, deleted.text
    # Then no answer cites it or repeats its price
    third = _ask(kb_client)
    assert _cited(third) == [] and "per item" not in third["reply"]["text"], third["reply"]
    assert kb_client.get(f"/v1/kb/documents/{DOC_ID}", headers=ADMIN).status_code == 404


ENGRAVING = b"# Engraving service\n\n## Price\nEngraving costs $12 per item, up to 20 characters.\n"


def test_a_topic_only_an_uploaded_document_covers_is_answered_not_refused(kb_client: Any) -> None:
    # Given a topic the shipped knowledge base and business scope never mention
    question = "how much is engraving?"
    before = _ask_text(kb_client, question)
    assert before["status"] == "refused", before["reply"]
    # When an admin uploads a policy about it
    up = kb_client.post("/v1/kb/documents", headers=ADMIN, data={"document_id": DOC_ID},
                        files={"file": ("engraving.md", ENGRAVING, "text/markdown")})
    assert up.status_code == 201, up.text
    # Then the same question is in scope and answered from it
    after = _ask_text(kb_client, question)
    assert after["status"] == "answered" and "$12 per item" in after["reply"]["text"], after["reply"]
    assert _cited(after), after["reply"]


def _ask_text(client: Any, text: str) -> dict[str, Any]:
    return say(client, CUSTOMER, f"kb-{uuid.uuid4().hex[:8]}", text)


def test_uploading_the_same_file_again_embeds_nothing(kb_client: Any) -> None:
    # Given an uploaded document
    assert _upload(kb_client, POLICY_V1).status_code == 201
    # When the identical file is sent as a replacement
    again = _upload(kb_client, POLICY_V1, method="PUT")
    # Then nothing is embedded or written: same version, marked unchanged
    assert again.status_code == 200, again.text
    assert (again.json()["version"], again.json()["embedded"], again.json()["unchanged"]) == (1, 0, True)


def test_listing_shows_the_uploaded_document_with_its_version(kb_client: Any) -> None:
    assert _upload(kb_client, POLICY_V1).status_code == 201
    listed = kb_client.get("/v1/kb/documents", headers=ADMIN)
    assert listed.status_code == 200
    mine = [d for d in listed.json()["documents"] if d["doc_id"] == DOC_ID]
    assert mine and mine[0]["version"] == 1 and mine[0]["origin"] == "upload"
    assert mine[0]["updated_by"] == "store-owner" and mine[0]["chunk_count"] == 2


@pytest.mark.parametrize(("name", "body", "status", "code"), [
    ("policy.docx", b"PK\x03\x04 a word file", 415, "unsupported_type"),
    ("policy.md", b"   \n\n", 422, "empty_document"),
    ("policy.pdf", b"%PDF-1.4 this is not really a pdf", 422, "corrupt_document"),
    ("policy.txt", b"\xff\xfe\x00bad", 422, "corrupt_document"),
    ("policy.md", b"# Big\n\n" + b"word " * (1_100_000), 413, "document_too_large"),
])
def test_a_bad_upload_gets_a_clear_4xx_and_indexes_nothing(kb_client: Any, name: str, body: bytes,
                                                           status: int, code: str) -> None:
    # When an admin uploads a file that cannot be indexed
    response = kb_client.post("/v1/kb/documents", headers=ADMIN, files={"file": (name, body)},
                              data={"document_id": DOC_ID})
    # Then the answer says why, and the document does not exist
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert kb_client.get(f"/v1/kb/documents/{DOC_ID}", headers=ADMIN).status_code == 404


def test_a_failed_replacement_leaves_the_previous_version_serving(kb_client: Any) -> None:
    # Given version 1 serving
    assert _upload(kb_client, POLICY_V1).status_code == 201
    # When a corrupt replacement is sent
    bad = kb_client.put(f"/v1/kb/documents/{DOC_ID}", headers=ADMIN,
                        files={"file": ("gift-wrapping.pdf", b"%PDF-1.7 broken")})
    # Then it is refused and version 1 still answers
    assert bad.status_code == 422, bad.text
    assert kb_client.get(f"/v1/kb/documents/{DOC_ID}", headers=ADMIN).json()["version"] == 1
    assert "$4 per item" in _ask(kb_client)["reply"]["text"]


def test_only_admins_manage_the_knowledge_base(kb_client: Any) -> None:
    for token in (f"dev:{CUSTOMER}", "dev-agent:alice"):
        response = kb_client.post("/v1/kb/documents", headers={"Authorization": f"Bearer {token}"},
                                  files={"file": ("gift-wrapping.md", POLICY_V1)})
        assert response.status_code == 403, response.text
    assert kb_client.get("/v1/kb/documents").status_code == 401


def test_creating_an_existing_document_is_a_conflict_and_replacing_a_missing_one_is_not_found(
        kb_client: Any) -> None:
    assert _upload(kb_client, POLICY_V1).status_code == 201
    assert _upload(kb_client, POLICY_V1).status_code == 409
    missing = kb_client.put("/v1/kb/documents/itest-no-such-doc", headers=ADMIN,
                            files={"file": ("x.md", POLICY_V1)})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
