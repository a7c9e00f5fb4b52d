"""Who is calling. In AWS: the API Gateway JWT authorizer's claims (Mangum puts the Lambda
event in the ASGI scope). Locally, only when AUTH_MODE=dev (which `Settings` refuses outside
STAGE=local): `Authorization: Bearer dev:<customer_id>`, `Bearer dev-agent:<name>` (agent role) or
`Bearer dev-admin:<name>` (admin role: the knowledge-base admin API).
"""

from __future__ import annotations

import re
from typing import Any

from csagent.domain.errors import Unauthenticated
from csagent.domain.models import Principal

DEV_TOKEN = re.compile(r"^Bearer dev(?:-(?P<role>agent|admin))?:(?P<id>[A-Za-z0-9_.@-]{1,128})$")
ROLE_CLAIMS = ("cognito:groups", "custom:roles", "roles")


def _jwt_claims(scope: dict[str, Any]) -> dict[str, Any] | None:
    event = scope.get("aws.event") or {}
    claims = (((event.get("requestContext") or {}).get("authorizer") or {}).get("jwt") or {}).get("claims")
    return claims if isinstance(claims, dict) and claims.get("sub") else None


def _roles(claims: dict[str, Any]) -> frozenset[str]:
    for name in ROLE_CLAIMS:
        value = claims.get(name)
        if isinstance(value, list):
            return frozenset(str(v) for v in value)
        if isinstance(value, str) and value:
            return frozenset(v for v in re.split(r"[\s,\[\]]+", value) if v)
    return frozenset({"customer"})


def principal_from(scope: dict[str, Any], authorization: str | None, auth_mode: str) -> Principal:
    """The caller, or `Unauthenticated` (→ 401)."""
    if auth_mode == "dev":
        match = DEV_TOKEN.match(authorization or "")
        if match is None:
            raise Unauthenticated("send 'Authorization: Bearer dev:<customer_id>' (local dev auth)")
        if match["role"]:
            return Principal(subject=match["id"], roles=frozenset({match["role"]}))
        return Principal(subject=match["id"], customer_id=match["id"])
    claims = _jwt_claims(scope)
    if claims is None:
        raise Unauthenticated("a valid bearer token is required")
    roles = _roles(claims)
    customer_id = claims.get("custom:customer_id")
    return Principal(subject=str(claims["sub"]), customer_id=str(customer_id) if customer_id else None,
                     roles=roles if customer_id is None else roles | {"customer"})
