"""`make serve`: the router's HTTP API and the two web pages on one local origin (never shipped).

    /                 the customer chat (web/index.html)
    /console.html     the agent console
    /config.json      the pages' settings: dev sign-in, the API on this origin
    /dev/customers    the seeded store's customers, for the chat's dev sign-in list
    /v1/..., /healthz the router's app, exactly as functions/router/app.py builds it

In AWS the same files are served from S3 behind CloudFront, which sends /v1/* to the HTTP API
(template.yaml, `WebDistribution`), with a config.json written from the stack's outputs. Dev
sign-in works only because the app runs with AUTH_MODE=dev, which the settings refuse outside
STAGE=local; nothing here adds a way in.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
MAX_CUSTOMERS = 500


@cache
def router_app() -> FastAPI:
    """The FastAPI app of functions/router/app.py (loaded by path: the function is no package)."""
    path = ROOT / "functions" / "router" / "app.py"
    spec = importlib.util.spec_from_file_location("csagent_router_app", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app  # type: ignore[no-any-return]


def seeded_customers(limit: int = MAX_CUSTOMERS) -> list[dict[str, Any]]:
    """Customer ids and names of the store in Neo4j, for the dev sign-in list."""
    from csagent import runtime

    records = runtime.graph_store().read(
        "MATCH (c:Customer) RETURN c.customer_id AS customer_id, "
        "trim(coalesce(c.first_name, '') + ' ' + coalesce(c.last_name, '')) AS name "
        "ORDER BY customer_id LIMIT $limit", {"limit": limit})
    return [{"customer_id": r["customer_id"], "name": r["name"]} for r in records]


def create_web_app(api: FastAPI | None = None) -> FastAPI:
    """`api` with the local-only routes and the pages mounted last (the API's routes win)."""
    app = api if api is not None else router_app()

    @app.get("/config.json", include_in_schema=False)
    def web_config() -> dict[str, Any]:
        return {"auth": "dev", "api_base": "", "stream_base": ""}

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
