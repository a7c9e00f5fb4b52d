"""The customer chat and the agent console in a real browser (Debian's chromium, headless), over
the real API and the local stack (tau-retail in Neo4j, DynamoDB on moto). Each test plays what a
person does, asserts what they see, checks the store's end state where a change was made, and
leaves screenshots in reports/browser/.

The customer's page is at phone width; the agent's console is a separate browser context."""

from __future__ import annotations

import io
import re
import time
import uuid
from typing import Any

import httpx
import pytest

pytestmark = [pytest.mark.integration, pytest.mark.browser]

EMMA, EMMA_ORDER = "emma_santos_9753", "#W2918688"  # pending order, ships to Phoenix AZ 85039
IVAN, IVAN_ORDER = "ivan_santos_6635", "#W8770097"  # pending order of $544.29: over the $500 threshold
JAMES = "james_li_5688"


def sign_in(page: Any, customer: str) -> str:
    """Open the chat, pick `customer` in the dev sign-in; the conversation's session id."""
    page.goto("/")
    page.get_by_label("Customer").fill(customer)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text(f"Signed in as {customer}").wait_for()
    label = page.locator("#session-label").inner_text()
    return label.removeprefix("Conversation ").strip()


def say(page: Any, text: str) -> Any:
    """Type and send with the keyboard (Enter); the assistant's finished reply bubble."""
    before = page.locator("li.msg.assistant:not([aria-busy])").count()
    box = page.get_by_label("Your message")
    box.fill(text)
    box.press("Enter")
    reply = page.locator("li.msg.assistant:not([aria-busy])").nth(before)
    reply.locator(".badge").wait_for()
    return reply


def status_of(reply: Any) -> str:
    return str(reply.locator(".badge").get_attribute("data-status"))


def in_queue(agent: Any, selector: str) -> Any:
    """The console's queue item matching `selector`, pressing "Show more" while older items fill
    the first pages (a long-lived `make up` stack keeps the handoffs of every earlier run)."""
    item = agent.locator(selector)
    agent.locator("#count-handoffs:not(:empty)").wait_for()
    while not item.count():
        more = agent.locator("#more-handoffs")
        if not more.count():
            item.wait_for(timeout=10_000)  # a refresh may still bring it; else the test fails here
            break
        shown = agent.locator("li[data-handoff]").count()
        more.click()
        agent.locator("li[data-handoff]").nth(shown).wait_for()  # the next page is in
    return item.first


def sessions_store(moto_endpoint: str) -> tuple[Any, Any, Any]:
    """The sessions table as the server uses it (`DynamoDBSessions`), the template's resources and
    the AWS clients on moto."""
    from csagent.adapters.sessions_dynamodb import DynamoDBSessions
    from devstack.aws import clients, provision

    resources = provision(moto_endpoint)
    aws = clients(moto_endpoint, resources.region)
    return DynamoDBSessions(aws.dynamodb, resources.table("SessionsTable").table_name), resources, aws


def open_handoffs(moto_endpoint: str, count: int) -> tuple[Any, list[str]]:
    """`count` customers asking for a person, opened the way a turn opens them (the service, its
    session lease and tables); the store and the new handoffs' ids, oldest first."""
    from csagent.handoff.repository import DynamoDBHandoffs, SqsHandoffPublisher
    from csagent.handoff.service import HandoffService
    from csagent.handoff.triggers import evaluate, signals_from_state

    sessions, resources, aws = sessions_store(moto_endpoint)
    sessions_table = resources.table("SessionsTable").table_name
    store = DynamoDBHandoffs(aws.dynamodb, resources.table("HandoffsTable").table_name, sessions_table)
    queue_url = aws.sqs.get_queue_url(QueueName="csagent-local-handoffs")["QueueUrl"]
    service = HandoffService(store, SqsHandoffPublisher(aws.sqs, queue_url))
    opened = []
    for n in range(count):
        session_id = f"browser-queue-{uuid.uuid4().hex[:12]}"
        state = {"session_id": session_id, "customer_id": JAMES, "lang": "en",
                 "text": f"I want to talk to a person (queued customer {n + 1})"}
        decision = evaluate(signals_from_state(state))
        assert decision is not None
        lease = sessions.begin_turn(session_id, JAMES, None)
        opened.append(service.open(state, decision).handoff_id)
        sessions.release(lease)
    return store, opened


