"""`make serve`: the router's HTTP API and the two web pages on one local origin (never shipped).

    /                 the customer chat (web/index.html)
    /console.html     the agent console
    /config.json      the pages' settings: the sign-in to use, the API on this origin
    /dev/customers    the seeded store's customers, for the chat's dev sign-in list (dev auth only)
    /v1/..., /healthz the router's app

Two ways to sign in, chosen by AUTH_MODE (`WebSettings`):

- `dev` (the default of `make serve`): the app of functions/router/app.py, which trusts
  `Bearer dev:<customer_id>` only because the settings refuse AUTH_MODE=dev outside STAGE=local.
- `jwt`: the app of functions/stream/app.py, which verifies each bearer token itself (RS256, a
  key of the issuer's JWKS, JWT_ISSUER, JWT_AUDIENCE, expiry: `csagent.http.tokens`), exactly as
  the stream function does in AWS and with the rules of the HTTP API's JWT authorizer; the
  pages sign in with an OAuth2 authorization code + PKCE at WEB_COGNITO_DOMAIN
  (`https://<domain>/oauth2/authorize` and `/oauth2/token`, a Cognito hosted UI or a stand-in)
  as the public app client WEB_COGNITO_CLIENT_ID. tests/browser/test_sign_in.py runs it.

In AWS the same files are served from S3 behind CloudFront, which sends /v1/* to the HTTP API
(template.yaml, `WebDistribution`), with a config.json written from the stack's outputs.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from pydantic import model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
MAX_CUSTOMERS = 500


class WebSettings(BaseSettings):
    """AUTH_MODE, and with `jwt` the hosted UI's domain and the public app client's id (no secret:
    the pages are a public client)."""

    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    auth_mode: Literal["dev", "jwt"] = "dev"
    web_cognito_domain: str | None = None   # host[:port] of /oauth2/authorize and /oauth2/token (https)
    web_cognito_client_id: str | None = None

    @model_validator(mode="after")
    def _jwt_names_its_sign_in(self) -> WebSettings:
        if self.auth_mode == "jwt" and not (self.web_cognito_domain and self.web_cognito_client_id):
            raise ValueError("AUTH_MODE=jwt needs WEB_COGNITO_DOMAIN and WEB_COGNITO_CLIENT_ID")
        return self

    def page_config(self) -> dict[str, Any]:
        """config.json: public values only."""
        base: dict[str, Any] = {"api_base": "", "stream_base": ""}
        if self.auth_mode == "dev":
            return {"auth": "dev", **base}
        return {"auth": "cognito", **base,
                "cognito": {"domain": self.web_cognito_domain, "client_id": self.web_cognito_client_id}}


def _function_app(function: str, attribute: str, module_name: str) -> FastAPI:
    """`attribute` of functions/<function>/app.py (loaded by path: a function is no package).
    The module paused the cyclic collector for its cold start until its handler's first reply
    (`csagent.coldstart`); this server calls the FastAPI app, never the handler, so it is turned
    back on here, or the server would run without it for its whole life."""
    from csagent import coldstart

    path = ROOT / "functions" / function / "app.py"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    coldstart.resume_gc()
    return getattr(module, attribute)  # type: ignore[no-any-return]


@cache
def router_app() -> FastAPI:
    """The FastAPI app of functions/router/app.py (in AWS, API Gateway's authorizer checks tokens)."""
    return _function_app("router", "app", "csagent_router_app")


@cache
def token_checking_app() -> FastAPI:
    """The FastAPI app of functions/stream/app.py: the same API, verifying bearer tokens itself."""
    return _function_app("stream", "fastapi_app", "csagent_stream_app")


def seeded_customers(limit: int = MAX_CUSTOMERS) -> list[dict[str, Any]]:
    """Customer ids and names of the store in Neo4j, for the dev sign-in list."""
    from csagent import runtime

    records = runtime.graph_store().read(
        "MATCH (c:Customer) RETURN c.customer_id AS customer_id, "
        "trim(coalesce(c.first_name, '') + ' ' + coalesce(c.last_name, '')) AS name "
        "ORDER BY customer_id LIMIT $limit", {"limit": limit})
    return [{"customer_id": r["customer_id"], "name": r["name"]} for r in records]


def create_web_app(api: FastAPI | None = None, settings: WebSettings | None = None) -> FastAPI:
    """`api` (by default the app AUTH_MODE calls for) with the local-only routes and the pages
    mounted last (the API's routes win)."""
    settings = settings or WebSettings()
    app = api if api is not None else router_app() if settings.auth_mode == "dev" else token_checking_app()
    page_config = settings.page_config()

    @app.get("/config.json", include_in_schema=False)
    def web_config() -> dict[str, Any]:
        return page_config

    if settings.auth_mode == "dev":
        @app.get("/dev/customers", include_in_schema=False)
        def dev_customers() -> list[dict[str, Any]]:
            return seeded_customers()

    app.mount("/", StaticFiles(directory=WEB, html=True), name="web")
    return app


def __getattr__(name: str) -> Any:
    """`uvicorn devstack.web:app`: built on first access, so importing this module does no I/O."""
    if name == "app":
        return _app()
    raise AttributeError(name)


@cache
def _app() -> FastAPI:
    return create_web_app()
