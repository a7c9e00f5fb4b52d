

def test_the_items_named_are_added_up() -> None:
    from csagent.replies import named_items_total

    rows = [{"item_id": "a", "product_name": "Backpack", "price": 201.95},
            {"item_id": "b", "product_name": "Pet Bed", "price": 193.22},
            {"item_id": "c", "product_name": "Lamp", "price": 99.0}]
    data = {"template_id": "order_items", "rows": rows}
    # only the items named, not the whole order
    assert named_items_total(data, ["a", "b"], "en") == "Together, Backpack and Pet Bed come to $395.17."
    assert named_items_total(data, ["a"], "en") == ""  # one item's price is on its own line already
