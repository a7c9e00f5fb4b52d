"""The planner: intents and entities in, structured tasks out (pure, no I/O)."""

from __future__ import annotations

from functools import partial

import pytest

from csagent.domain.models import Task, ToolResult
from csagent.domain.task_args import ProductRef
from csagent.planning import plan_tasks, resolve_args

ORDER = "#W2611340"
ADDRESS = {"address1": "12 Main St", "city": "Springfield", "state": "IL", "zip": "62704"}


def clause(intent: str, text: str = "", **entities) -> dict:
    return {"intent": intent, "text": text or intent, "confidence": 0.9, "entities": entities}


def test_the_compound_example_yields_three_tasks_with_the_warranty_after_the_lookup():
    # Given "check order #W…, tell me the warranty of that product, and update my address to …"
    clauses = [clause("order_status", order_id=ORDER),
               clause("warranty", "the warranty of that product", order_id=ORDER,
                      reference={"kind": "product", "hint": None}),
               clause("update_default_address", address=ADDRESS)]
    # When it is planned
    plan = plan_tasks(clauses)
    # Then there are three tasks and the warranty depends on the order lookup
    assert [(t.task_id, t.task_type, t.tool) for t in plan.tasks] == [
        ("t1", "order_status", "predefined_cypher"), ("t2", "warranty", "knowledge_search"),
        ("t3", "update_default_address", "customer_actions")]
    assert plan.tasks[1].depends_on == ("t1",)
    assert plan.tasks[0].depends_on == () and plan.tasks[2].depends_on == ()


def test_a_missing_parameter_is_reported_not_guessed():
    plan = plan_tasks([clause("update_default_address"), clause("order_status")])
    assert plan.tasks == []
    assert [m["parameter"] for m in plan.missing] == ["address", "order_id"]


def test_a_mistyped_order_id_is_asked_about_even_when_an_earlier_order_is_remembered():
    plan = plan_tasks([clause("order_status", invalid_order_id="#W12345")],
                      memory={"last_order_id": ORDER})
    assert plan.tasks == []
    assert plan.missing == [{"intent": "order_status", "parameter": "order_id", "text": "order_status",
                             "invalid": "#W12345", "entities": {}}]


def test_that_order_in_a_later_turn_uses_the_remembered_order():
    plan = plan_tasks([clause("order_items")], memory={"last_order_id": ORDER})
    assert answered_by(plan.tasks[0]) == ("order_items", {"order_id": ORDER})


def test_duplicates_are_merged_and_the_cap_is_applied():
    # Given the same question twice and more distinct tasks than the cap
    clauses = [clause("order_status", order_id=ORDER), clause("tracking", order_id=ORDER)] + [
        clause("order_items", order_id=f"#W000000{i}") for i in range(6)]
    # When planned with a cap of 5
    plan = plan_tasks(clauses, max_tasks=5)
    # Then the status and tracking questions share one lookup, and the overflow is counted
    assert len(plan.tasks) == 5
    assert plan.dropped == 2


def test_resolve_args_takes_the_referenced_product_from_the_lookup():
    task = Task(task_id="t2", task_type="warranty", tool="knowledge_search", depends_on=("t1",),
                args={"question": "warranty on those headphones",
                      "products_from": {"task": "t1", "hint": "headphones"}})
    lookup = ToolResult.model_validate({
        "task_id": "t1", "task_type": "order_status", "tool": "predefined_cypher", "status": "success",
        "data": {"template_id": "order_overview", "row": {"items": [
            {"product_id": "111", "name": "Water Bottle"}, {"product_id": "222", "name": "Headphones"}]}}})
    resolved = resolve_args(task, {"t1": lookup})
    assert resolved.args.model_dump() == {"question": "warranty on those headphones", "product_ids": ["222"]}
    assert resolved.notes.products_from is None


def test_a_cancellation_without_a_reason_waits_for_it_keeping_the_order():
    plan = plan_tasks([clause("cancel_order", order_id=ORDER)])
    assert plan.tasks == []
    assert plan.missing[0]["parameter"] == "reason"
    assert plan.missing[0]["entities"] == {"order_id": ORDER}


def test_a_clause_naming_several_orders_gives_each_order_its_own_task():
    # Given "status of #W3220203, #W9300146 and #W4316152 please" understood as one clause
    ids = ["#W3220203", "#W9300146", "#W4316152"]
    # When it is planned
    plan = plan_tasks([clause("order_status", order_id=ids[0], order_ids=ids)])
    # Then there is one order lookup per order, in the order given
    assert [t.args.params["order_id"] for t in plan.tasks] == ids
    assert {t.task_type for t in plan.tasks} == {"order_status"}


def test_a_clause_that_only_adds_a_reason_completes_the_earlier_cancellations():
    # Given "Please cancel #W5694685 and #W6689278" + "I ordered both by mistake"
    clauses = [clause("cancel_order", order_id="#W5694685", order_ids=["#W5694685", "#W6689278"]),
               clause("cancel_order", "I ordered both by mistake", reason="ordered by mistake")]
    # When it is planned
    plan = plan_tasks(clauses)
    # Then both orders get a cancellation proposal with that reason, and nothing is asked
    assert [(t.args.args["order_id"], t.args.args["reason"]) for t in plan.tasks] == [
        ("#W5694685", "ordered by mistake"), ("#W6689278", "ordered by mistake")]
    assert plan.missing == []


def test_a_second_request_with_its_own_order_is_not_folded_into_the_first():
    # Given two cancellations, each naming its order
    clauses = [clause("cancel_order", order_id="#W5694685", reason="no longer needed"),
               clause("cancel_order", order_id="#W6689278", reason="ordered by mistake")]
    # When it is planned
    plan = plan_tasks(clauses)
    # Then each keeps its own order and reason
    assert [(t.args.args["order_id"], t.args.args["reason"]) for t in plan.tasks] == [
        ("#W5694685", "no longer needed"), ("#W6689278", "ordered by mistake")]


def test_a_return_without_item_ids_carries_the_customers_words_and_products_to_the_tool():
    # Given a return request naming an item by name, matched to a catalogue product
    clauses = [{"text": "return the skateboard from #W6344370", "intent": "return_request",
                "entities": {"order_id": "#W6344370",
                             "products": [{"product_id": "p1", "name": "Skateboard"}]}}]
    # When the planner plans it
    task = plan_tasks(clauses).tasks[0]
    # Then the tool gets the words and the product to match against the order's own lines
    assert task.args.args == {"order_id": "#W6344370",
                                 "items_text": "return the skateboard from #W6344370", "product_ids": ["p1"]}


def test_a_tracking_question_about_another_order_reads_that_orders_overview():
    # Given a refund question about one order and a tracking question about another
    clauses = [clause("refund_status", order_id=ORDER), clause("tracking", order_id="#W2435638")]
    # When planned
    plan = plan_tasks(clauses)
    # Then the refunds of the first and the overview (status, shipments, tracking) of the second are read
    assert [answered_by(t) for t in plan.tasks] == [
        ("refund_status", {"order_id": ORDER}), ("order_overview", {"order_id": "#W2435638"})]


def answered_by(task):
    """(the template that answers unless a more specific order question matches, its parameters)."""
    return task.args.template_id or task.args.fallback_template, task.args.params


