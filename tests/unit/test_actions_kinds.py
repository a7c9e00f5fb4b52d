"""Each customer action is one entry in one module (`csagent.actions.kinds`): every action has
exactly one, its lines use only the facts the wording fills for its plan, each other language words
every line with the same facts, and its arguments survive the trip through their plain form (what
the idempotency key is derived from). Pure: no graph, no network."""

from __future__ import annotations

import importlib
import pkgutil
from collections import Counter
from datetime import UTC, datetime
from decimal import Decimal
from string import Formatter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from csagent.actions import kinds
from csagent.actions.kinds import KINDS, ActionKind, args_dict, kind, parse_args
from csagent.actions.plan import ActionPlan
from csagent.actions.policy import ActionName, ArgsError, load_rules
from csagent.actions.proposals import (
    DEFAULT_APPROVAL_THRESHOLD,
    TRANSLATED,
    build_proposal,
    done_lines,
    kind_lines,
    load_wording,
    plan_action,
    summary_lines,
    wording_fields,
)

RULES = load_rules()
NOW = datetime(2024, 7, 1, 15, 0, tzinfo=UTC)
ORDER = "#W1000001"
ADDRESS = {"address1": "12 Main Street", "address2": "Apt 4", "city": "Springfield", "state": "IL",
           "zip": "62704", "country": "USA"}
OLD_ADDRESS = {"address1": "1 Old Road", "address2": "", "city": "Austin", "state": "TX", "zip": "73301",
               "country": "USA"}


def chair(item_id: str, color: str, price: float) -> dict[str, Any]:
    return {"item_id": item_id, "product_id": "1000000001", "product_name": "Office Chair", "price": price,
            "available": True, "options_json": f'{{"color": "{color}"}}', "option_text": f"color: {color}"}


def order_facts(status: str) -> dict[str, Any]:
    """One office chair, paid once by credit card; the customer also has a well-funded gift card."""
    return {
        "customer_id": "cust_1",
        "order": {"order_id": ORDER, "status": status, "total": 488.81},
        "ship_to": OLD_ADDRESS,
        "lines": [{"line_id": f"{ORDER}/1", "line_no": 1, "item_id": "111", "product_id": "1000000001",
                   "name": "Office Chair", "price": 488.81, "options_json": '{"color": "black"}',
                   "option_text": "color: black"}],
        "transactions": [{"transaction_id": f"{ORDER}/1", "seq": 1, "type": "payment", "amount": 488.81,
                          "payment_method_id": "credit_card_1"}],
        "payment_methods": [
            {"payment_method_id": "credit_card_1", "source": "credit_card", "brand": "visa",
             "last_four": "4242"},
            {"payment_method_id": "gift_card_1", "source": "gift_card", "balance": 1000.0},
        ],
        "variants": [chair("111", "black", 488.81), chair("112", "blue", 512.0)],
    }


PENDING, DELIVERED = order_facts("pending"), order_facts("delivered")
CUSTOMER = {"customer_id": "cust_1", "default_address": OLD_ADDRESS}
CHANGE = {"order_id": ORDER, "item_ids": ["111"], "new_item_ids": ["112"]}

# One request each action accepts, and the facts it is accepted on.
SAMPLES: dict[ActionName, tuple[dict[str, Any], dict[str, Any]]] = {
    ActionName.CANCEL_ORDER: ({"order_id": "w1000001", "reason": "Ordered by mistake"}, PENDING),
    ActionName.CHANGE_ORDER_ADDRESS: ({"order_id": ORDER, "address": ADDRESS}, PENDING),
    ActionName.UPDATE_DEFAULT_ADDRESS: ({"address": {**ADDRESS, "state": "il", "country": "US"}}, CUSTOMER),
    ActionName.RETURN_ITEMS: ({"order_id": ORDER, "item_ids": ["111"], "payment_method_id": "gift_card_1"},
                              DELIVERED),
    ActionName.EXCHANGE_ITEMS: ({**CHANGE, "payment_method_id": "credit_card_1"}, DELIVERED),
    ActionName.MODIFY_ITEMS: ({**CHANGE, "payment_method_id": "gift_card_1"}, PENDING),
    ActionName.CHANGE_PAYMENT: ({"order_id": ORDER, "payment_method_id": "gift_card_1"}, PENDING),
}


