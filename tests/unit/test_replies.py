

def test_the_items_named_are_added_up() -> None:
    from csagent.domain.tool_data import CatalogueData
    from csagent.replies import named_items_total

    rows = [{"item_id": "a", "product_name": "Backpack", "price": 201.95},
            {"item_id": "b", "product_name": "Pet Bed", "price": 193.22},
            {"item_id": "c", "product_name": "Lamp", "price": 99.0}]
    data = CatalogueData(template_id="order_items", rows=rows)
    # only the items named, not the whole order
    assert named_items_total(data, ["a", "b"], "en") == "Together, Backpack and Pet Bed come to $395.17."
    assert named_items_total(data, ["a"], "en") == ""  # one item's price is on its own line already


def test_a_rule_quoted_about_an_order_says_which_order() -> None:
    from csagent.domain.models import Task, TaskResult
    from csagent.domain.task_args import TaskNotes
    from csagent.replies import describe_success

    data = {"answer": "For hygiene reasons Perfume can only be returned unopened.",
            "citations": [{"title": "Return and refund policy",
                           "text": "For hygiene reasons Perfume can only be returned unopened."}]}
    task = Task(task_id="t1", task_type="policy", tool="knowledge_search", args={"question": "q"},
                notes=TaskNotes(order_id="#W4398027"))
    result = TaskResult.model_validate({"task_id": "t1", "task_type": "policy", "tool": "knowledge_search",
                                        "status": "success", "data": data})
    reply = describe_success(task, result, "en")
    assert reply == ("Order #W4398027: For hygiene reasons Perfume can only be returned unopened. "
                     "(source: Return and refund policy)")
    # Without an order the quotation stands alone
    task = task.model_copy(update={"notes": TaskNotes()})
    assert describe_success(task, result, "en").startswith("For hygiene")


def test_the_customers_own_item_of_the_product_asked_about_is_said_alone() -> None:
    from csagent.domain.models import Task, TaskResult
    from csagent.domain.task_args import TaskNotes
    from csagent.replies import describe_success

    # Given an order holding headphones and a pet bed, read for a question about the headphones
    rows = [{"order_id": "#W1", "product_id": "p-head", "product_name": "Headphones", "price": 344.55,
             "options": {"type": "in-ear", "color": "black"}},
            {"order_id": "#W1", "product_id": "p-bed", "product_name": "Pet Bed", "price": 214.33,
             "options": {"size": "small"}}]
    task = Task(task_id="t1", task_type="order_items", tool="predefined_cypher",
                args={"template_id": "order_items", "params": {"order_id": "#W1"}},
                notes=TaskNotes(own_products=["p-head"]))
    result = TaskResult.model_validate({"task_id": "t1", "task_type": "order_items",
                                        "tool": "predefined_cypher", "status": "success",
                                        "data": {"template_id": "order_items", "rows": rows}})
    # When it is described / Then only their own headphones are said, option by option, with the price
    assert describe_success(task, result, "en") == \
        "Yours, from order #W1: Headphones (type: in-ear, color: black, $344.55)."
    # And without the note the whole order is listed, as before
    whole = describe_success(task.model_copy(update={"notes": TaskNotes()}), result, "en")
    assert whole.startswith("Order #W1 contains: Headphones") and "Pet Bed" in whole


def test_a_method_asked_for_that_the_account_lacks_is_said_missing_before_the_saved_ones() -> None:
    from csagent.domain.models import Task, TaskResult
    from csagent.domain.task_args import TaskNotes
    from csagent.replies import describe_success

    # Given the account's saved methods, read for a payment change to PayPal it does not hold
    rows = [{"payment_method_id": "credit_card_1", "source": "credit_card", "brand": "visa",
             "last_four": "6918"}]
    task = Task(task_id="t2", task_type="account_info", tool="predefined_cypher",
                args={"template_id": "payment_methods", "params": {}},
                notes=TaskNotes(method_not_held="PayPal"))
    result = TaskResult.model_validate({"task_id": "t2", "task_type": "account_info",
                                        "tool": "predefined_cypher", "status": "success",
                                        "data": {"template_id": "payment_methods", "rows": rows}})
    # Then the missing method is named first, then what the account holds (in Chinese too)
    assert describe_success(task, result, "en") == (
        "There is no PayPal on your account. The payment methods saved on your account: "
        "credit card (Visa ending 6918).")
    assert describe_success(task, result, "zh").startswith("您的账户中没有 PayPal。您账户中保存的支付方式")
    # And without the note, only the saved methods
    plain = describe_success(task.model_copy(update={"notes": TaskNotes()}), result, "en")
    assert plain.startswith("The payment methods saved on your account:")