def test_an_order_question_may_be_answered_by_a_more_specific_template():
    # Given "where will order #W… ship to?" read as an order status question
    plan = plan_tasks([{"text": "where will order #W2611340 ship to?", "intent": "order_status",
                        "entities": {"order_id": ORDER}}])
    # Then the tool may pick the shipping-address question, and falls back to the overview
    args = plan.tasks[0].args
    assert args.fallback_template == "order_overview" and "order_shipping_address" in args.templates


def test_a_follow_up_pointing_back_at_the_product_joins_the_catalogue_question():
    # Given "Can I get the wall clock in wood? Is it in stock?" split into two catalogue clauses
    clauses = [{"text": "Can I get the wall clock in wood?", "intent": "product_availability",
                "entities": {"products": [{"product_id": "p-clock", "name": "Wall Clock"}]}},
               {"text": "Is it in stock?", "intent": "product_availability",
                "entities": {"reference": {"kind": "product", "hint": None}}}]
    # When the planner plans them
    plan = plan_tasks(clauses)
    # Then one catalogue task asks the whole question, and nothing is asked back
    assert [t.task_type for t in plan.tasks] == ["product_availability"]
    assert plan.tasks[0].args.question == "Can I get the wall clock in wood? Is it in stock?"
    assert plan.missing == []


def test_a_question_about_a_return_gets_the_facts_not_a_proposal():
    # Given "how much would I get back if I returned the lamp?", read as a return that nobody asked for
    plan = plan_tasks([{"text": "how much would I get back if I returned the lamp?",
                        "intent": "return_request",
                        "entities": {"order_id": ORDER, "asks_for_change": False}}])
    # Then the order's return eligibility and items (with prices) are read, and its payments, read as
    # where the refund would go; nothing is proposed
    assert [getattr(t.args, "template_id", None) for t in plan.tasks] == ["return_eligibility", "order_items",
                                                                          "order_payments"]
    assert plan.tasks[2].notes.return_preview is True
    assert all(t.tool != "customer_actions" for t in plan.tasks)


def test_a_question_about_a_return_the_store_s_documents_answer_gets_their_rule_too():
    # Given a question about returning an item of a found order that the documents answer in almost
    # these words (the shipped asked questions, read with the shipped MiniLM, as the router does)
    from csagent.knowledge.asked import ShippedQuestions
    from csagent.nlp.embeddings import get_embedder

    documents_know = partial(ShippedQuestions().documents_know, get_embedder())
    plan = plan_tasks([{"text": "can I return my sneakers if I only tried them on at home?",
                        "intent": "return_request",
                        "entities": {"order_id": ORDER, "asks_for_change": False}}],
                      documents_know=documents_know)
    # Then the order's facts are read, and the store's rule is looked up beside them (said only if
    # found); nothing is proposed
    assert [getattr(t.args, "template_id", None) for t in plan.tasks] == [
        "return_eligibility", "order_items", None]
    assert plan.tasks[-1].tool == "knowledge_search" and plan.tasks[-1].notes.supplementary is True
    assert all(t.tool != "customer_actions" for t in plan.tasks)


def test_a_request_for_a_return_is_proposed():
    plan = plan_tasks([{"text": "return the lamp please", "intent": "return_request",
                        "entities": {"order_id": ORDER, "asks_for_change": True}}])
    assert [t.tool for t in plan.tasks] == ["customer_actions"]


def test_a_reason_clause_beside_a_cancellation_is_not_a_second_request():
    # Given "please cancel order #W…, I ordered it by mistake" split in two cancellation clauses
    clauses = [{"text": "please cancel order #W2611340", "intent": "cancel_order",
                "entities": {"order_id": ORDER, "reason": "ordered by mistake", "asks_for_change": True}},
               {"text": "I ordered it by mistake", "intent": "cancel_order",
                "entities": {"order_id": ORDER, "reason": "ordered by mistake", "asks_for_change": False}}]
    # Then only the cancellation is planned
    assert [t.tool for t in plan_tasks(clauses).tasks] == ["customer_actions"]


def test_an_aside_beside_a_question_is_not_asked_about():
    # Given scene-setting that reads weakly like an order question, and a real question
    clauses = [{**clause("order_items", "My aunt gave me a gift card for my birthday"), "confidence": 0.34},
               clause("policy_question", "do your gift cards expire?")]
    # When planned / Then only the question is answered, and no order number is asked for
    plan = plan_tasks(clauses)
    assert [t.task_type for t in plan.tasks] == ["policy"] and plan.missing == []


def test_a_weak_tag_whose_order_only_its_status_finds_is_not_asked_about_beside_a_sure_question():
    # Given a sure question, and a tag read below even odds as an order question whose order only its
    # status found (every order listed back)
    listed = {"order_candidates": ["#W1", "#W2"], "grounded_orders": ["#W1", "#W2"],
              "grounded": {"by": "status"}, "question": "Which of your orders do you mean: #W1; #W2?"}
    question = {**clause("policy_question", "do I have to pay for the return label?"), "confidence": 0.92}
    tag = {**clause("order_items", "Just want to know before I order"), "confidence": 0.49,
           "entities": listed}
    # When planned / Then only the question is answered, and no order is asked about
    plan = plan_tasks([question, tag])
    assert [t.task_type for t in plan.tasks] == ["policy"] and plan.missing == []
    # and so are words of an order not placed yet, however surely read
    for future in ("Just want to know before I order", "I'd like to know before I place my next order"):
        plan = plan_tasks([question, {**tag, "text": future, "confidence": 0.8}])
        assert [t.task_type for t in plan.tasks] == ["policy"] and plan.missing == [], future
    # while other words read as surely, or naming a status ("and the pending one?"), are asked about
    sure = plan_tasks([question, {**tag, "text": "Just want to know about my order", "confidence": 0.8}])
    assert [m["parameter"] for m in sure.missing] == ["order_id"]
    pending = plan_tasks([question, {**tag, "text": "and the pending one?"}])
    assert [m["parameter"] for m in pending.missing] == ["order_id"]


def test_order_list_questions_make_one_list_filtered_with_their_negation():
    plan = plan_tasks([clause("order_list", "which of my orders haven't arrived yet?"),
                       clause("order_list", "not the ones I already have")])
    assert [t.args.model_dump() for t in plan.tasks] == [
        {"template_id": "customer_orders", "params": {"status": "pending", "also_status": "processed"}}]
    negated = plan_tasks([clause("order_list", "which of my orders were NOT cancelled?")])
    assert negated.tasks[0].args.params == {"not_status": "cancelled"}


def test_a_request_asked_again_with_its_order_keeps_the_earlier_details():
    plan = plan_tasks([clause("cancel_order", "I ordered it by mistake", reason="ordered by mistake"),
                       clause("cancel_order", "cancel #W2611340", order_id=ORDER)])
    assert len(plan.tasks) == 1
    assert plan.tasks[0].args.args == {"order_id": ORDER, "reason": "ordered by mistake"}


