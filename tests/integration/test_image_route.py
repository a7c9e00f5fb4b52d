"""The image route with the real OCR engine (Debian's tesseract) and the real store: a label
photo the test draws itself is read for the order id, which is then looked up in Neo4j."""

from __future__ import annotations

import base64
import io
import shutil
import uuid
from typing import Any

import pytest
from PIL import Image, ImageDraw, ImageFont

from csagent import runtime
from csagent.domain.models import Principal
from csagent.service.schemas import Attachment, MessageIn

pytestmark = pytest.mark.integration


def label(*lines: str) -> Attachment:
    """A shipping label as a PNG, drawn with Pillow's scalable default font."""
    image = Image.new("RGB", (900, 90 + 70 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=40)
    for i, line in enumerate(lines):
        draw.text((30, 40 + 70 * i), line, fill="black", font=font)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return Attachment(media_type="image/png", data=base64.b64encode(buffer.getvalue()).decode())


@pytest.fixture
def service(tau_store: Any, moto_endpoint: str) -> Any:
    if shutil.which("tesseract") is None:
        pytest.fail("tesseract is not installed: `make setup` installs Debian's tesseract-ocr")
    runtime.reset()
    yield runtime.conversation_service()
    runtime.reset()


def ask(service: Any, customer: str, text: str, *attachments: Attachment) -> Any:
    session = f"img-{uuid.uuid4().hex[:8]}"
    return service.handle_message(Principal(subject=customer, customer_id=customer), session,
                                  MessageIn(text=text, attachments=list(attachments)))


def test_a_label_photo_with_an_order_number_gets_that_orders_status(service):
    # Given james_li_5688 photographs the label of his order #W4435622
    photo = label("SHIP TO: James Li", "Order #W4435622", "Handle with care")
    # When he sends it asking where the package is
    out = ask(service, "james_li_5688", "where is this package?", photo)
    # Then the order's real status and tracking number come back
    assert out.trace["route"] == "image"
    assert out.status == "answered"
    assert "#W4435622" in out.reply["text"] and "967193221991" in out.reply["text"]


def test_a_label_with_only_a_tracking_number_finds_the_order(service):
    out = ask(service, "james_li_5688", "what is this?", label("FedEx Ground", "Tracking 967193221991"))
    assert [t.status for t in out.tasks] == ["success"]
    assert "#W4435622" in out.reply["text"]


def test_another_customers_label_reveals_nothing(service):
    # Given a customer who photographs someone else's label
    photo = label("Order #W4435622", "Tracking 967193221991")
    out = ask(service, "ivan_santos_6635", "where is this?", photo)
    # Then the order is not found on his account and nothing of it is shown
    assert out.status == "partial"
    assert "967193221991" not in out.reply["text"] and "Hiking Boots" not in out.reply["text"]


def test_a_blank_picture_asks_for_the_order_number(service):
    out = ask(service, "james_li_5688", "where is my order?", label(""))
    assert out.status == "needs_clarification"
    assert "picture" in out.reply["text"]
