"""How task results are worded for the customer (csagent.replies)."""

from __future__ import annotations

from typing import Any

import pytest

from csagent import replies
from csagent.domain.models import Task, TaskResult

_t = Task.model_validate


def _slot(task: Task, raw: dict[str, Any]) -> TaskResult:
    """A result slot as the state holds it (`graph.state.task_results`), from its status and data."""
    return TaskResult.model_validate({"task_id": task.task_id, "task_type": task.task_type, "tool": task.tool,
                                      **raw})


def describe_success(task: Task, raw: dict[str, Any], lang: str) -> str:
    return replies.describe_success(task, _slot(task, raw), lang)


def describe_failure(task: Task, raw: dict[str, Any], lang: str) -> str:
    return replies.describe_failure(task, _slot(task, raw), lang)


def failed(error_type: str, message: str) -> dict[str, Any]:
    return {"status": "failed", "error": {"type": error_type, "message": message, "retryable": False}}


def test_a_search_that_found_nothing_is_said_in_customer_words_never_the_tools_message() -> None:
    # Given a warranty lookup that found nothing, with the tool's own diagnostic message
    task = {"task_id": "t1", "task_type": "warranty", "tool": "knowledge_search", "args": {"question": "q"}}
    # When the failure is described
    text = describe_failure(_t(task), failed("no_results", "nothing was found (injected fault)"), "en")
    # Then the reply names the warranty lookup and shows nothing of the internal message
    assert text.startswith("I couldn't find warranty terms")
    assert "injected" not in text and "nothing was found" not in text


def test_a_catalogue_templates_not_found_message_is_written_for_the_customer_and_shown() -> None:
    # Given an order lookup whose template says, in customer words, that the order is not theirs
    task = {"task_id": "t1", "task_type": "order_status", "tool": "predefined_cypher",
            "args": {"params": {"order_id": "#W0000001"}}}
    # When the failure is described
    text = describe_failure(_t(task), failed("no_results", "No order #W0000001 was found in your account."),
                            "en")
    # Then that sentence is the answer
    assert text.startswith("No order #W0000001 was found in your account.")


def test_a_validation_message_from_a_tool_that_does_not_write_for_customers_stays_internal() -> None:
    # Given a knowledge search refusing its arguments in developer words
    task = {"task_id": "t1", "task_type": "policy", "tool": "knowledge_search", "args": {}}
    # When the failure is described
    text = describe_failure(_t(task), failed("validation", "'question' must be a non-empty string"), "en")
    # Then the customer reads the templated reason, not the developer message
    assert "'question'" not in text and "look up our policy" in text


def test_a_catalogue_templates_parameter_error_stays_internal() -> None:
    # Given a product question whose template lacked a parameter, in the words the planner retries by
    task = {"task_id": "t1", "task_type": "product_info", "tool": "predefined_cypher", "args": {}}
    message = "Missing required parameter 'option_key' (an option name like 'color' or 'size')."
    # When the failure is described
    text = describe_failure(_t(task), failed("validation", message), "en")
    # Then the customer reads the templated reason, never the parameter's name
    assert "option_key" not in text and "Missing required" not in text
    assert "some of the details didn't check out" in text


def test_a_customers_nine_orders_are_all_listed() -> None:
    # Given nine orders, the most a customer of the store has
    rows = [{"order_id": f"#W100000{i}", "status": "pending", "created_at": f"2024-02-0{i}"}
            for i in range(1, 10)]
    task = {"task_id": "t1", "task_type": "order_list", "tool": "predefined_cypher", "args": {}}
    result = {"status": "success", "data": {"template_id": "customer_orders", "rows": rows}}
    # When the list is described
    text = describe_success(_t(task), result, "en")
    # Then every one is named, the last after "and"
    assert all(f"#W100000{i} (pending, 2024-02-0{i})" in text for i in range(1, 10))
    assert "and #W1000009" in text and "more" not in text