def test_cancelling_some_items_gets_the_orders_facts_and_the_rule_not_a_reason_question():
    # Given "cancel only the earbuds", grounded to an order with other items
    plan = plan_tasks([clause("cancel_order", "can you cancel only the earbuds?", order_id=ORDER,
                              partial_items=["Wireless Earbuds"], asks_for_change=True)])
    # Then the order's cancellation facts and the store's rule are looked up; nothing is proposed
    assert [t.task_type for t in plan.tasks] == ["cancellation_eligibility", "policy"]
    assert plan.missing == []


def test_a_complaint_gets_the_orders_facts_and_what_the_store_does_nothing_proposed():
    # Given "charged twice for the boots", the boots being in two orders
    clauses = [clause("complaint", "why am I paying for the same hiking boots twice??",
                      order_ids=[ORDER, "#W1111111"]),
               clause("change_items", "I only need ONE pair", asks_for_change=False,
                      order_candidates=[ORDER, "#W1111111"], question="which one?")]
    # When planned
    plan = plan_tasks(clauses)
    # Then both orders' items with their prices and their payments are read, the store's documents
    # asked, and nothing asked back
    assert [t.task_type for t in plan.tasks] == ["order_items", "order_payments", "policy",
                                                 "order_items", "order_payments"]
    assert plan.missing == []


def test_a_parcel_marked_delivered_but_missing_gets_the_orders_facts_and_the_stores_rule_for_it():
    from csagent.planning import RULE_QUESTIONS

    told = "my earbuds order is showing delivered but I don't find the package"
    plan = plan_tasks([clause("complaint", told, order_id=ORDER, parcel_missing=True,
                              products=[{"product_id": "p-earbuds", "name": "Wireless Earbuds"}])])
    # the order's facts, and the rule for a parcel gone missing, not the earbuds' manual
    assert [t.task_type for t in plan.tasks] == ["order_status", "policy"]
    assert plan.tasks[1].args.question == RULE_QUESTIONS["parcel_missing"]
    assert not plan.tasks[1].args.product_ids
    assert plan.missing == []


def test_a_complaint_beside_a_change_of_the_same_order_is_why_the_change_is_asked():
    plan = plan_tasks([clause("cancel_order", "please cancel order #W2611340", order_id=ORDER,
                              reason="ordered by mistake", asks_for_change=True),
                       clause("complaint", "I ordered it by mistake", order_id=ORDER)])
    assert [t.task_type for t in plan.tasks] == ["cancel_order"]


def test_a_change_an_orders_status_rules_out_gets_the_facts_and_the_rule_before_any_question():
    # Given "cancel my hiking boots order", grounded to a delivered order, with no reason given
    plan = plan_tasks([clause("cancel_order", "cancel my hiking boots order", order_id=ORDER,
                              order_status="delivered", asks_for_change=True)])
    # Then the cancellation facts answer (the rule, and what is allowed instead): no reason asked
    assert [t.task_type for t in plan.tasks] == ["cancellation_eligibility"]
    assert plan.missing == []
    # And a pending order still waits for the reason, naming the order
    pending = plan_tasks([clause("cancel_order", "cancel my hiking boots order", order_id=ORDER,
                                 order_status="pending", asks_for_change=True)])
    assert [m["parameter"] for m in pending.missing] == ["reason"]
    from csagent.replies import ask_for

    assert ORDER in ask_for(pending.missing[0], "en")


def test_an_order_whose_items_were_modified_gets_the_rule_not_a_question_about_the_new_version():
    # Given "also switch the hose in that order to the 25ft one" about an order modified once
    plan = plan_tasks([clause("change_items", "also switch the hose in that order to the 25ft one",
                              order_id=ORDER, order_status="pending (item modified)", asks_for_change=True)])
    # Then its facts and the rule answer (the policy allows one modification): nothing is asked
    assert "return_eligibility" in [t.task_type for t in plan.tasks]
    assert plan.missing == []


def test_a_request_told_in_two_clauses_is_one_request_with_the_details_of_both():
    # Given "Could you redirect the order with the grill? It's 1550 N Central Ave, ..."
    clauses = [clause("change_order_address", "Could you redirect the order with the grill to my office?",
                      order_id=ORDER, asks_for_change=True),
               clause("change_order_address", "It's 12 Main St, Springfield, IL 62704.", order_id=ORDER,
                      address=ADDRESS, asks_for_change=False)]
    # When it is planned
    plan = plan_tasks(clauses)
    # Then one proposal carries the order and the address
    assert [t.task_type for t in plan.tasks] == ["change_order_address"]
    assert plan.tasks[0].args.args["address"] == ADDRESS and plan.missing == []


def test_an_address_after_an_orders_address_change_completes_it_unless_it_names_the_account():
    order_change = clause("change_order_address", "You're shipping my camera order to an old address!",
                          order_id=ORDER, asks_for_change=False)
    home = clause("update_default_address", "Change it to my home: 12 Main St, Springfield, IL 62704.",
                  address=ADDRESS, asks_for_change=True)
    # When the address follows the order's change, it is that change's address
    plan = plan_tasks([order_change, home])
    assert [t.task_type for t in plan.tasks] == ["change_order_address"]
    # But "and my default address too" is a request of its own
    default = clause("update_default_address", "and make that my default address too", address=ADDRESS,
                     asks_for_change=True)
    both = plan_tasks([{**order_change, "entities": {**order_change["entities"], "address": ADDRESS,
                                                      "asks_for_change": True}}, default])
    assert [t.task_type for t in both.tasks] == ["change_order_address", "update_default_address"]


def test_how_much_a_change_would_move_is_answered_beside_its_facts():
    # Given "if I cancelled the order with the kettle, how much would I get back?", not asked for
    plan = plan_tasks([clause("cancel_order", "if I cancelled it, how much would I get back?", order_id=ORDER,
                              order_status="pending", asks_for_change=False)])
    # Then the cancellation facts and the order's payments, read as what would go back, answer it
    assert [t.task_type for t in plan.tasks] == ["cancellation_eligibility", "order_payments"]
    assert plan.tasks[1].notes.refund_preview is True
    # And when it also asks how soon, that preview says it (no generic refund-timing page beside it)
    asked = "if I cancelled it, how much would I get back, and how quickly?"
    when = plan_tasks([clause("cancel_order", asked, order_id=ORDER, order_status="pending",
                              asks_for_change=False)])
    assert [t.task_type for t in when.tasks] == ["cancellation_eligibility", "order_payments"]


def test_a_clause_that_points_back_at_a_product_named_elsewhere_searches_with_its_name():
    # Given "my chair's seat keeps sinking. Is that covered, and for how long?" (the warranty clause
    # names nothing; the message named the Office Chair in its order)
    plan = plan_tasks([clause("warranty", "for how long?", order_id=ORDER, told_of=["4794339885"],
                              told_of_names=["Office Chair"])])
    # Then the warranty terms are searched for that product, by its name
    [task] = plan.tasks
    assert task.args.product_ids == ["4794339885"]
    assert task.args.question == "Office Chair: for how long?"


def test_an_order_list_beside_a_read_asks_for_no_order_number():
    # Given "Which of my orders haven't arrived? Just the ones on their way." (the second clause
    # reads as an order's status, naming no order)
    plan = plan_tasks([clause("order_list", "Which of my orders haven't arrived?"),
                       clause("order_status", "Just the ones on their way, please.")])
    # Then the list answers; no order number is asked for beside it
    assert [t.task_type for t in plan.tasks] == ["order_list"] and plan.missing == []
    # Without the list, the read still asks which order
    alone = plan_tasks([clause("order_status", "Just the ones on their way, please.")])
    assert [m["parameter"] for m in alone.missing] == ["order_id"]