def store_value(driver: Any, query: str, **params: Any) -> Any:
    records, _, _ = driver.execute_query(query, **params)
    return records[0][0] if records else None


def test_a_customer_asks_a_compound_question_confirms_an_address_change_and_sees_it_done(
        customer_page, shots, reseed_tau, neo4j_driver):
    page = customer_page
    session = sign_in(page, EMMA)
    shots(page, "signed-in")
    progress: list[str] = []
    page.on("response", lambda r: progress.append(r.url) if ":stream" in r.url else None)

    # When Emma asks two things in one message: a new address for a pending order and a policy
    reply = say(page, f"Please send order {EMMA_ORDER} to 250 Harbor Blvd, San Diego, CA 92101, "
                      "and what is your return policy?")
    shots(page, "proposal")

    # Then the answer came streamed, the policy is answered with its source, and the change is
    # listed back, exactly, with Yes / No
    assert progress, "the turn went through the streaming endpoint"
    assert status_of(reply) == "awaiting_confirmation"
    assert "return" in reply.locator(".body").inner_text().lower()
    proposed = reply.locator(".proposal li.proposed")
    assert proposed.count() == 1
    assert re.search(r"order #W2918688 from .*85039.* to 250 Harbor Blvd, San Diego, CA 92101",
                     proposed.inner_text())
    citation = reply.locator(".citations details").first
    citation.locator("summary").click()
    assert citation.locator("blockquote").inner_text().strip(), "a citation opens the passage it cites"
    # Nothing changed before the yes
    zip_query = "MATCH (:Order {order_id: $o})-[:SHIPS_TO]->(a) RETURN a.zip"
    assert store_value(neo4j_driver, zip_query, o=EMMA_ORDER) == "85039"

    # When she presses Yes (from the keyboard: focus and Enter)
    before = page.locator("li.msg.assistant:not([aria-busy])").count()
    yes = reply.get_by_role("button", name="Yes, make the change")
    yes.focus()
    page.keyboard.press("Enter")
    done = page.locator("li.msg.assistant:not([aria-busy])").nth(before)
    done.locator(".badge").wait_for()
    shots(page, "done")

    # Then she sees the change made, and the store has it
    assert status_of(done) == "answered"
    assert "will now ship to 250 Harbor Blvd, San Diego, CA 92101" in done.inner_text()
    assert store_value(neo4j_driver, zip_query, o=EMMA_ORDER) == "92101"
    assert page.locator(".proposal button:not([disabled])").count() == 0, "an answered proposal is closed"

    # And after a reload the conversation is still there (the session resumes)
    page.reload()
    page.locator("li.msg.assistant").nth(1).wait_for()
    assert page.locator("#session-label").inner_text().endswith(session)
    assert page.locator("li.msg").count() == 4
    assert "will now ship to 250 Harbor Blvd" in page.locator("li.msg.assistant").last.inner_text()
    # The page fits a phone: nothing wider than the viewport
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shots(page, "reloaded")
    assert page.js_errors == []


def test_a_refund_over_the_threshold_is_approved_in_the_console_and_the_customer_sees_it(
        customer_page, agent_page, shots, reseed_tau, neo4j_driver):
    customer, agent = customer_page, agent_page
    session = sign_in(customer, IVAN)

    # Given Ivan cancels his $544.29 order and says yes
    proposal = say(customer, f"cancel order {IVAN_ORDER}, I ordered it by mistake")
    assert status_of(proposal) == "awaiting_confirmation"
    assert "approve" in proposal.locator(".proposal").inner_text().lower()
    proposal.get_by_role("button", name="Yes, make the change").click()
    waiting = customer.locator("li.msg.assistant .badge[data-status=awaiting_approval]")
    waiting.wait_for()
    shots(customer, "awaiting-approval")
    status_query = "MATCH (o:Order {order_id: $o}) RETURN o.status"
    assert store_value(neo4j_driver, status_query, o=IVAN_ORDER) == "pending"

    # When an agent opens the console and approves that refund
    agent.goto("/console.html")
    agent.get_by_label("Agent name").fill("sam")
    agent.get_by_role("button", name="Sign in").click()
    agent.get_by_role("tab", name=re.compile("Approvals")).click()
    item = agent.locator("li[data-approval]", has_text=session)
    item.wait_for()
    assert "$544.29" in item.inner_text()
    assert IVAN_ORDER in item.inner_text()
    shots(agent, "approvals-queue")
    item.get_by_role("button", name=re.compile("^Approve")).click()
    agent.get_by_text("Approved: the customer's conversation went on").wait_for()
    shots(agent, "approved")

    # Then the order is cancelled, and Ivan's open page shows it without him doing anything
    assert store_value(neo4j_driver, status_query, o=IVAN_ORDER) == "cancelled"
    last = customer.locator("li.msg.assistant").last
    customer.wait_for_function(
        "() => [...document.querySelectorAll('li.msg.assistant')].at(-1)?.innerText.includes('cancelled')")
    assert last.locator(".badge").get_attribute("data-status") == "answered"
    shots(customer, "customer-sees-result")

    # And the session viewer shows the turns with their traces
    agent.get_by_role("tab", name="Session viewer").click()
    agent.get_by_label("Session id").fill(session)
    agent.get_by_role("button", name="Open", exact=True).click()
    turns = agent.locator("#turns section.turn")
    turns.first.wait_for()
    assert turns.count() == 2
    assert "customer_actions" in turns.last.inner_text()
    assert "model calls" in turns.last.inner_text()
    shots(agent, "session-viewer")
    assert customer.js_errors == [] and agent.js_errors == []


