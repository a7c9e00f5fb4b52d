"""The knowledge base in step with the catalogue (issue 16), on the real local stack through the
router's HTTP app: a price change is in the next answer; a new product is linked to the knowledge
chunks that name it and answered about at once; a discontinued product's variants are
unavailable while its manual stays linked. No rebuild runs in between."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from api_support import say

pytestmark = pytest.mark.integration

CUSTOMER = "noah_brown_6181"
ADMIN = {"Authorization": "Bearer dev-admin:catalogue"}
E_READER_CHEAPEST = "7609274509"  # E-Reader, 243.4 in the dataset
NEW_PRODUCT = "9990000001"
GUIDE = b"""# Travel Pillow care guide

## Washing
Unzip the cover of the Travel Pillow and machine wash it cold; air dry the memory-foam core.
"""


def _ask(client: Any, text: str) -> str:
    return str(say(client, CUSTOMER, f"cat-{uuid.uuid4().hex[:8]}", text)["reply"]["text"])


@pytest.fixture
def client(module_api: Any) -> Iterator[Any]:
    driver, _, http = module_api
    yield http
    http.patch(f"/v1/catalogue/variants/{E_READER_CHEAPEST}", headers=ADMIN, json={"price": 243.4})
    http.delete("/v1/kb/documents/itest-travel-pillow", headers=ADMIN)
    driver.execute_query("MATCH (p:Product {product_id: $id}) OPTIONAL MATCH (p)-[:HAS_VARIANT]->(v) "
                         "DETACH DELETE p, v", id=NEW_PRODUCT)


def test_a_price_change_is_in_the_next_answer(client: Any) -> None:
    # Given the E-Reader's price as the dataset has it
    assert "243.4" in _ask(client, "how much is the e-reader")
    # When an admin lowers its cheapest version's price
    changed = client.patch(f"/v1/catalogue/variants/{E_READER_CHEAPEST}", headers=ADMIN,
                           json={"price": 199.99})
    assert changed.status_code == 200, changed.text
    # Then the next answer quotes the new price, not the old one
    reply = _ask(client, "how much is the e-reader")
    assert "199.99" in reply and "243.4" not in reply, reply


def test_a_new_product_is_linked_to_the_chunks_that_name_it_and_answered_at_once(client: Any,
                                                                                  neo4j_driver: Any) -> None:
    # Given a care guide uploaded before the product exists: nothing to link to yet
    up = client.post("/v1/kb/documents", headers=ADMIN, data={"document_id": "itest-travel-pillow"},
                     files={"file": ("travel-pillow.md", GUIDE, "text/markdown")})
    assert up.status_code == 201, up.text
    links = ("MATCH (:Document {doc_id: 'itest-travel-pillow'})-[:HAS_CHUNK]->(c)-[:MENTIONS]->(p:Product) "
             "RETURN collect(DISTINCT p.product_id) AS ids")
    assert neo4j_driver.execute_query(links).records[0]["ids"] == []
    # When the admin adds the product
    added = client.put(f"/v1/catalogue/products/{NEW_PRODUCT}", headers=ADMIN, json={
        "name": "Travel Pillow", "category": "Sports",
        "variants": [{"item_id": "9990000101", "price": 29.5, "options": {"color": "grey"}}]})
    assert added.status_code == 200, added.text
    assert added.json()["created"] is True and added.json()["relinked_chunks"] >= 1
    # Then the guide's chunks mention it, and the assistant knows its price
    assert neo4j_driver.execute_query(links).records[0]["ids"] == [NEW_PRODUCT]
    reply = _ask(client, "how much is the travel pillow")
    assert "29.5" in reply, reply


def test_a_discontinued_product_is_unavailable_and_keeps_its_manual(client: Any, neo4j_driver: Any) -> None:
    client.put(f"/v1/catalogue/products/{NEW_PRODUCT}", headers=ADMIN, json={
        "name": "Travel Pillow", "category": "Sports",
        "variants": [{"item_id": "9990000101", "price": 29.5}]})
    client.post("/v1/kb/documents", headers=ADMIN, data={"document_id": "itest-travel-pillow"},
                files={"file": ("travel-pillow.md", GUIDE, "text/markdown")})
    gone = client.post(f"/v1/catalogue/products/{NEW_PRODUCT}/discontinue", headers=ADMIN)
    assert gone.status_code == 200 and gone.json()["variants_unavailable"] == 1, gone.text
    rows = neo4j_driver.execute_query(
        "MATCH (p:Product {product_id: $id})-[:HAS_VARIANT]->(v) "
        "RETURN p.discontinued AS flag, collect(v.available) AS available, "
        "COUNT { (:Chunk)-[:MENTIONS]->(p) } AS mentions", id=NEW_PRODUCT).records[0]
    assert (rows["flag"], rows["available"]) == (True, [False]) and rows["mentions"] >= 1


def test_only_admins_change_the_catalogue(client: Any) -> None:
    response = client.patch(f"/v1/catalogue/variants/{E_READER_CHEAPEST}",
                            headers={"Authorization": "Bearer dev-agent:bob"}, json={"price": 1.0})
    assert response.status_code == 403
    missing = client.patch("/v1/catalogue/variants/0000000000", headers=ADMIN, json={"price": 1.0})
    assert missing.status_code == 404