def test_a_complaint_naming_a_charger_is_not_about_money():
    # Given a missing parcel whose order holds a portable charger
    plan = plan_tasks([clause("complaint", "the order with the portable charger says delivered. nothing here",
                              order_id=ORDER)])
    # Then the order's status answers, not its payments
    assert [t.task_type for t in plan.tasks] == ["order_status", "policy"]


def test_a_complaint_naming_an_amount_gets_what_the_order_was_charged():
    # Given "PayPal shows 296.82 taken out TWICE" about an order: an amount, in no word of money
    plan = plan_tasks([clause("complaint", "PayPal shows 296.82 taken out TWICE", order_id=ORDER)])
    # Then each item with its price and what was paid answer
    assert [t.task_type for t in plan.tasks] == ["order_items", "order_payments", "policy"]


def test_a_request_with_every_detail_goes_to_the_action_whose_policy_check_says_why_not():
    # Given "cancel #W…, I ordered it by mistake" about a processed order: nothing to ask
    plan = plan_tasks([clause("cancel_order", "cancel it, I ordered it by mistake", order_id=ORDER,
                              reason="ordered by mistake", order_status="processed", asks_for_change=True)])
    # Then the action runs (its policy check refuses with the rule)
    assert [t.task_type for t in plan.tasks] == ["cancel_order"]


KETTLE = {"product_id": "1075968781", "name": "Electric Kettle", "options": {"capacity": "2L"}}
LAPTOP = {"product_id": "4760268021", "name": "Laptop", "options": {}}


def test_a_catalogue_question_carries_the_one_product_its_words_were_grounded_to():
    # Given a product question grounded to the 2L kettle
    plan = plan_tasks([clause("product_info", "how much is the 2L kettle?", products=[KETTLE])])
    # When planned, the task carries that product (and its options) for the tool
    assert plan.tasks[0].args.product == ProductRef.model_validate(KETTLE)
    assert plan.tasks[0].args.context_product is None


def test_two_products_named_are_left_to_the_words():
    plan = plan_tasks([clause("product_info", "kettle or laptop?", products=[KETTLE, LAPTOP])])
    assert plan.tasks[0].args.product is None and plan.tasks[0].args.context_product is None


def test_a_later_clause_without_a_product_is_about_the_earlier_clauses_product():
    # Given "do you have the 2L kettle? how much?", split in two
    plan = plan_tasks([clause("product_availability", "do you have the 2L kettle?", products=[KETTLE]),
                       clause("product_info", "how much?")], memory={"last_product": LAPTOP})
    # Then the second question is about the kettle, not the product of an earlier turn
    assert plan.tasks[1].args.context_product == ProductRef.model_validate(KETTLE)


def test_a_follow_up_turn_is_about_the_remembered_product():
    plan = plan_tasks([clause("product_info", "which colour is that one?")], memory={"last_product": LAPTOP})
    assert plan.tasks[0].args.context_product == ProductRef.model_validate(LAPTOP)


def test_a_complaint_about_a_product_of_the_order_gets_its_items_and_a_quiet_policy_search():
    # Given "you sent me the grey backpack, I wanted black" grounded to order #W2611340
    backpack = {"product_id": "2524789262", "name": "Backpack", "options": {"color": "grey"}}
    plan = plan_tasks([clause("complaint", "you sent me the grey backpack, I wanted black",
                              order_id=ORDER, products=[backpack])])
    # Then the order's overview, its items option by option, and the documents' word if any
    assert [(t.task_type, getattr(t.args, "template_id", None)) for t in plan.tasks] == [
        ("order_status", "order_overview"), ("order_items", "order_items"), ("policy", None)]
    assert plan.tasks[2].notes.supplementary is True


def test_a_complaint_searches_the_documents_of_the_products_it_names():
    # Given "my robot vacuum won't go back on its dock" grounded to a delivered order
    vacuum = {"product_id": "1762337868", "name": "Vacuum Cleaner", "options": {}}
    plan = plan_tasks([clause("complaint", "my robot vacuum won't go back on its dock",
                              order_id=ORDER, products=[vacuum])])
    # Then the documents are searched for that product (its manual's troubleshooting can answer)
    assert plan.tasks[-1].task_type == "policy"
    assert plan.tasks[-1].args.product_ids == ["1762337868"]
    assert plan.tasks[-1].args.general_too is True  # the general pages too, when closer
    # And a clause naming none searches with the products the message named in its order
    plan = plan_tasks([clause("complaint", "i push the igniter and nothing happens", order_id=ORDER,
                              told_of=["6819683148"])])
    assert plan.tasks[-1].args.product_ids == ["6819683148"]
    assert [t.task_type for t in plan.tasks] == ["order_status", "policy"]  # no item list for it


def test_a_statement_about_the_item_a_change_is_asked_for_is_its_story_not_a_question():
    # Given "I used the electric toothbrush once and it's not for me. Would I be able to return it?"
    brush = {"product_id": "7352963235", "name": "Electric Toothbrush", "options": {}}
    story = clause("product_info", "I used the electric toothbrush from order #W2611340 once, not for me",
                   order_id=ORDER, products=[brush])
    ask = clause("return_request", "Would I be able to return it?", order_id=ORDER,
                 not_returnable=["Electric Toothbrush"], asks_for_change=False)
    plan = plan_tasks([story, ask])
    # Then only the store's rule answers, about that order, from the returns pages first
    assert [t.task_type for t in plan.tasks] == ["policy"]
    assert plan.tasks[0].args.topic == "returns"
    assert plan.tasks[0].notes.order_id == ORDER
    # But a question about the product beside it is still asked of the catalogue
    question = clause("product_info", "does the electric toothbrush have a travel case?", products=[brush])
    assert [t.task_type for t in plan_tasks([question, ask]).tasks][0] != "policy"


def test_a_complaint_that_nothing_came_lists_the_orders_not_delivered():
    plan = plan_tasks([clause("complaint", "I have been waiting forever and NOTHING has shown up")])
    assert [t.task_type for t in plan.tasks] == ["order_list", "policy"]
    assert plan.tasks[0].args.params == {"status": "pending", "also_status": "processed"}


def test_a_complaint_naming_no_order_asks_the_documents_outright():
    plan = plan_tasks([clause("complaint", "your deliveries are always late")])
    assert [t.task_type for t in plan.tasks] == ["policy"]
    assert plan.tasks[0].notes.supplementary is False


def test_where_the_money_of_an_item_change_goes_is_part_of_it_not_a_return():
    # Given "Can you switch it to the black XL? Any refund can go back to my credit card.", the
    # second clause read as a return of the same order that names no item
    change = clause("change_items", "Can you switch it to the black XL cotton crew neck?", order_id=ORDER,
                    item_ids=["1"], new_item_ids=["2"], item_action="modify_items",
                    payment_method_id="card_1", asks_for_change=True)
    money = clause("return_request", "Any refund can go back to my credit card", order_id=ORDER,
                   item_ids=["1"], payment_method_id="card_1", asks_for_change=True)
    plan = plan_tasks([change, money])
    # Then one write is proposed: the modification
    assert [t.tool for t in plan.tasks] == ["customer_actions"]
    assert plan.tasks[0].args.action == "modify_items"
    # But a return that names its own item stays a request of its own
    item = clause("return_request", "and return the lamp, refund to my credit card", order_id=ORDER,
                  item_ids=["3"], products=[{"product_id": "p3", "name": "Lamp"}],
                  payment_method_id="card_1", asks_for_change=True)
    assert len(plan_tasks([change, item]).tasks) == 2