def test_a_handoff_is_claimed_and_answered_and_the_customer_reads_the_reply(
        customer_page, agent_page, shots):
    customer, agent = customer_page, agent_page
    session = sign_in(customer, JAMES)

    # Given James asks for a person
    handed = say(customer, "I want to talk to a human agent please")
    assert status_of(handed) == "handed_off"
    shots(customer, "handed-off")

    # When an agent claims his handoff and replies
    agent.goto("/console.html")
    agent.get_by_label("Agent name").fill("maria")
    agent.get_by_role("button", name="Sign in").click()
    item = in_queue(agent, f"li[data-session='{session}']")
    item.get_by_role("button", name=re.compile("^Open handoff")).click()
    detail = agent.locator("#handoff")
    detail.locator("h2", has_text=f"Handoff · {JAMES}").wait_for()
    assert "talk to a human" in detail.inner_text()
    agent.get_by_role("button", name="Claim").click()
    answer = "Hi James, this is Maria from the store. How can I help?"
    agent.get_by_role("textbox", name="Reply to the customer").fill(answer)
    agent.get_by_role("button", name="Send reply").click()
    detail.locator("li.msg.agent", has_text="this is Maria").wait_for()
    shots(agent, "replied")

    # Then James sees the reply in his chat
    customer.locator("li.msg.agent", has_text=answer).wait_for()
    shots(customer, "customer-sees-reply")

    # And when the agent closes the handoff, James's page says so
    agent.get_by_role("button", name="Close handoff").click()
    agent.locator("#handoff-status", has_text="closed").wait_for()
    customer.get_by_text("Our team has closed this conversation.").wait_for()
    shots(customer, "closed")
    assert customer.js_errors == [] and agent.js_errors == []


def test_when_an_agent_closes_the_handoff_the_customer_page_says_so_and_stops_polling(
        customer_page, web_base, shots):
    page = customer_page
    session = sign_in(page, JAMES)
    polls: list[float] = []
    page.on("request", lambda r: polls.append(time.monotonic())
            if r.method == "GET" and r.url.endswith(f"/v1/sessions/{session}") else None)

    # Given James is with a person, and his open page polls the conversation
    handed = say(page, "I want to talk to a human agent please")
    assert status_of(handed) == "handed_off"
    assert handed.locator(".badge").inner_text() == "With a person"
    page.locator("#progress", has_text="Waiting for a person").wait_for()

    # When an agent claims the handoff and closes it (the console's calls, over the API)
    customer = {"Authorization": f"Bearer dev:{JAMES}"}
    handoff = httpx.get(f"{web_base}/v1/sessions/{session}", headers=customer, timeout=30).json()["handoff"]
    agent = {"Authorization": "Bearer dev-agent:maria"}
    for step in ("claim", "close"):
        done = httpx.post(f"{web_base}/v1/agent/handoffs/{handoff['handoff_id']}/{step}",
                          headers=agent, timeout=30)
        assert done.status_code == 200, done.text

    # Then the API says the session is active again, its handoff closed
    after = httpx.get(f"{web_base}/v1/sessions/{session}", headers=customer, timeout=30).json()
    assert (after["status"], after["handoff"]["status"]) == ("active", "closed")
    # And his page, at its next poll, no longer says he is with a person
    badge = page.locator("li.msg.assistant").last.locator(".badge")
    page.locator("li.msg.assistant .badge[data-status=handoff_closed]").wait_for(timeout=10_000)
    assert badge.inner_text() == "Closed by our team"
    assert "Our team has closed this conversation." in page.locator("#progress").inner_text()
    shots(page, "closed")
    # And it stops polling: no request in the next two and a half poll periods
    seen = len(polls)
    page.wait_for_timeout(7_500)
    assert len(polls) == seen, f"{len(polls) - seen} polls after the handoff was closed"

    # And after a reload: the same truthful badge, one read of the session and no polling
    page.reload()
    page.locator("li.msg.assistant .badge[data-status=handoff_closed]").wait_for()
    seen = len(polls)
    page.wait_for_timeout(7_500)
    assert len(polls) == seen, f"{len(polls) - seen} polls after reloading a closed handoff"
    assert page.js_errors == []


