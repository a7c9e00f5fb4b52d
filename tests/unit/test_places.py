"""A city named by another of its names (`grounding.places`, `grounding/data/place_names.json`), and
the customer's addresses and orders it picks out (`grounding.model`, `grounding.facts`)."""

from __future__ import annotations

import pytest

from csagent.grounding.places import city_named


@pytest.mark.parametrize(("text", "city", "named"), [
    ("send it to my sf adress instead", "San Francisco", True),
    ("the one going to Philly", "Philadelphia", True),
    ("寄到夏洛特的那个", "Charlotte", True),
    ("my place in new york", "New York", True),
    ("my LA place", "Los Angeles", True),
    # a short name that is an everyday word lower-cased is matched only as written
    ("la la la, where is my order", "Los Angeles", False),
    # a name inside another word is none
    ("my sfx headphones", "San Francisco", False),
    ("send it to Dallas", "Denver", False),
])
def test_a_city_is_named_by_any_of_its_names(text: str, city: str, named: bool) -> None:
    assert (city_named(text, city) is not None) is named


def test_an_address_of_the_customer_is_named_by_its_citys_nickname() -> None:
    from csagent.grounding.model import CustomerView, OrderView

    home = {"address1": "12 Oak Street", "address2": "", "city": "Philadelphia", "state": "PA",
            "zip": "19103", "country": "USA"}
    away = {"address1": "9 Elm Road", "address2": "", "city": "Seattle", "state": "WA", "zip": "98101",
            "country": "USA"}
    view = CustomerView(customer_id="c1", default_address=home,
                        orders=(OrderView(order_id="#W1", status="pending", address=away),))
    assert view.address_named("send it to my philly place instead") == home
    assert view.address_named("send it to my boston place instead") is None


def test_an_order_is_found_by_the_chinese_name_of_its_city() -> None:
    from csagent.grounding.facts import orders_by_facts
    from csagent.grounding.model import CustomerView, OrderView

    orders = tuple(OrderView(order_id=oid, status="pending",
                             address={"address1": "1 Main St", "city": city, "state": state, "zip": "00000"})
                   for oid, city, state in (("#W1", "Charlotte", "NC"), ("#W2", "Seattle", "WA")))
    fitting = orders_by_facts("寄到夏洛特的那个订单", CustomerView(customer_id="c1", orders=orders))
    assert [o.order_id for o in fitting or []] == ["#W1"]