EARBUDS = {"product_id": "9924732112", "name": "Wireless Earbuds", "options": {}, "surface": "earbuds"}


def test_a_product_question_for_its_documents_searches_them_first_with_the_catalogue_as_fallback():
    # Given "are the IPX7 earbuds ok for swimming?", read as a question the product's documents answer
    plan = plan_tasks([clause("product_info", "are the earbuds ok for swimming?", products=[EARBUDS],
                              documents_first=True)])
    # Then the documents of that product are searched (quiet if they say nothing), and the catalogue's
    # facts stand in for them only then
    documents, catalogue = plan.tasks
    assert (documents.tool, documents.args.product_ids, documents.notes.supplementary) == (
        "knowledge_search", ["9924732112"], True)
    assert catalogue.tool == "predefined_cypher" and catalogue.notes.fallback_for == documents.task_id


def test_an_availability_question_naming_nothing_sold_says_so_when_nothing_matches():
    # Given "do you carry sofas?" (no catalogue product found in the words)
    plan = plan_tasks([clause("product_availability", "do you carry sofas?")])
    # Then the catalogue tool is told to answer "not sold" rather than fail when no template matches
    assert plan.tasks[0].args.unmatched == "not_sold"
    # but a question about a product the store sells is not
    named = plan_tasks([clause("product_availability", "got earbuds?", products=[EARBUDS])])
    assert named.tasks[0].args.unmatched is None


PHONE = {"product_id": "1801728040", "name": "Smartphone", "options": {}, "surface": "smartphones"}
TABLET = {"product_id": "8024098596", "name": "Tablet", "options": {}, "surface": "tablets"}
DUMBBELLS = {"product_id": "7233192239", "name": "Dumbbell Set", "options": {}, "surface": "weight"}
CHAIR = {"product_id": "4794339885", "name": "Office Chair", "options": {}, "surface": "office chair"}


def test_a_catalogue_question_naming_products_side_by_side_is_asked_of_each():
    plan = plan_tasks([clause("product_availability", "do you sell smartphones and tablets?",
                              products=[PHONE, TABLET])])
    assert [t.args.product.name for t in plan.tasks if t.args.product] == ["Smartphone", "Tablet"]


def test_a_product_word_describing_another_is_not_asked_about():
    # "weight" in "the weight limit on the office chair" is no second product asked about
    plan = plan_tasks([clause("product_info", "what's the weight limit on the office chair",
                              products=[DUMBBELLS, CHAIR])])
    assert len(plan.tasks) == 1 and plan.tasks[0].args.product is None


def test_a_warranty_question_asks_the_knowledge_base_about_the_warranty_topic():
    # Given a warranty question about a named product, and a policy question
    plan = plan_tasks([clause("warranty", "warranty on an electric kettle?",
                              products=[{"product_id": "1075968781", "name": "Electric Kettle"}]),
                       clause("policy_question", "how long do refunds take?")])
    # Then the warranty search names its topic (its terms answer before the kettle's manual), the
    # policy search none
    assert plan.tasks[0].args.topic == "warranty"
    assert plan.tasks[1].args.topic is None


def test_a_catalogue_question_naming_a_category_lists_what_the_category_holds():
    # Given "yall got any pet stuff?", its category grounded and no product named
    plan = plan_tasks([clause("product_availability", "yall got any pet stuff?",
                              categories=["Pet Supplies"])])
    # Then the category's products are looked up
    assert [(t.tool, t.args.template_id, t.args.params) for t in plan.tasks] == [
        ("predefined_cypher", "products_in_category", {"category": "Pet Supplies"})]


def test_a_question_about_a_change_with_no_order_of_the_customers_gets_the_rule():
    # Given a question about returning something, with no order found
    general = plan_tasks([clause("return_request", "could I return a perfume once I've opened it?",
                                 asks_for_change=False)])
    own = plan_tasks([clause("return_request", "can I return my perfume?", asks_for_change=False)])
    # Then the store's rule answers it; only a question about the customer's own purchase also asks
    # which order
    assert [t.task_type for t in general.tasks] == ["policy"] and general.missing == []
    assert [t.task_type for t in own.tasks] == ["policy"]
    assert [m["parameter"] for m in own.missing] == ["order_id"]


def test_a_cancellation_of_an_order_already_cancelled_reads_its_refund():
    # Given "cancel the smart watch, i dont want it anymore" grounded to an order already cancelled
    plan = plan_tasks([clause("cancel_order", "cancel the smart watch i dont want it anymore", order_id=ORDER,
                              order_status="cancelled", reason="no longer needed")])
    # Then the order and its refund are read, and nothing is proposed
    assert [(t.task_type, t.args.template_id) for t in plan.tasks] == [
        ("order_status", "order_overview"), ("refund_status", "refund_status")]
    assert plan.missing == []


def test_a_complaint_telling_why_a_change_is_asked_about_does_not_drop_the_question():
    # Given "I ordered a tablet" (read as a complaint naming no one order) and "I've changed my mind
    # about the colour, can I switch it?", whose words fit two of the customer's orders
    question = "You have 2 orders with the Tablet: #W1, #W2. Which one do you mean?"
    plan = plan_tasks([clause("complaint", "I ordered a tablet"),
                       clause("change_items", "I've changed my mind about the colour, can I switch it?",
                              asks_for_change=False, order_candidates=["#W1", "#W2"], question=question)])
    # Then which order is asked (the complaint only told why), not nothing at all
    assert [(m["parameter"], m["question"]) for m in plan.missing] == [("order_id", question)]


def test_a_question_about_a_found_orders_change_the_documents_do_not_know_gets_its_facts_alone():
    # Given "I opened the perfume, can I still send it back?" about a found order
    question = clause("return_request", "I opened the perfume, can I still send it back?",
                      order_id=ORDER, asks_for_change=False)
    # When the documents do not answer it in almost these words, or cannot be asked
    for documents_know in (lambda text: False, None):
        plan = plan_tasks([question], documents_know=documents_know)
        # Then the order's facts alone are read
        assert [getattr(t.args, "template_id", None) for t in plan.tasks] == [
            "return_eligibility", "order_items"]


def test_a_statement_about_a_change_never_asks_the_documents():
    # Given "the perfume arrived opened" (a statement, not a question) about a found order
    statement = clause("return_request", "the perfume arrived opened", order_id=ORDER, asks_for_change=False)
    # Then whether the documents know it is not even asked
    plan = plan_tasks([statement], documents_know=lambda text: pytest.fail(f"asked about {text!r}"))
    assert all(t.tool != "knowledge_search" for t in plan.tasks)