def test_a_message_sent_while_the_last_is_still_being_answered_is_refused_kept_and_sent_again(
        customer_page, moto_endpoint, shots):
    page = customer_page
    session = sign_in(page, JAMES)
    refused: list[int] = []
    page.on("response", lambda r: refused.append(r.status) if ":stream" in r.url and not r.ok else None)

    # Given a message of this conversation still being answered (sent from James's other tab): the
    # server holds the session's turn lease, taken as a running turn takes it. (A turn of the local
    # tier ends in well under a second, too soon for a second page to catch it reliably; the
    # lease is what the server checks, so the 409 below is the server's own.)
    sessions, _, _ = sessions_store(moto_endpoint)
    lease = sessions.begin_turn(session, JAMES, None)

    # When James sends a message from this page
    text = "where is my order #W4435622?"
    box = page.get_by_label("Your message")
    box.fill(text)
    box.press("Enter")

    # Then the server refused it with 409, and the page says plainly why and what to do
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert refused == [409]
    assert alert.inner_text() == ("Still working on your last message. Please wait for its answer, "
                                  "then send this one again.")
    # And nothing is lost: the text is back in the box, and no message is shown as sent
    assert box.input_value() == text
    assert page.locator("li.msg").count() == 0
    assert page.get_by_role("button", name="Send").is_enabled()
    shots(page, "409-kept")

    # When the other turn has ended and he sends again (Enter on the kept text)
    sessions.release(lease)
    box.press("Enter")
    reply = page.locator("li.msg.assistant:not([aria-busy])").first
    reply.locator(".badge").wait_for()

    # Then it is answered, and the error is gone
    assert status_of(reply) == "answered"
    assert "#W4435622" in reply.inner_text()
    assert page.locator("li.msg.customer").inner_text().endswith(text)
    assert alert.is_hidden()
    assert box.input_value() == ""
    shots(page, "409-sent-again")
    assert page.js_errors == []


def test_a_long_handoff_queue_shows_its_true_count_and_pages_to_the_newest_case(
        agent_page, moto_endpoint, shots):
    from csagent.handoff.package import HandoffStatus

    agent = agent_page
    # Given more customers waiting for a person than one page of the queue shows
    store, opened = open_handoffs(moto_endpoint, 60)
    waiting = store.count_by_status(HandoffStatus.OPEN)
    assert waiting >= 60

    # When an agent opens the console
    agent.goto("/console.html")
    agent.get_by_label("Agent name").fill("lena")
    agent.get_by_role("button", name="Sign in").click()
    agent.locator("#count-handoffs:not(:empty)").wait_for()

    # Then the tab counts every waiting case, the list shows the oldest fifty and offers more
    assert agent.locator("#count-handoffs").inner_text() == f"({waiting})"
    assert agent.locator("li[data-handoff]").count() == 50
    shots(agent, "first-page")

    # And paging on reaches the newest case, which opens like any other, and the list then ends
    newest = in_queue(agent, f"li[data-handoff='{opened[-1]}']")
    assert agent.locator("li[data-handoff]").count() == waiting
    assert agent.locator("#more-handoffs").count() == 0
    newest.get_by_role("button", name=re.compile("^Open handoff")).click()
    agent.locator("#handoff h2", has_text=f"Handoff · {JAMES}").wait_for()
    assert "queued customer 60" in agent.locator("#handoff").inner_text()
    shots(agent, "last-page-opened")
    assert agent.js_errors == []


