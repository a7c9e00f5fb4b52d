"""A change is listed back, and said done, in the customer's language, through the real HTTP API
on the tau-retail store: a Chinese request gets the proposal's lines in Chinese (the order, the
items, the reason, the refund with its method and timing), and the Chinese yes gets what changed
in Chinese; an English request keeps English. The facts are the same in both."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from api_support import ask as ask_turn

pytestmark = pytest.mark.integration

# One pending order with a skateboard, paid by PayPal ($182.03, under the approval threshold).
CUSTOMER, ORDER = "fatima_anderson_2157", "#W2974929"


def ask(client: Any, text: str, session: str) -> tuple[str, str]:
    return ask_turn(client, CUSTOMER, text, session)


def test_a_chinese_cancellation_is_proposed_and_done_in_chinese(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"lang-{uuid.uuid4().hex[:8]}"
    # When the customer asks in Chinese to cancel the skateboard order, no longer needed
    status, reply = ask(client, "滑板那个订单帮我取消吧，用不上了", session)
    # Then the change is listed back in Chinese, with the order, reason, amount, method and timing
    assert status == "awaiting_confirmation", reply
    for said in (f"取消订单 {ORDER}", "Skateboard", "原因：不再需要", "$182.03 退回您的 PayPal 账户",
                 "5 到 7 个工作日内"):
        assert said in reply, (said, reply)
    assert "Cancel order" not in reply and "business days" not in reply, reply

    # When the customer says yes in Chinese
    status, reply = ask(client, "好的，取消吧", session)
    # Then what changed is said in Chinese
    assert status == "answered", reply
    assert f"订单 {ORDER} 已取消" in reply and "$182.03 将在 5 到 7 个工作日内退回" in reply, reply


def test_an_english_cancellation_stays_in_english(tau_api: Any) -> None:
    _, _, client = tau_api
    session = f"lang-{uuid.uuid4().hex[:8]}"
    status, reply = ask(client, "please cancel my skateboard order, I no longer need it", session)
    assert status == "awaiting_confirmation", reply
    assert f"Cancel order {ORDER}" in reply and "Reason: no longer needed" in reply, reply
    assert "取消" not in reply, reply