def test_a_long_order_list_ends_with_how_many_more_without_a_double_and() -> None:
    # Given fifteen orders
    rows = [{"order_id": f"#W10000{i:02d}", "status": "pending", "created_at": f"2024-02-{i:02d}"}
            for i in range(1, 16)]
    task = {"task_id": "t1", "task_type": "order_list", "tool": "predefined_cypher", "args": {}}
    result = {"status": "success", "data": {"template_id": "customer_orders", "rows": rows}}
    # When the list is described
    text = describe_success(_t(task), result, "en")
    # Then twelve are listed, then "and 3 more", once
    assert "#W1000012 (pending, 2024-02-12) and 3 more." in text
    assert "and and" not in text and "#W1000013" not in text


def test_a_knowledge_answer_cites_the_document_it_was_taken_from() -> None:
    # Given an answer taken from the second citation
    citations = [{"title": "Headphones user guide", "text": "Wipe the cushions."},
                 {"title": "Warranty terms", "text": "Headphones: 1 year of parts and labour."}]
    task = {"task_id": "t1", "task_type": "warranty", "tool": "knowledge_search", "args": {}}
    result = {"status": "success", "data": {"answer": "Headphones: 1 year of parts and labour.",
                                            "citations": citations}}
    # When it is described
    text = describe_success(_t(task), result, "en")
    # Then the source named is that document
    assert text == "Headphones: 1 year of parts and labour. (source: Warranty terms)"


def test_a_refund_says_where_it_went_and_when_it_shows_there_by_the_policy() -> None:
    # Given a refund issued to PayPal
    row = {"order_id": "#W2793378", "refund_count": 1, "refunded_total": 791.89,
           "refunds": [{"seq": 2, "amount": 791.89, "payment_method": "PayPal"}]}
    task = {"task_id": "t1", "task_type": "refund_status", "tool": "predefined_cypher", "args": {}}
    # When it is described
    text = describe_success(_t(task),
                            {"status": "success", "data": {"template_id": "refund_status", "row": row}},
                            "en")
    # Then the customer reads the amount, the method and the policy's 5 to 7 business days
    assert "$791.89" in text and "PayPal" in text and "within 5 to 7 business days" in text


def test_no_refund_yet_on_a_requested_return_says_when_it_comes() -> None:
    # Given an order whose return was just requested: no refund issued yet
    row = {"order_id": "#W3929227", "order_status": "return requested", "refund_count": 0,
           "refunded_total": 0.0, "refunds": []}
    task = {"task_id": "t1", "task_type": "refund_status", "tool": "predefined_cypher", "args": {}}
    # When it is described ("when will I see the money?")
    text = describe_success(_t(task),
                            {"status": "success", "data": {"template_id": "refund_status", "row": row}},
                            "en")
    # Then the customer hears that it is to come, and the policy's timings
    assert text.startswith("I don't see a refund on order #W3929227 yet.")
    assert "immediately" in text and "within 5 to 7 business days" in text


def _catalogue_result(template_id: str, rows: list[dict[str, Any]], **params: Any) -> dict[str, Any]:
    return {"status": "success", "data": {"template_id": template_id, "rows": rows, "params": params}}


CATALOGUE_TASK = {"task_id": "t1", "task_type": "product_availability", "tool": "predefined_cypher",
                  "args": {}}


def test_an_option_out_of_stock_is_said_in_words_not_as_record_fields() -> None:
    # Given two size-11 sneakers, neither available
    rows = [{"product_name": "Sneakers", "item_id": "1", "option_text": "size: 11, color: red",
             "options": {"size": "11", "color": "red"}, "price": 203.82, "available": False},
            {"product_name": "Sneakers", "item_id": "2", "option_text": "size: 11, color: black",
             "options": {"size": "11", "color": "black"}, "price": 207.75, "available": False}]
    # When the answer is described
    result = _catalogue_result("variants_by_option", rows, option_value="11")
    text = describe_success(_t(CATALOGUE_TASK), result, "en")
    # Then it is a sentence about the size, with no field names or raw values
    assert text == "Sorry, the Sneakers in size 11 are not available right now."