def test_nothing_on_the_chat_moves_while_an_answer_streams_in(customer_page, shots):
    page = customer_page
    sign_in(page, JAMES)
    say(page, "hi")  # a conversation already on the screen
    # Layout shifts (the browser's own measure, as Core Web Vitals count them), from now on
    page.evaluate("""() => { window.shifts = [];
        new PerformanceObserver((list) => { for (const e of list.getEntries()) window.shifts.push(
          {value: e.value, input: e.hadRecentInput,
           moved: e.sources.map((s) => s.node?.id || s.node?.className || String(s.node))}); })
        .observe({type: "layout-shift"}); }""")
    composer = page.locator("#composer").bounding_box()

    # When a long answer streams in (several answer events, after the progress labels)
    reply = say(page, "where is my order #W4435622 and what is your return policy?")
    assert len(reply.locator(".body").inner_text()) > 200
    page.wait_for_timeout(300)  # the observer reports a frame late

    # Then nothing moved but the growing bubble's own content (no shift, input or not), and the
    # composer is where it was
    assert page.evaluate("window.shifts") == []
    assert page.locator("#composer").bounding_box() == composer
    # And the log (it scrolls inside the page) shows the answer from its first line
    log, answer = page.locator("#log").bounding_box(), reply.bounding_box()
    assert log["y"] - 1 <= answer["y"] < log["y"] + log["height"]  # (1 px: subpixel rounding)
    shots(page, "streamed")
    assert page.js_errors == []


def label_png(*lines: str) -> bytes:
    """A shipping label photo as a PNG, drawn with Pillow's scalable default font (the OCR reads it)."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (900, 90 + 70 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((30, 40 + 70 * i), line, fill="black", font=ImageFont.load_default(size=40))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def test_a_customer_sends_a_label_photo_and_gets_that_orders_tracking(customer_page, shots):
    page = customer_page
    sign_in(page, JAMES)

    # Given James attaches a photo of his parcel's label (order #W4435622)
    photo = label_png("SHIP TO: James Li", "Order #W4435622", "Handle with care")
    page.get_by_label("Attach a photo of a label or a screenshot").set_input_files(
        {"name": "label.png", "mimeType": "image/png", "buffer": photo})
    # (the page reads the file asynchronously, then names it)
    page.locator("#attached:not(:empty)").wait_for()
    assert page.locator("#attached").inner_text() == "label.png will be sent with your message"

    # When he asks where the package is
    reply = say(page, "where is this package?")

    # Then the photo went with the message, and the answer is that order's status and tracking
    assert "label.png" in page.locator("li.msg.customer").inner_text()
    assert status_of(reply) == "answered"
    assert "#W4435622" in reply.inner_text() and "967193221991" in reply.inner_text()
    assert page.locator("#attached").inner_text() == ""  # sent once, not again with the next message
    shots(page, "label-photo")
    assert page.js_errors == []


def test_a_customer_is_told_plainly_when_signed_out_or_a_photo_is_too_large(customer_page, shots):
    page = customer_page
    # Given a token the API refuses (dev ids are letters, digits and _.@-): a 401 on its first call
    page.goto("/")
    # (once the signed-out page is up: set while its start still reads the storage, the token
    # would be sent, refused and removed by that first load before the reload, so no alert)
    page.get_by_role("button", name="Sign in").wait_for()
    page.evaluate("sessionStorage.setItem('csagent.token', 'dev:not a valid id')")
    page.reload()
    alert = page.get_by_role("alert")
    alert.wait_for()
    # Then the page says so and offers the sign-in again
    assert "You are signed out. Please sign in again." in alert.inner_text()
    page.get_by_role("button", name="Sign in").wait_for()
    shots(page, "401")

    # Given a signed-in customer attaching a 4 MB photo: refused before anything is sent
    sign_in(page, JAMES)
    page.get_by_label("Attach a photo of a label or a screenshot").set_input_files(
        {"name": "label.png", "mimeType": "image/png", "buffer": b"\x89PNG" + b"\0" * (4 * 1024 * 1024)})
    assert "That photo is too large. Please send one under 3 MB." in page.get_by_role("alert").inner_text()
    assert page.locator("li.msg").count() == 0
    shots(page, "photo-too-large")
    assert page.js_errors == []
