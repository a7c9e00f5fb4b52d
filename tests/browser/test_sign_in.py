"""The pages' JWT sign-in (the Cognito hosted UI's authorization code with PKCE), run for real in
Debian's chromium: the page's own sign-in code (web/api.js) against a local stand-in of the hosted
UI (`oauth_standin`: HTTPS, real S256 PKCE checks, ID tokens signed with a test RSA key), and
the API in its jwt mode (`devstack.web` with AUTH_MODE=jwt: the stream function's app, which
verifies every bearer token against the issuer's JWKS, issuer, audience and expiry).

No route interception: every request goes to a real server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx
import pytest
from oauth_standin import CHALLENGE, StandIn, s256
from test_pages import say, status_of

pytestmark = [pytest.mark.integration, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
CLIENT_ID = "csagent-web-test"
EMMA, EMMA_ORDER = "emma_santos_9753", "#W2918688"
IVAN, IVAN_ORDER = "ivan_santos_6635", "#W8770097"  # ships to 477 Park Avenue, Suite 558, Dallas TX 75277
MARIA = "maria"  # a member of the pool's "agent" group
USERS = {
    EMMA: {"sub": str(uuid.uuid4()), "email": "emma@example.com", "custom:customer_id": EMMA},
    IVAN: {"sub": str(uuid.uuid4()), "email": "ivan@example.com", "custom:customer_id": IVAN},
    MARIA: {"sub": str(uuid.uuid4()), "email": "maria@store.example", "cognito:groups": ["agent"]},
}
SIGN_IN_FAILED = "We could not complete your sign-in. Please sign in again."


@pytest.fixture(scope="module")
def sign_in_stack(tau_store: Any, moto_endpoint: str, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[tuple[str, StandIn]]:
    """The hosted-UI stand-in and the pages with the API in jwt mode, trusting only its tokens."""
    from devstack.bench.concurrency import free_port, serve

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    idp = StandIn(CLIENT_ID, {f"{base}/", f"{base}/console.html"}, USERS)
    server, ca = idp.start(tmp_path_factory.mktemp("idp"))
    env = {"STAGE": "local", "POWERTOOLS_TRACE_DISABLED": "1", "AUTH_MODE": "jwt",
           "JWT_ISSUER": idp.issuer, "JWT_AUDIENCE": CLIENT_ID,
           "WEB_COGNITO_DOMAIN": idp.domain, "WEB_COGNITO_CLIENT_ID": CLIENT_ID,
           "SSL_CERT_FILE": str(ca)}  # the API fetches the JWKS over HTTPS, trusting the test CA only
    try:
        with serve(port, ROOT / ".local" / "browser-sign-in.log", env=env) as served:
            yield served, idp
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def web_base(sign_in_stack: tuple[str, StandIn]) -> str:
    return sign_in_stack[0]


@pytest.fixture
def idp(sign_in_stack: tuple[str, StandIn]) -> StandIn:
    return sign_in_stack[1]


@pytest.fixture
def context_options() -> dict[str, Any]:
    return {"ignore_https_errors": True}  # the stand-in's certificate is the test CA's


def to_hosted_ui(page: Any, idp: StandIn) -> dict[str, str]:
    """Open the chat and press its sign-in button; the authorize request's parameters."""
    page.goto("/")
    page.get_by_role("button", name="Sign in with your store account").click()
    page.wait_for_url(f"{idp.issuer}/oauth2/authorize?**")
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}


def with_query(url: str, **changes: str) -> str:
    parts = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    return urlunsplit(parts._replace(query=urlencode({**query, **changes})))


def log_in(page: Any, username: str) -> None:
    page.get_by_label("Username").fill(username)
    page.get_by_role("button", name="Sign in").click()


def test_a_customer_signs_in_with_pkce_and_the_chat_calls_the_api_with_her_token_for_her_data_only(
        customer_page, web_base, idp, shots):
    page = customer_page
    api_calls: list[Any] = []
    page.on("request", lambda r: api_calls.append(r) if "/v1/" in r.url else None)
    token_requests = len(idp.token_requests())

    # Given the page's configuration: public values only
    config = httpx.get(f"{web_base}/config.json").json()
    assert config == {"auth": "cognito", "api_base": "", "stream_base": "",
                      "cognito": {"domain": idp.domain, "client_id": CLIENT_ID}}

    # When Emma presses "Sign in with your store account"
    query = to_hosted_ui(page, idp)

    # Then the page sent her to the hosted UI with a S256 code challenge and a state, no secret
    assert query["response_type"] == "code"
    assert query["client_id"] == CLIENT_ID
    assert query["redirect_uri"] == f"{web_base}/"
    assert query["code_challenge_method"] == "S256"
    assert CHALLENGE.match(query["code_challenge"])
    assert len(query["state"]) >= 16
    assert not {"client_secret", "code_verifier"} & set(query)
    shots(page, "hosted-ui")

    # When she signs in there
    log_in(page, EMMA)
    page.get_by_text(f"Signed in as {EMMA}").wait_for()

    # Then the page redeemed the code once, from its own origin, with the verifier whose S256 is
    # the challenge and no secret, and the address no longer shows the code
    [exchange] = idp.token_requests()[token_requests:]
    assert exchange["status"] == 200, exchange["why"]
    assert set(exchange["form"]) == {"grant_type", "client_id", "code", "redirect_uri", "code_verifier"}
    assert s256(exchange["form"]["code_verifier"]) == query["code_challenge"]
    assert exchange["origin"] == web_base
    assert page.url == f"{web_base}/"
    shots(page, "signed-in")

    # When she asks about her order
    reply = say(page, f"where is my order {EMMA_ORDER}?")

    # Then it is answered, and every API call carried her ID token as the bearer token
    assert status_of(reply) == "answered"
    assert EMMA_ORDER in reply.inner_text()
    token = page.evaluate("sessionStorage.getItem('csagent.token')")
    assert token and token.count(".") == 2
    assert api_calls and all(r.headers.get("authorization") == f"Bearer {token}" for r in api_calls)
    assert any(":stream" in r.url for r in api_calls)

    # And she sees only her own data: Ivan's order is not shown to her...
    other = say(page, f"where is my order {IVAN_ORDER}?")
    told = other.inner_text()
    assert f"No order {IVAN_ORDER} was found in your account" in told
    ivans = ("477 Park Avenue", "Suite 558", "Dallas", "75277", "$544.29")
    assert [fact for fact in ivans if fact in told] == []
    shots(page, "only-her-orders")
    # ...and Ivan's conversation is refused to her token (and readable with his)
    ivan = {"Authorization": f"Bearer {idp.id_token(IVAN)}"}
    session = f"jwt-{uuid.uuid4().hex[:12]}"
    assert httpx.post(f"{web_base}/v1/sessions/{session}/messages", headers=ivan, json={"text": "hi"},
                      timeout=60).status_code == 200
    read = "async (id) => (await fetch('/v1/sessions/' + id, {headers: {Authorization: " \
           "'Bearer ' + sessionStorage.getItem('csagent.token')}})).status"
    assert page.evaluate(read, session) == 403
    assert httpx.get(f"{web_base}/v1/sessions/{session}", headers=ivan).status_code == 200
    assert page.js_errors == []