def test_an_available_option_names_the_versions_with_their_prices() -> None:
    # Given one wall clock in wood, in stock
    rows = [{"product_name": "Wall Clock", "item_id": "1", "option_text": "diameter: 10 inches, color: wood",
             "options": {"diameter": "10 inches", "color": "wood"}, "price": 196.15, "available": True}]
    # When the answer is described
    result = _catalogue_result("variants_by_option", rows, option_value="wood")
    text = describe_success(_t(CATALOGUE_TASK), result, "en")
    # Then the version is named by its options, with its price
    assert text == "Yes, the Wall Clock in wood is available: 10 inches / wood at $196.15."


def test_an_options_values_are_listed_in_natural_order_and_sold_out_ones_said() -> None:
    # Given three pressure values, one with nothing in stock
    rows = [{"product_name": "Espresso Machine", "value": v, "variants": 2, "available_variants": a}
            for v, a in (("15 bar", 0), ("19 bar", 1), ("9 bar", 2))]
    result = _catalogue_result("product_option_values", rows, option_key="pressure")
    # When the answer is described
    text = describe_success(_t(CATALOGUE_TASK), result, "en")
    # Then the values read smallest first, and the sold-out one is named
    assert text == ("The Espresso Machine comes with these pressure options: 9 bar, 15 bar and 19 bar. "
                    "Out of stock right now: 15 bar.")


def test_a_catalogue_answer_in_chinese_uses_the_chinese_wording() -> None:
    # Given a product whose price varies
    rows = [{"product_name": "E-Reader", "min_price": 243.4, "max_price": 267.58}]
    # When the answer is described in Chinese
    text = describe_success(_t(CATALOGUE_TASK), _catalogue_result("product_price", rows), "zh")
    # Then the Chinese template speaks
    assert text == "E-Reader 的价格为 $243.40 至 $267.58。"


def test_one_order_past_the_cap_is_listed_rather_than_counted() -> None:
    # Given six orders, one more than the five a list shows
    rows = [{"order_id": f"#W100000{i}", "status": "pending", "created_at": f"2024-02-0{i}"}
            for i in range(1, 7)]
    task = {"task_id": "t1", "task_type": "order_list", "tool": "predefined_cypher", "args": {}}
    result = {"status": "success", "data": {"template_id": "customer_orders", "rows": rows}}
    # When the list is described
    text = describe_success(_t(task), result, "en")
    # Then all six are named and none is left as "1 more"
    assert "#W1000006 (pending, 2024-02-06)" in text and "more" not in text


def test_a_plural_product_name_comes_in_its_versions() -> None:
    # Given the versions of the Sneakers (a plural name) and of a Wall Clock
    rows = [{"product_name": name, "option_text": f"size: {size}", "price": 203.82, "available": True}
            for name in ("Sneakers", "Wall Clock") for size in ("10", "11")]
    # When the answer is described
    text = describe_success(_t(CATALOGUE_TASK), _catalogue_result("product_variants", rows), "en")
    # Then the verb agrees with each name
    assert "The Sneakers come in 2 versions" in text and "The Wall Clock comes in 2 versions" in text


ACCOUNT_TASK = {"task_id": "t1", "task_type": "account_info", "tool": "predefined_cypher", "args": {}}


