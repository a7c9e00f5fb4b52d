"""Every entity of one text at once (`nlp.entities.extract`)."""

from __future__ import annotations

from csagent.nlp.entities.extract import extract_entities


# -- everything at once --------------------------------------------------------------------------------
def test_compound_message_yields_all_its_entities(catalogue: list[dict]) -> None:
    # Given the compound example message
    text = ("where is order #W2611340, what is the warranty on those headphones, and ship it to my new "
            "address: 12 Main St, Springfield, IL 62704")
    # When every entity is extracted
    found = extract_entities(text, catalogue)
    # Then the order, the product reference, the address and its zip are all there
    assert found.order_ids == ["#W2611340"]
    assert [p.name for p in found.products] == ["Headphones"]
    assert [(r.kind, r.hint) for r in found.references] == [("product", "headphones"), ("order", None)]
    assert [a.address1 for a in found.addresses] == ["12 Main St"] and found.zip_codes == ["62704"]


def test_street_number_is_not_mistaken_for_a_zip_code() -> None:
    # Given an address whose street number has five digits / When extracted
    found = extract_entities("send it to 12345 Oak Avenue, Austin, TX 78701")
    # Then only the real zip code is reported
    assert found.zip_codes == ["78701"]