def test_a_redirect_back_with_a_state_the_page_never_sent_is_refused_before_any_token_request(
        customer_page, idp, shots):
    page = customer_page
    token_requests = len(idp.token_requests())
    to_hosted_ui(page, idp)

    # When the hosted UI sends the browser back with a state this tab never issued (a forged
    # sign-in response: the code is real, the state is not the page's)
    page.goto(with_query(page.url, state="forged-state-not-from-this-tab"))
    log_in(page, EMMA)

    # Then the page refuses it: no token request, no token, the sign-in offered again
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert alert.inner_text() == SIGN_IN_FAILED
    page.get_by_role("button", name="Sign in with your store account").wait_for()
    assert idp.token_requests()[token_requests:] == []
    assert page.evaluate("sessionStorage.getItem('csagent.token')") is None
    assert "code=" not in page.url
    shots(page, "wrong-state")
    assert page.js_errors == []


def test_a_code_issued_for_another_challenge_is_refused_because_the_verifier_does_not_match(
        customer_page, idp, shots):
    page = customer_page
    token_requests = len(idp.token_requests())
    to_hosted_ui(page, idp)

    # When the code the page gets back was issued for a challenge the page's verifier does not
    # answer (an intercepted code, redeemed by someone without the verifier, looks the same)
    page.goto(with_query(page.url, code_challenge=s256("a verifier the page never made " + "x" * 20)))
    log_in(page, EMMA)

    # Then the token endpoint refuses the page's verifier, and the page says the sign-in failed
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert alert.inner_text() == SIGN_IN_FAILED
    [exchange] = idp.token_requests()[token_requests:]
    assert (exchange["status"], exchange["why"]) == (400, "PKCE verification failed")
    assert page.evaluate("sessionStorage.getItem('csagent.token')") is None
    page.get_by_role("button", name="Sign in with your store account").wait_for()
    shots(page, "wrong-verifier")
    assert page.js_errors == []


def test_a_token_the_user_pool_never_signed_is_refused_by_the_api(customer_page, idp, shots):
    from joserfc.jwk import RSAKey

    page = customer_page
    page.goto("/")
    page.get_by_role("button", name="Sign in with your store account").wait_for()  # (as in test_pages)
    # Given a token with Emma's claims and the pool's key id, signed with another key
    forger = RSAKey.generate_key(2048, parameters={"kid": idp.key.kid})
    page.evaluate("t => sessionStorage.setItem('csagent.token', t)", idp.id_token(EMMA, key=forger))

    # When the chat opens with it
    page.reload()

    # Then the API refuses it (401) and the page signs her out
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert alert.inner_text() == "You are signed out. Please sign in again."
    page.get_by_role("button", name="Sign in with your store account").wait_for()
    assert page.evaluate("sessionStorage.getItem('csagent.token')") is None
    shots(page, "forged-token")
    assert page.js_errors == []


def test_an_agent_signs_in_to_the_console_the_same_way_and_only_an_agent_token_opens_the_queues(
        agent_page, web_base, idp, shots):
    page = agent_page
    # When Maria (the pool's agent group) signs in on the console
    page.goto("/console.html")
    page.get_by_role("button", name="Sign in with your staff account").click()
    page.wait_for_url(f"{idp.issuer}/oauth2/authorize?**")
    query = {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}
    assert query["redirect_uri"] == f"{web_base}/console.html"
    assert query["code_challenge_method"] == "S256"
    log_in(page, MARIA)

    # Then she is back on the console, signed in as an agent, and the agent API answers her
    page.get_by_text("Agent maria@store.example").wait_for()
    page.locator("#count-handoffs:not(:empty)").wait_for()
    assert page.url == f"{web_base}/console.html"
    shots(page, "agent-console")
    # And a customer's token is refused on the same route
    status = ("async (t) => (await fetch('/v1/agent/handoffs', "
              "{headers: {Authorization: 'Bearer ' + t}})).status")
    assert page.evaluate(status, idp.id_token(EMMA)) == 403
    assert page.evaluate(status, page.evaluate("sessionStorage.getItem('csagent.token')")) == 200
    assert page.js_errors == []