def test_what_the_account_holds_is_said_in_customer_words() -> None:
    # Given the account reads' rows
    methods = {"template_id": "payment_methods", "rows": [
        {"payment_method": "mastercard ending 3962", "source": "credit_card", "brand": "mastercard",
         "last_four": "3962", "balance": None},
        {"payment_method": "gift card", "source": "gift_card", "brand": None, "last_four": None,
         "balance": 3.0}]}
    address = {"template_id": "default_address", "row": {"address1": "1 Main St", "address2": "Apt 2",
                                                          "city": "Austin", "state": "TX", "zip": "78701",
                                                          "country": "USA"}}
    spent = {"template_id": "total_spent", "row": {"orders": 3, "total_spent": 1234.5}}
    # When each is described / Then the facts are there, in words a customer uses
    assert describe_success(_t(ACCOUNT_TASK), {"status": "success", "data": methods}, "en") == (
        "The payment methods saved on your account: credit card (Mastercard ending 3962) and "
        "gift card ($3.00 left).")
    assert "1 Main St, Apt 2, Austin, TX 78701, USA" in describe_success(_t(
        ACCOUNT_TASK), {"status": "success", "data": address}, "en")
    assert "$1234.50 across 3 orders" in describe_success(_t(
        ACCOUNT_TASK), {"status": "success", "data": spent}, "en")


def test_products_named_lists_several_products_and_the_kinds_of_one() -> None:
    # Given the products named "kettle", then the one product named "grill"
    kettles = [{"product_name": "Electric Kettle", "variants": 16, "min_price": 137.17, "max_price": 164.46,
                "option_texts": ["capacity: 1L, color: white"]},
               {"product_name": "Tea Kettle", "variants": 16, "min_price": 91.13, "max_price": 109.58,
                "option_texts": ["capacity: 1L, material: glass"]}]
    grills = [{"product_name": "Grill", "variants": 3, "min_price": 924.5, "max_price": 1058.86,
               "option_texts": ["type: gas, size: medium", "type: charcoal, size: medium",
                                "type: electric, size: portable"]}]
    # When the answers are described
    several = describe_success(_t(CATALOGUE_TASK), _catalogue_result("products_named", kettles), "en")
    one = describe_success(_t(CATALOGUE_TASK), _catalogue_result("products_named", grills), "en")
    # Then several are listed with their versions; one is named with the values of each option
    assert several == ("We sell 2 of those: Electric Kettle (16 versions, from $137.17 to $164.46) and "
                       "Tea Kettle (16 versions, from $91.13 to $109.58).")
    assert one == ("We sell the Grill (3 versions, from $924.50 to $1058.86). The Grill comes with these "
                   "type options: charcoal, electric and gas. The Grill comes with these size options: "
                   "medium and portable.")


def test_an_address_change_a_status_rules_out_says_the_rule_the_address_and_what_is_allowed() -> None:
    # Given a delivered order asked to go elsewhere
    row = {"order_id": "#W5690487", "status": "delivered", "eligible": False, "address1": "227 Oak Street",
           "address2": "Suite 699", "city": "Washington", "state": "DC", "zip": "20564", "country": "USA"}
    result = {"status": "success", "data": {"template_id": "address_change_eligibility", "row": row}}
    # When the answer is described
    text = describe_success(_t({"task_id": "t1", "task_type": "address_change_eligibility",
                             "tool": "predefined_cypher", "args": {}}), result, "en")
    # Then it names the rule, the address it has, and what can still change
    assert "delivered, so its shipping address can no longer be changed: only pending orders can" in text
    assert "227 Oak Street" in text and "default address" in text


@pytest.mark.parametrize("template_id", ["return_eligibility", "cancellation_eligibility",
                                         "address_change_eligibility"])
def test_an_order_whose_items_were_modified_is_told_it_can_change_no_more(template_id: str) -> None:
    # Given an order whose items were modified once (the policy's one modification)
    row = {"order_id": "#W4184032", "status": "pending (item modified)", "eligible": False,
           "address1": "1 Elm Street", "city": "Austin", "state": "TX", "zip": "78701", "country": "USA"}
    result = {"status": "success", "data": {"template_id": template_id, "row": row}}
    # When the answer is described
    text = describe_success(_t({"task_id": "t1", "task_type": template_id, "tool": "predefined_cypher",
                             "args": {}}), result, "en")
    # Then it says the items were modified once, never that a pending order can still be changed
    assert "already been modified once" in text and "can be cancelled or changed" not in text