def test_a_product_question_naming_no_product_has_the_store_pages_as_its_fallback():
    # Given "u guys price match?", read as a product question that names no product
    plan = plan_tasks([clause("product_info", "u guys price match?")])
    # Then the catalogue is asked, and the store's pages answer if it does not know the question
    catalogue, pages = plan.tasks
    assert (catalogue.tool, pages.tool) == ("predefined_cypher", "knowledge_search")
    assert pages.notes.fallback_for == catalogue.task_id


def test_a_question_about_someone_elses_order_gets_the_one_account_holder_rule():
    plan = plan_tasks([clause("policy_question", "check the status of my husband's order",
                              another_persons=True)])
    assert [t.tool for t in plan.tasks] == ["knowledge_search"]
    assert "another person's orders" in plan.tasks[0].args.question


def test_a_change_asked_for_twice_in_one_message_is_one_request():
    # Given "Cancel my helmet order. It's useless and I want it gone." (two clauses, one order)
    plan = plan_tasks([clause("cancel_order", "Cancel my helmet order", order_id=ORDER, asks_for_change=True,
                              reason="no longer needed"),
                       clause("cancel_order", "It's useless and I want it gone", order_id=ORDER,
                              asks_for_change=True)])
    # Then one cancellation is proposed, and nothing more is asked
    assert [t.task_type for t in plan.tasks] == ["cancel_order"] and plan.missing == []


def test_a_change_asked_about_that_the_catalogue_settles_is_said_not_asked():
    # Given "can I swap my sneakers for the size 11?" when no size 11 is available (grounding says so
    # and offers nothing instead)
    entities = {"order_id": ORDER, "order_status": "delivered", "item_action": "exchange_items",
                "asks_for_change": False, "settled": True,
                "question": f"Order {ORDER}: The Sneakers in 11 is not available right now."}
    plan = plan_tasks([clause("change_items", "can i exchange my sneakers for the size 11 one", **entities)])
    # Then that statement is the answer: no task, and it settles the request (nothing is awaited)
    assert plan.tasks == []
    assert [(m["question"], m.get("settles")) for m in plan.missing] == [(entities["question"], True)]


def test_a_reason_told_beside_a_request_keeps_the_requests_question_about_its_order():
    # Given "cancel the bag order, I don't need it anymore" with two orders holding a bag
    asked = "You have 2 orders with the Backpack: #W1111111, #W2222222. Which one do you mean?"
    plan = plan_tasks([clause("cancel_order", "I want to cancel the bag order", question=asked,
                              order_candidates=["#W1111111", "#W2222222"], asks_for_change=True),
                       clause("cancel_order", "I changed my mind and don't need it anymore",
                              reason="no longer needed")])
    # Then the candidates are asked about (a reason names no order), and the reason is kept
    assert [m.get("question") for m in plan.missing] == [asked]
    assert plan.missing[0]["entities"].get("reason") == "no longer needed"


def test_an_exchange_read_from_a_description_gives_way_to_the_return_asked_beside_it() -> None:
    # Given "it came in black, I picked grey ... take it back and refund my card": the description
    # read as an exchange of the item, the ask read as a return that names no item
    described = clause("change_items", "it came in black, I definitely picked grey", order_id="#W7000001",
                       item_action="exchange_items", item_ids=["111"], new_item_ids=["222"],
                       payment_method_id="credit_card_1")
    asked = clause("return_request", "could you take it back and refund my card", order_id="#W7000001",
                   payment_method_id="credit_card_1")
    # When planned
    plan = plan_tasks([described, asked])
    # Then the return is proposed, of the item the description named, and no exchange
    actions = [t for t in plan.tasks if t.tool == "customer_actions"]
    assert [t.task_type for t in actions] == ["return_items"]
    assert actions[0].args.args["item_ids"] == ["111"]


def test_an_exchange_and_a_return_of_other_items_of_one_order_both_stay() -> None:
    exchange = clause("change_items", "the mouse for the black one", order_id="#W7000001",
                      item_action="exchange_items", item_ids=["111"], new_item_ids=["222"],
                      payment_method_id="credit_card_1")
    giving_back = clause("return_request", "and return the keyboard", order_id="#W7000001", item_ids=["333"],
                         payment_method_id="credit_card_1")
    actions = [t.task_type for t in plan_tasks([exchange, giving_back]).tasks if t.tool == "customer_actions"]
    assert sorted(actions) == ["exchange_items", "return_items"]


def test_a_list_of_the_orders_holding_one_product_is_asked_of_that_product() -> None:
    # Given "which of my orders have an office chair in them?", the chair found in the catalogue
    asked = clause("order_list", "which of my orders have an office chair in them?",
                   products=[{"product_id": "4794339885", "name": "Office Chair"}])
    # When planned / Then the list is of the orders holding the chair
    (task,) = plan_tasks([asked]).tasks
    assert task.args.model_dump() == {"template_id": "customer_orders",
                                      "params": {"product_id": "4794339885"}}


def test_an_address_told_after_an_address_change_that_lacks_one_is_its_address() -> None:
    # Given "Can you put my new address on the account? It's 12 Main St, Springfield, IL 62704."
    asked = clause("update_default_address", "Can you put my new address on the account?")
    told = clause("out_of_scope", "It's 12 Main St, Springfield, IL 62704", address=ADDRESS)
    # When planned / Then one change of the default address, to that address
    (task,) = plan_tasks([asked, told]).tasks
    assert task.args.action == "update_default_address"
    assert task.args.args["address"] == ADDRESS


def test_a_question_after_a_rule_that_refuses_the_request_as_asked_is_a_partial_answer() -> None:
    from csagent.planning import status_of_asking

    which = {"intent": "return_request", "parameter": "item_ids", "question": "Which items?"}
    ruled = {"intent": "return_request", "parameter": "payment_method_id", "ruled_out": True,
             "question": "A refund can go only to ... Should it go to your Visa?"}
    assert status_of_asking([which]) == "needs_clarification"
    assert status_of_asking([ruled]) == "partial"
    assert status_of_asking([{**which, "settles": True}]) == "answered"


def test_a_battery_charge_is_no_money():
    # Given a complaint-read question about the vacuum of the order, "charge" as a battery's
    plan = plan_tasks([clause("complaint", "how long does my vacuum run on one charge", order_id=ORDER)])
    # Then no payments are read; "charged twice" still reads them
    assert "order_payments" not in [t.task_type for t in plan.tasks]
    plan = plan_tasks([clause("complaint", "you charged me twice for it", order_id=ORDER)])
    assert "order_payments" in [t.task_type for t in plan.tasks]


@pytest.mark.parametrize("text", ["did you take the money off my gift card TWICE??",
                                  "这个订单我好像被扣了两次钱"])
def test_a_double_charge_in_everyday_words_reads_the_payments(text):
    # Given a complaint about an order's money without the word "charge"
    plan = plan_tasks([clause("complaint", text, order_id=ORDER)])
    # Then what was paid is read
    assert "order_payments" in [t.task_type for t in plan.tasks]