def placeholders(templates: tuple[str, ...]) -> set[str]:
    return {name for template in templates for _, name, _, _ in Formatter().parse(template) if name}


def test_every_action_is_one_kind_in_one_module() -> None:
    # Given the kinds the modules of the kinds package define
    modules = [importlib.import_module(f"{kinds.__name__}.{info.name}")
               for info in pkgutil.iter_modules(kinds.__path__)]
    defined = [m.KIND for m in modules if isinstance(getattr(m, "KIND", None), ActionKind)]

    # Then every action has exactly one, and it is the one the registry answers with
    assert Counter(k.name for k in defined) == Counter(list(ActionName))
    assert set(KINDS) == set(ActionName) and all(kind(k.name) is k for k in defined)


def test_every_line_of_an_action_uses_only_the_facts_its_plan_fills() -> None:
    for action, (raw, facts) in SAMPLES.items():
        # Given a plan of that action
        entry = kind(action)
        plan = plan_action(action, parse_args(action, raw, RULES), facts, NOW, RULES)
        assert isinstance(plan, ActionPlan), (action, plan)

        # When the wording's facts are filled for it
        filled = set(wording_fields(plan, DEFAULT_APPROVAL_THRESHOLD)) | {"difference_line"}

        # Then every placeholder of its lines is one of them
        used = placeholders(entry.proposal + entry.done + tuple(entry.done_difference.values()))
        assert used <= filled, (action, used - filled)


def test_only_an_item_change_words_a_price_difference_and_it_words_every_sign() -> None:
    for action, (raw, facts) in SAMPLES.items():
        # Given a plan of that action
        entry = kind(action)
        plan = plan_action(action, parse_args(action, raw, RULES), facts, NOW, RULES)
        assert isinstance(plan, ActionPlan), (action, plan)

        # Then its lines have a difference line exactly when its plan has a difference
        has_line = "{difference_line}" in entry.proposal + entry.done
        assert has_line == (plan.price_difference is not None), action
        assert set(entry.done_difference) == ({"pay", "refund", "none"} if has_line else set()), action


def _cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _shared_lines(wording: dict[str, Any]) -> dict[str, str]:
    proposal, done = wording["proposal"], wording["done"]
    return {**{f"difference.{k}": v for k, v in proposal["difference"].items()},
            "approval": proposal["approval"],
            **{f"refund.{k}": v for k, v in done["refund"].items()}, "refund_entry": done["refund_entry"]}


def test_every_other_language_words_every_line_with_the_same_facts() -> None:
    english_shared = _shared_lines(load_wording())
    for lang in TRANSLATED:
        # Given the lines shared by every action, in that language
        shared = _shared_lines(load_wording(lang))

        # Then it has each English one, with the same placeholders
        assert set(shared) == set(english_shared), lang
        for key, line in shared.items():
            assert placeholders((line,)) == placeholders((english_shared[key],)), (lang, key)

        for action in ActionName:
            # And every action's own lines, line for line, with the same placeholders
            for part in ("proposal", "done"):
                english, translated = kind_lines(action, part), tuple(kind_lines(action, part, lang))
                assert len(translated) == len(english), (lang, action, part)
                for ours, theirs in zip(translated, english, strict=True):
                    assert placeholders((ours,)) == placeholders((theirs,)), (lang, action, part, ours)
            difference = kind_lines(action, "done_difference", lang)
            assert set(difference) == set(kind(action).done_difference), (lang, action)
            for sign, line in difference.items():
                assert placeholders((line,)) == placeholders((kind(action).done_difference[sign],))