def test_a_rule_that_blocks_is_told_as_the_answer_without_a_breakdown_or_a_person() -> None:
    # Given a cancellation the policy refused, with the tool's reason written for the customer
    task = {"task_id": "t1", "task_type": "cancel_order", "tool": "customer_actions",
            "args": {"args": {"order_id": "#W2611340"}}}
    reason = ("Order #W2611340 has already shipped, so it can no longer be cancelled. You can return it "
              "once it is delivered.")
    result = {"status": "failed", "error": {"type": "business_rule_violation", "message": reason}}
    # When it is described
    text = describe_failure(_t(task), result, "en")
    # Then the rule and what is allowed are the answer: no "right now", no person offered
    assert text == reason


def test_a_rule_that_blocks_is_told_in_chinese_naming_its_order_and_the_rule() -> None:
    # Given the same refusal for a customer writing in Chinese (the tool words its rule in English)
    task = {"task_id": "t1", "task_type": "cancel_order", "tool": "customer_actions",
            "args": {"args": {"order_id": "#W2611340"}}}
    reason = "Order #W2611340 has already shipped, so it can no longer be cancelled"
    result = {"status": "failed", "error": {"type": "business_rule_violation", "message": reason}}
    # When it is described
    text = describe_failure(_t(task), result, "zh")
    # Then it names the order and the rule, says the policy does not allow it, and offers no person
    assert text.startswith("订单 #W2611340：") and reason in text and "政策" in text
    assert "人工" not in text and "暂时" not in text


CATEGORY_ROWS = [{"category": "Footwear", "products": 2, "names": ["Hiking Boots", "Sneakers"]},
                 {"category": "Travel", "products": 1, "names": ["Backpack"]}]


def test_what_the_store_sells_names_the_products_of_each_category() -> None:
    result = {"status": "success", "data": {"template_id": "categories", "rows": CATEGORY_ROWS}}
    text = describe_success(_t({**CATALOGUE_TASK, "task_type": "product_info"}), result, "en")
    assert text == ("We sell 3 products in 2 categories. Footwear: Hiking Boots and Sneakers. "
                    "Travel: Backpack.")


def test_a_product_not_sold_is_said_before_what_the_store_sells() -> None:
    result = {"status": "success", "data": {"template_id": "categories", "rows": CATEGORY_ROWS,
                                            "not_sold": True}}
    text = describe_success(_t(CATALOGUE_TASK), result, "en")
    assert text.startswith("I couldn't find that among the products we sell, so we don't seem to carry it. "
                           "We sell 3 products in 2 categories.")


def test_a_cancelled_order_says_what_was_refunded_and_where() -> None:
    # Given a cancelled order whose total went back to a gift card
    row = {"order_id": "#W5400801", "order_status": "cancelled", "total": 3229.66, "shipments": [],
           "refunds": [{"amount": 3229.66, "payment_method": "gift card"}], "items": [{"name": "Laptop"}]}
    task = {"task_id": "t1", "task_type": "order_status", "tool": "predefined_cypher", "args": {}}
    # When it is described
    data = {"template_id": "order_overview", "row": row}
    text = describe_success(_t(task), {"status": "success", "data": data},
                            "en")
    # Then the customer reads the amount and the method, not "has been or will be refunded"
    assert text.startswith("Order #W5400801 was cancelled and refunded: $3229.66 to your gift card.")


def test_an_orders_items_come_with_what_they_add_up_to() -> None:
    rows = [{"order_id": "#W1", "product_name": "Kettle", "options": {"color": "black"}, "price": 98.25},
            {"order_id": "#W1", "product_name": "Mug", "options": {"size": "large"}, "price": 12.5}]
    task = {"task_id": "t1", "task_type": "order_items", "tool": "predefined_cypher", "args": {}}
    text = describe_success(_t(task),
                            {"status": "success", "data": {"template_id": "order_items", "rows": rows}},
                            "en")
    assert text.endswith("; $110.75 in all.")