def test_a_question_about_a_product_the_customer_owns_brings_their_own_item():
    # Given "does the coffee maker I ordered have a timer?", grounded to the order that holds it
    plan = plan_tasks([clause("product_info", "does the coffee maker I ordered have a timer?",
                              products=[{"product_id": "p-coffee", "name": "Coffee Maker", "options": {}}],
                              documents_first=True, owned_in=ORDER)])
    # Then the pages answer first, the catalogue if they are silent, then their own item of the
    # product alone (with its options), not the rest of the order
    assert [t.task_type for t in plan.tasks] == ["policy", "product_info", "order_items"]
    assert plan.tasks[2].args.params == {"order_id": ORDER}
    assert plan.tasks[2].notes.own_products == ["p-coffee"]


def test_two_owned_products_of_one_order_are_read_once():
    # Given two questions, each about a product the customer owns in the same order
    products = ({"product_id": "p-watch", "name": "Smart Watch", "options": {}},
                {"product_id": "p-speaker", "name": "Bluetooth Speaker", "options": {}})
    plan = plan_tasks([clause("product_info", f"can I take the {p['name']} I bought in the pool?",
                              products=[p], owned_in=ORDER) for p in products])
    # Then one read of that order says both of their items
    owned = [t for t in plan.tasks if t.task_type == "order_items"]
    assert len(owned) == 1
    assert owned[0].notes.own_products == ["p-watch", "p-speaker"]


def test_a_question_about_an_item_of_an_order_notes_that_item_for_the_reply():
    # Given "那个充电宝是什么接口？" (which port does the power bank have) about an order holding it
    plan = plan_tasks([clause("order_items", "订单 #W1 里那个充电宝是什么接口？", order_id=ORDER,
                              own_products=["p-charger"])])
    # Then the order's closest question is read (its items, unless a specific one fits better),
    # noting the item asked about, whose line alone the reply gives when the items answer
    assert [t.task_type for t in plan.tasks] == ["order_items"]
    assert plan.tasks[0].args.fallback_template == "order_items"
    assert plan.tasks[0].notes.own_products == ["p-charger"]
    # And "what's in it" (no item asked about) notes none
    plan = plan_tasks([clause("order_items", "what's in it", order_id=ORDER)])
    assert not plan.tasks[0].notes.own_products


def test_an_account_question_the_documents_answer_brings_the_rule_beside_the_account():
    # Given "does my gift card expire?", read as a question about the account that a sentence of
    # the store's documents answers more closely than the account's templates
    plan = plan_tasks([clause("account_info", "does my gift card expire?", documents_too=True)])
    # Then the account is read and the documents are searched for the rule
    assert [t.task_type for t in plan.tasks] == ["account_info", "policy"]
    assert plan.tasks[1].args.question == "does my gift card expire?"
    # And without it only the account is read
    plan = plan_tasks([clause("account_info", "what's my gift card balance?")])
    assert [t.task_type for t in plan.tasks] == ["account_info"]


def test_a_question_pointing_back_at_what_a_statement_told_asks_the_documents_with_it():
    # Given "my dog ate a corner off the pet bed 💀 does the warranty cover that", split at the emoji
    plan = plan_tasks([clause("warranty", "does the warranty cover that",
                              told="my dog ate a corner off the pet bed", told_of_names=["Pet Bed"])])
    # Then the warranty terms are searched with what "that" points back at
    # (the statement names the product: no name put before it)
    assert plan.tasks[0].args.question == "my dog ate a corner off the pet bed does the warranty cover that"


def test_the_documents_are_asked_with_the_catalogues_name_for_a_misspelt_product():
    # Given "how long the warranty on the Offce Chhair lasts?", the Office Chair found in the words
    chair = {"product_id": "p-chair", "name": "Office Chair", "surface": "Offce Chhair"}
    plan = plan_tasks([clause("warranty", "how long the warranty on the Offce Chhair lasts?",
                              products=[chair])])
    # Then the warranty terms are searched for the Office Chair
    assert plan.tasks[0].args.question == "how long the warranty on the Office Chair lasts?"
    # And a Chinese question keeps its own words
    zh = plan_tasks([clause("warranty", "办公椅保修多久？", products=[{**chair, "surface": "办公椅"}])])
    assert zh.tasks[0].args.question == "办公椅保修多久？"
    # And a word of the name ("the chair") is no misspelling: the words stay the customer's
    short = plan_tasks([clause("warranty", "is the chair covered?",
                               products=[{**chair, "surface": "chair"}])])
    assert short.tasks[0].args.question == "is the chair covered?"


@pytest.mark.parametrize("text", ["how long until my refund shows up on my card?", "退款到PayPal要多久？"])
def test_how_long_a_refund_takes_with_no_order_named_is_the_stores_timing(text: str) -> None:
    # Given a question about a refund's timing that names no order
    plan = plan_tasks([clause("refund_status", text)])
    # Then the store's refund timings answer it; no order number is asked for
    assert [t.task_type for t in plan.tasks] == ["policy"] and plan.missing == []
    # And a refund question that is not about timing still asks which order
    other = plan_tasks([clause("refund_status", "did I get my refund?")])
    assert [m["parameter"] for m in other.missing] == ["order_id"]


def test_a_statement_s_lookups_never_crowd_out_the_question_after_it():
    # Given "I got a desk lamp from you. what colours does it come in?", the statement read as a
    # complaint about two orders (their facts and the store's documents) and the question after it
    lamp = {"product_id": "6817146515", "name": "Desk Lamp", "options": {}, "surface": "desk lamp"}
    plan = plan_tasks([
        {"text": "I got a desk lamp from you", "intent": "complaint",
         "entities": {"products": [lamp], "order_ids": ["#W9784474", "#W1659844"]}},
        {"text": "what colours does it come in?", "intent": "product_info",
         "entities": {"products": [lamp], "reference": {"kind": "product", "hint": None}}},
    ], max_tasks=3)
    # Then the question's lookup is kept within the turn's three tasks, the rest in the order asked
    assert len(plan.tasks) == 3 and plan.dropped > 0
    assert plan.tasks[-1].task_type == "product_info"
    # And the kept tasks are numbered again, each dependency one of them
    assert [t.task_id for t in plan.tasks] == ["t1", "t2", "t3"]
    assert all(d in {"t1", "t2", "t3"} for t in plan.tasks for d in t.depends_on)


def test_a_question_about_a_change_whose_wish_is_not_available_is_answered_by_what_is():
    # Given "can u bump em up to a 9?" about a pending order, asked about and not for, the size 9 of
    # those boots not available and another version offered by grounding
    question = "Order #W1: The Hiking Boots in 9, synthetic is not available right now. Available: ..."
    plan = plan_tasks([{"text": "can u bump em up to a 9?", "intent": "change_items",
                        "entities": {"order_id": ORDER, "order_status": "pending", "asks_for_change": False,
                                     "question": question, "target_named": True}}])
    # Then that statement answers (it settles the question, nothing awaits), and no return rule is read
    assert [m["parameter"] for m in plan.missing] == ["details"] and plan.missing[0].get("settles") is True
    assert plan.tasks == []


def test_a_battery_holding_a_charge_is_no_money():
    plan = plan_tasks([clause("complaint", "my watch stopped holding a charge after a week", order_id=ORDER)])
    assert "order_payments" not in [t.task_type for t in plan.tasks]