def test_a_proposal_and_its_outcome_are_worded_in_chinese_with_the_same_facts() -> None:
    for action, (raw, facts) in SAMPLES.items():
        # Given a plan of that action
        plan = plan_action(action, parse_args(action, raw, RULES), facts, NOW, RULES)
        assert isinstance(plan, ActionPlan), (action, plan)

        # When it is proposed (a cent's threshold: any refund needs approval, so that line is worded
        # too) and done
        proposal = build_proposal(plan, "cust_1", "s-1/1", threshold=Decimal("0.01"))
        assert proposal.requires_approval == bool(plan.amount), action
        chinese, done = proposal.summaries["zh"], done_lines(plan, "zh")

        # Then the Chinese lines are as many as the English ones, each in Chinese
        assert len(chinese) == len(proposal.summary) and len(done) == len(done_lines(plan)), action
        assert all(_cjk(line) for line in chinese + done), (action, chinese, done)
        # And they carry the same order, amounts and payment methods
        english = " ".join(proposal.summary + done_lines(plan))
        for fact in ("#W1000001", "$488.81", "$512.00", "$23.19", "4242", "gift_card_1", "Office Chair"):
            assert (fact in english) == (fact in " ".join(chinese + done)), (action, fact)


def test_a_cancellation_words_its_reason_and_refund_timing_in_chinese() -> None:
    # Given a cancellation of an order paid by card
    action, (raw, facts) = ActionName.CANCEL_ORDER, SAMPLES[ActionName.CANCEL_ORDER]
    plan = plan_action(action, parse_args(action, raw, RULES), facts, NOW, RULES)
    assert isinstance(plan, ActionPlan)

    # When its lines are worded in Chinese
    lines = " ".join(summary_lines(plan, lang="zh"))

    # Then the reason and the refund's timing are the policy's, in Chinese
    assert "下错单了" in lines and RULES.refund_timing_for("credit_card", "zh") in lines
    assert "ordered by mistake" not in lines and "business days" not in lines


def test_every_action_parses_its_own_plain_arguments_back_to_the_same_value() -> None:
    for action, (raw, _) in SAMPLES.items():
        # Given the normalised arguments of a sample request
        args = parse_args(action, raw, RULES)
        assert isinstance(args, kind(action).args_type)

        # When their plain form is parsed again
        again = parse_args(action, args_dict(args), RULES)

        # Then it is the same value
        assert again == args, action


ITEM_ID = st.sampled_from(["111", "112", "2000000002", "bad id"])
ORDER_IDS = st.sampled_from([ORDER, "w1000001", " #W1000001 ", "#W12"])
METHODS = st.sampled_from(["credit_card_1", " gift_card_1 ", "paypal_1", ""])
BASE = st.fixed_dictionaries({"order_id": ORDER_IDS, "payment_method_id": METHODS}, optional={
    "reason": st.sampled_from(["no longer needed", " Ordered  by MISTAKE", "changed my mind", ""]),
    "address": st.sampled_from([ADDRESS, {**ADDRESS, "country": "united states", "state": "ny"},
                                {**ADDRESS, "country": "Canada", "state": "ON", "zip": "K1A 0B1"}, {}]),
    "items_text": st.sampled_from(["the chair", "everything", ""]),
})
# Items and new items, aligned as an item change gives them (a return reads only the first).
PAIRS = st.lists(st.tuples(ITEM_ID, ITEM_ID), max_size=3).map(
    lambda pairs: {"item_ids": [old for old, _ in pairs], "new_item_ids": [new for _, new in pairs]})
RAW = st.builds(lambda base, items: {**base, **items}, BASE, st.just({}) | PAIRS)


@settings(max_examples=300, deadline=None)
@given(action=st.sampled_from(list(ActionName)), raw=RAW)
def test_the_plain_form_of_any_accepted_arguments_parses_to_itself(action: ActionName,
                                                                   raw: dict[str, Any]) -> None:
    # Given any arguments an action accepts
    try:
        args = parse_args(action, raw, RULES)
    except ArgsError:
        return

    # When their plain form is parsed again
    plain = args_dict(args)

    # Then it is accepted, with the same plain form (so the idempotency key cannot drift)
    assert args_dict(parse_args(action, plain, RULES)) == plain