def test_one_payment_on_an_order_is_said_to_be_one_charge() -> None:
    # Given "was I charged twice for #W1?" and an order with a single payment
    rows = [{"order_id": "#W1", "seq": 1, "type": "payment", "amount": 258.09,
             "payment_method": "Visa ending 1234"}]
    task = {"task_id": "t1", "task_type": "order_payments", "tool": "predefined_cypher", "args": {}}
    data = {"template_id": "order_payments", "rows": rows}
    text = describe_success(_t(task), {"status": "success", "data": data}, "en")
    # Then the reply says it was charged once, how much and to what
    assert text == "Order #W1 was charged once: $258.09 to your Visa ending 1234."


def test_the_payments_of_a_cancelled_order_say_it_was_cancelled() -> None:
    # Given "why'd yall charge my gift card twice for a digital camera??", one of the orders cancelled
    rows = [{"order_id": "#W1", "order_status": "cancelled", "seq": 1, "type": "payment", "amount": 3674.30,
             "payment_method": "gift card"},
            {"order_id": "#W1", "order_status": "cancelled", "seq": 2, "type": "refund", "amount": 3674.30,
             "payment_method": "gift card"}]
    task = {"task_id": "t1", "task_type": "order_payments", "tool": "predefined_cypher", "args": {}}
    text = describe_success(_t(task), {"status": "success", "data": {"template_id": "order_payments",
                                                                     "rows": rows}}, "en")
    # Then the refund beside the charge is said to be the order's cancellation
    assert text == "Order #W1 was cancelled; its payments: payment of $3674.30 (gift card) and refund of " \
                   "$3674.30 (gift card)."
    # and an order that is not cancelled lists its payments as before
    pending = [{**r, "order_status": "pending"} for r in rows]
    text = describe_success(_t(task), {"status": "success", "data": {"template_id": "order_payments",
                                                                     "rows": pending}}, "en")
    assert text.startswith("Payments on order #W1: payment of $3674.30")


def test_a_refund_names_what_it_was_for_and_where_it_went_in_chinese_too() -> None:
    # Given a refund of a cancelled order's Skateboard to PayPal
    row = {"order_id": "#W6111398", "order_status": "cancelled", "refund_count": 1, "refunded_total": 818.31,
           "refunds": [{"seq": 2, "amount": 818.31, "payment_method": "PayPal"}], "items": ["Skateboard"]}
    task = {"task_id": "t1", "task_type": "refund_status", "tool": "predefined_cypher", "args": {}}
    result = {"status": "success", "data": {"template_id": "refund_status", "row": row}}
    # When it is described in English and in Chinese
    english, chinese = describe_success(_t(task), result, "en"), describe_success(_t(task), result, "zh")
    # Then both say what the money was for, how much and where it went ("I don't remember what it's for")
    assert "Skateboard" in english and "$818.31" in english and "PayPal" in english
    assert "Skateboard" in chinese and "$818.31" in chinese and "PayPal" in chinese
    assert "issued" not in chinese
    # And when it shows there, by the policy, in the customer's language
    assert "within 5 to 7 business days" in english and "5 到 7 个工作日内" in chinese
    gift_card = {**row, "refunds": [{"seq": 2, "amount": 818.31, "payment_method": "gift card"}]}
    chinese = describe_success(_t(task), {"status": "success",
                                          "data": {"template_id": "refund_status", "row": gift_card}}, "zh")
    assert "立即到账" in chinese and "immediately" not in chinese