def test_a_warranty_asked_of_an_item_of_a_named_order_says_which_order():
    # Given "is the smart watch from #W1 still covered by warranty?"
    plan = plan_tasks([clause("warranty", "is the smart watch from it still covered by warranty?",
                              order_id=ORDER, products=[{"product_id": "p-watch", "name": "Smart Watch"}])])
    # Then the warranty terms are quoted about that order
    warranty = next(t for t in plan.tasks if t.task_type == "warranty")
    assert warranty.notes.order_id == ORDER


def test_a_wrong_item_complaint_about_a_product_told_before_lists_the_orders_items() -> None:
    # Given "The kettle you sent me is BLACK. I'm certain I ordered a white one.": the second clause
    # says what was ordered, of the product the first told of
    plan = plan_tasks([clause("complaint", "I'm certain I ordered a white one", order_id=ORDER,
                              told_of=["1075968781"])])
    # Then what the order holds, option by option, is listed beside where it is
    assert [t.task_type for t in plan.tasks][:2] == ["order_status", "order_items"]


def test_a_payment_change_to_a_method_the_account_lacks_gets_the_facts_and_the_rule():
    # Given "can I pay #W… with PayPal instead?" grounded to an account without PayPal
    plan = plan_tasks([clause("change_payment", "can I pay it with PayPal instead?", order_id=ORDER,
                              order_status="pending", method_not_held="PayPal", asks_for_change=True)])
    # Then how it is paid, the methods the account holds (PayPal said missing) and the rule answer
    kinds = [t.task_type for t in plan.tasks]
    assert kinds == ["order_payments", "account_info", "policy"] and plan.missing == []
    assert plan.tasks[1].notes.method_not_held == "PayPal"
    assert not any(t.tool == "customer_actions" for t in plan.tasks)


def test_a_payment_asked_to_be_split_gets_the_facts_and_the_one_method_rule():
    plan = plan_tasks([clause("change_payment", "split the payment, half on my Visa and half on PayPal",
                              order_id=ORDER, order_status="pending", split_asked=True,
                              asks_for_change=True)])
    assert [t.task_type for t in plan.tasks] == ["order_payments", "policy"] and plan.missing == []
    assert "gift card plus a card" in plan.tasks[1].args.question


def test_how_a_price_difference_is_paid_belongs_to_the_item_change_whatever_order_it_was_read_of():
    # Given "Can I exchange it for black, size L? Difference please pay with my Mastercard.", the
    # second clause grounded on its own to another order (a payment change needs a pending one)
    clauses = [clause("change_items", "Can I exchange it for black, size L?", order_id=ORDER,
                      order_status="delivered", item_action="exchange_items", item_ids=["i1"],
                      new_item_ids=["i2"], asks_for_change=True),
               clause("change_payment", "Difference please pay with my Mastercard", order_id="#W0000009",
                      order_status="pending", payment_method_id="cc_1", asks_for_change=True)]
    plan = plan_tasks(clauses)
    # Then one proposal: the exchange, its difference on the Mastercard; no payment change
    assert [t.task_type for t in plan.tasks] == ["exchange_items"]
    assert plan.tasks[0].args.args["payment_method_id"] == "cc_1" and plan.missing == []


def test_it_in_a_question_naming_where_money_goes_is_the_money_not_a_product_of_the_last_order():
    memory = {"last_order_id": ORDER}
    reference = {"kind": "product", "hint": None}
    # Given a refund just told; when "how long till it actually shows on paypal tho" is asked
    money = plan_tasks([clause("policy_question", "how long till it actually shows on paypal tho",
                               reference=reference)], memory=memory)
    # Then the store's documents answer it as asked, not the last order's products' pages
    assert [(t.task_type, t.depends_on) for t in money.tasks] == [("policy", ())]
    assert money.tasks[0].notes.products_from is None
    # And "it" in a question about a product still takes the products of the order talked about
    product = plan_tasks([clause("policy_question", "can it go in the dishwasher?", reference=reference)],
                         memory=memory)
    assert [t.task_type for t in product.tasks] == ["order_status", "policy"]
    assert product.tasks[1].notes.products_from is not None


def test_a_change_only_weighed_gets_what_can_be_done_not_a_question_about_its_details():
    asked = {"order_id": ORDER, "order_status": "pending", "item_action": "modify_items",
             "asks_for_change": False, "question": "Which size would you like the keyboard in?",
             "target_named": True}
    # Given "Could I still change the switches if I decide to?": a change weighed, its target unclear
    weighed = plan_tasks([clause("change_items", "Could I still change the switches if I decide to?",
                                 **asked)])
    # Then what can be done is answered (the order's facts), nothing is asked back
    assert weighed.missing == [] and weighed.tasks
    # while "can I get the tee in a different colour?" asks which colour
    wished = plan_tasks([clause("change_items", "can I get the keyboard in a different size?", **asked)])
    assert [m["parameter"] for m in wished.missing] == ["details"]


def test_a_read_naming_nothing_after_one_that_found_an_order_asks_about_that_order():
    # Given "is anything of mine actually on the way rn? drop the tracking # if so", the first clause
    # grounded to the one order on its way
    plan = plan_tasks([clause("order_status", "is anything of mine actually on the way rn?", order_id=ORDER),
                       clause("tracking", "drop the tracking # if so")])
    # Then nothing is asked back: the tracking is that order's
    assert plan.missing == [] and {t.task_type for t in plan.tasks} <= {"order_status", "tracking"}
    # while alone, with nothing talked about, which order is asked
    alone = plan_tasks([clause("tracking", "drop the tracking # if so")])
    assert [m["parameter"] for m in alone.missing] == ["order_id"]


def test_a_list_question_stays_one_when_another_clause_names_an_order():
    # Given "a list of all my orders and the status of each one? I know #W… is one of them": the id,
    # named in the second clause, is carried to every clause of the message
    listed = plan_tasks([clause("order_list", "could you give me a list of all my orders and their status?",
                                order_id=ORDER)])
    # Then the list answers
    assert [t.task_type for t in listed.tasks] == ["order_list"]
    # while a list reading of words naming one order is that order's status ("check order #W…")
    one = plan_tasks([clause("order_list", f"check order {ORDER}", order_id=ORDER)])
    assert [t.task_type for t in one.tasks] == ["order_status"]


def test_where_an_order_goes_and_its_tracking_number_asked_together_get_its_overview():
    plan = plan_tasks([clause("order_status", "perfume order - what address is it going to + tracking no.",
                              order_id=ORDER)])
    # the overview says its status, tracking number and address; the address alone would miss one
    assert [(t.task_type, t.args.template_id) for t in plan.tasks] == [("order_status", "order_overview")]
    # the address alone is still the closest question's
    plan = plan_tasks([clause("order_status", "what address is it going to?", order_id=ORDER)])
    assert plan.tasks[0].args.template_id is None and plan.tasks[0].args.question


def test_a_policy_question_asked_of_an_order_of_theirs_gets_its_facts_beside_the_rule():
    plan = plan_tasks([clause("policy_question", "W2611340 - if cancelled, gift card refund instant?",
                              order_id=ORDER, order_status="pending")])
    assert [t.task_type for t in plan.tasks] == ["order_status", "policy"]
    # the rule alone when no order of theirs is named
    plan = plan_tasks([clause("policy_question", "if cancelled, gift card refund instant?")])
    assert [t.task_type for t in plan.tasks] == ["policy"]