def test_a_cancellation_asked_about_is_told_as_what_would_go_back_where_and_when() -> None:
    # Given "if I cancelled it, how much would I get back?" planned as the order's payments, read as a
    # preview: $80 paid by card and $20 by gift card, $20 of the card's already refunded
    task = {"task_id": "t1", "task_type": "order_payments", "tool": "predefined_cypher",
            "args": {"template_id": "order_payments", "params": {"order_id": "#W0000001"},
                     "refund_preview": True}}
    card = "Visa ending 1234"
    rows = [{"order_id": "#W0000001", "type": "payment", "amount": 80.0, "payment_method": card},
            {"order_id": "#W0000001", "type": "payment", "amount": 20.0, "payment_method": "gift card"},
            {"order_id": "#W0000001", "type": "refund", "amount": 20.0, "payment_method": card}]
    result = {"status": "success", "data": {"template_id": "order_payments", "rows": rows}}
    # When it is described
    text = describe_success(_t(task), result, "en")
    # Then each method's share comes back, with the policy's timing for it
    assert text == ("If you cancelled order #W0000001, $60.00 would go back to your Visa ending 1234 "
                    "within 5 to 7 business days. If you cancelled order #W0000001, $20.00 would go back "
                    "to your gift card immediately.")


def test_a_return_asked_about_is_told_as_where_its_money_would_go_and_when() -> None:
    # Given "if I sent it back, would the money go to my paypal?" planned as the order's payments, read
    # as where a return's refund would go: the order paid by PayPal
    task = {"task_id": "t1", "task_type": "order_payments", "tool": "predefined_cypher",
            "args": {"template_id": "order_payments", "params": {"order_id": "#W0000001"}},
            "notes": {"return_preview": True}}
    rows = [{"order_id": "#W0000001", "type": "payment", "amount": 80.0, "payment_method": "PayPal"}]
    result = {"status": "success", "data": {"template_id": "order_payments", "rows": rows}}
    # When it is described
    text = describe_success(_t(task), result, "en")
    # Then the original method and the policy's timing answer, with the gift card the policy also allows
    assert text == ("If you returned items of order #W0000001, the refund would go back to your PayPal "
                    "within 5 to 7 business days, or to a gift card you already have if you prefer.")
    # And an order paid by gift card has its refund go back there, at once
    gift = [{**rows[0], "payment_method": "gift card"}]
    text = describe_success(_t(task), {"status": "success",
                                       "data": {"template_id": "order_payments", "rows": gift}}, "en")
    assert text == ("If you returned items of order #W0000001, the refund would go back to your gift card "
                    "immediately.")


def test_an_order_on_its_way_names_its_parcel_the_address_it_ships_to_and_what_is_in_it() -> None:
    # Given an order overview of a shipped order, its tracking number and item id as the store's numbers
    row = {"order_id": "#W2611340", "order_status": "processed", "total": 54.04,
           "shipments": [{"tracking_id": 264018395572, "carrier": "UPS", "estimated_delivery": "2024-05-07",
                          "delivered_at": None}],
           "address": {"address1": "18 Willow Bend", "address2": None, "city": "Austin", "state": "TX",
                       "zip": "78701", "country": "USA"},
           "refunds": None, "items": [{"name": "Water Bottle", "product_id": 8310926033}]}
    task = {"task_id": "t1", "task_type": "order_status", "tool": "predefined_cypher", "args": {}}
    # When it is described
    text = describe_success(_t(task), {"status": "success", "data": {"template_id": "order_overview",
                                                                     "row": row}}, "en")
    # Then the customer reads where the parcel is, where it goes and what is in it
    assert text == ("Order #W2611340 is processed (shipped). It's on its way with UPS (tracking number "
                    "264018395572) and should arrive by 2024-05-07. It ships to 18 Willow Bend, Austin, TX "
                    "78701, USA. It contains Water Bottle.")


def test_the_orders_holding_a_product_are_worded_order_by_order() -> None:
    # Given the customer's two orders with a tea kettle (the rows of `orders_with_product`)
    rows = [{"order_id": "#W1000001", "status": "processed", "created_at": "2024-04-25T16:15:57Z",
             "product_name": "Tea Kettle", "item_id": "1", "price": 94.68,
             "options": {"material": "glass", "capacity": "2 liters"}},
            {"order_id": "#W1000002", "status": "pending", "created_at": "2024-02-21T20:04:38Z",
             "product_name": "Tea Kettle", "item_id": "2", "price": 100.83,
             "options": {"material": "ceramic", "capacity": "1.5 liters"}}]
    task = {"task_id": "t1", "task_type": "product_info", "tool": "predefined_cypher", "args": {}}
    result = {"status": "success", "data": {"template_id": "orders_with_product", "rows": rows}}
    # When they are described
    text = describe_success(_t(task), result, "en")
    # Then each order is named with its status, date and the customer's item, not as raw columns
    assert "#W1000001 (processed (shipped), 2024-04-25): Tea Kettle (material: glass, capacity: 2 liters, " \
           "$94.68)" in text
    assert "#W1000002 (pending, 2024-02-21)" in text and "item id" not in text


def test_an_order_list_says_what_each_order_holds() -> None:
    # Given two orders with their products' names (a product twice in one order)
    rows = [{"order_id": "#W1000001", "status": "pending", "created_at": "2024-06-19", "total": 153.23,
             "lines": [{"line_no": 0, "name": "Desk Lamp"}]},
            {"order_id": "#W1000002", "status": "delivered", "created_at": "2024-05-01",
             "lines": [{"line_no": n, "name": name} for n, name in
                       enumerate(["Grill", "Electric Kettle", "Grill", "Coffee Maker", "Pet Bed"])][::-1]}]
    task = {"task_id": "t1", "task_type": "order_list", "tool": "predefined_cypher", "args": {}}
    result = {"status": "success", "data": {"template_id": "customer_orders", "rows": rows}}
    # When the list is described
    text = describe_success(_t(task), result, "en")
    # Then each entry opens with what the order holds, each product once, the first three of them
    assert "#W1000001 (Desk Lamp, pending, 2024-06-19, $153.23)" in text, text
    assert "#W1000002 (Grill, Electric Kettle, Coffee Maker…, delivered, 2024-05-01)" in text, text


def test_orders_holding_one_product_say_they_are_separate_orders() -> None:
    # Given the orders holding one product (the list asked with its id), two of them
    rows = [{"order_id": "#W1000001", "status": "delivered", "created_at": "2024-05-30", "total": 505.62,
             "lines": [{"line_no": 0, "name": "Bookshelf"}]},
            {"order_id": "#W1000002", "status": "delivered", "created_at": "2024-03-31", "total": 1438.85,
             "lines": [{"line_no": 1, "name": "Bookshelf"}, {"line_no": 0, "name": "Tablet"},
                       {"line_no": 2, "name": "Notebook"}]}]
    task = {"task_id": "t1", "task_type": "order_list", "tool": "predefined_cypher", "args": {}}
    result = {"status": "success", "data": {"template_id": "customer_orders", "rows": rows,
                                            "params": {"product_id": "8600330539"}}}
    # When the list is described / Then it says the product is in two separate orders, each paid
    text = describe_success(_t(task), result, "en")
    assert text.startswith(
        "You have 2 separate orders with the Bookshelf, each paid on its own: #W1000001"), text
    # (one order, or a list not asked by product, is the plain list)
    result["data"]["rows"] = rows[:1]
    assert describe_success(_t(task), result, "en").startswith("Here are your orders: #W1000001")


def test_the_options_a_product_comes_in_are_said_with_their_values() -> None:
    # Given "what kinda options does the portable charger come in? like sizes n stuff"
    rows = [{"product_name": "Portable Charger", "option_key": "capacity", "variants": 9,
             "option_values": ["20000mAh", "5000mAh", "10000mAh"]},
            {"product_name": "Portable Charger", "option_key": "color", "variants": 9,
             "option_values": ["white", "black"]}]
    task = {"task_id": "t1", "task_type": "product_info", "tool": "predefined_cypher", "args": {}}
    text = describe_success(_t(task), {"status": "success", "data": {"template_id": "product_options",
                                                                     "rows": rows}}, "en")
    # Then each option is said with the values it comes in, smallest first
    assert text == ("You can choose the Portable Charger by capacity (5000mAh, 10000mAh or 20000mAh) and "
                    "color (black or white).")
