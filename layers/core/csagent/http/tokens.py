"""Verifying the customer's Cognito token in the app, where no API Gateway authorizer does it.

The HTTP API's JWT authorizer checks every token before the router runs. The streaming Function
URL has no authorizer in front (AuthType NONE: browsers and apps cannot sign requests with
SigV4), so the stream function verifies the same tokens itself, with the same rules: signed by
the user pool (RS256, a key of its JWKS), issued by JWT_ISSUER, for one of the app clients of
JWT_AUDIENCE (`aud` of an ID token or `client_id` of an access token), not expired. The verified
claims then take the authorizer's place: one mapping from claims to a Principal
(`csagent.http.auth.principal_from`).

Needs `joserfc` (RFC 7515-7519, on `cryptography`) at run time, imported on the first token.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection
from functools import lru_cache
from typing import Any

from pydantic_settings import BaseSettings, SettingsConfigDict

from csagent.domain.errors import DependencyUnavailable, Unauthenticated

ALGORITHMS = ("RS256",)  # what Cognito signs with; "none" and HMAC can never pass
TOKEN_USES = ("id", "access")
INVALID = "a valid bearer token is required"
UNCHECKABLE = "sign-in cannot be checked right now; please retry"


class TokenSettings(BaseSettings):
    """Where tokens come from (the stream function's JWT_ISSUER and JWT_AUDIENCE)."""

    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    jwt_issuer: str | None = None
    jwt_audience: str = ""  # the accepted app client ids, comma-separated
    jwt_jwks_max_age_s: int = 3600


class TokenVerifier:
    """Bearer token → its verified claims, or `Unauthenticated` (401). Thread-safe."""

    def __init__(self, issuer: str, audiences: Collection[str], fetch_jwks: Callable[[str], dict[str, Any]],
                 *, max_age_s: float = 3600.0, refetch_after_s: float = 60.0, leeway_s: int = 30,
                 clock: Callable[[], float] = time.time) -> None:
        if not issuer or not audiences:
            raise ValueError("token verification needs an issuer and at least one audience")
        self._issuer = issuer
        self._audiences = frozenset(audiences)
        self._fetch_jwks = fetch_jwks
        self._max_age_s = max_age_s
        self._refetch_after_s = refetch_after_s
        self._leeway_s = leeway_s
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: Any = None
        self._fetched_at = float("-inf")

    def claims(self, authorization: str | None) -> dict[str, Any]:
        from joserfc import jwt
        from joserfc.errors import JoseError

        token = _bearer(authorization)
        try:
            decoded = jwt.decode(token, self._key_set(_kid(token)), algorithms=list(ALGORITHMS))
            self._registry().validate(decoded.claims)
        except (JoseError, ValueError, KeyError, TypeError):
            raise Unauthenticated(INVALID) from None
        claims = dict(decoded.claims)
        audience = claims.get("aud") if claims.get("token_use") == "id" else claims.get("client_id")
        audiences = set(audience) if isinstance(audience, list) else {audience}
        if claims.get("token_use") not in TOKEN_USES or not audiences & self._audiences:
            raise Unauthenticated(INVALID)
        return claims

    def _registry(self) -> Any:
        from joserfc.jwt import JWTClaimsRegistry

        return JWTClaimsRegistry(now=int(self._clock()), leeway=self._leeway_s,
                                 iss={"essential": True, "value": self._issuer},
                                 sub={"essential": True}, exp={"essential": True})

    def _key_set(self, kid: str) -> Any:
        """The issuer's keys: cached for max_age_s; fetched again for an unknown key id (a key
        rotation), but at most once per refetch_after_s (forged key ids cannot flood the issuer)."""
        from joserfc.jwk import KeySet

        with self._lock:
            age = self._clock() - self._fetched_at
            unknown = self._keys is None or all(key.kid != kid for key in self._keys.keys)
            if age > self._max_age_s or (unknown and age > self._refetch_after_s):
                try:
                    self._keys = KeySet.import_key_set(self._fetch_jwks(self._issuer))  # type: ignore[arg-type]
                except (OSError, ValueError) as exc:
                    if self._keys is None:
                        raise DependencyUnavailable(UNCHECKABLE) from exc
                self._fetched_at = self._clock()
            if self._keys is None:
                raise DependencyUnavailable(UNCHECKABLE)
            return self._keys


def _bearer(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or token.count(".") != 2 or len(token) > 8192:
        raise Unauthenticated(INVALID)
    return token.strip()


def _kid(token: str) -> str:
    from joserfc.errors import JoseError
    from joserfc.jws import extract_compact

    try:
        kid = extract_compact(token.encode()).headers().get("kid")
    except (JoseError, ValueError):
        raise Unauthenticated(INVALID) from None
    if not isinstance(kid, str) or not kid:
        raise Unauthenticated(INVALID)
    return kid


@lru_cache(maxsize=1)
def token_verifier() -> TokenVerifier:
    """The process's verifier, from the environment (the stream function's composition root)."""
    from csagent.adapters.jwks_http import fetch_jwks

    settings = TokenSettings()
    if not settings.jwt_issuer:
        raise DependencyUnavailable("sign-in is not configured (JWT_ISSUER)")
    audiences = [a.strip() for a in settings.jwt_audience.split(",") if a.strip()]
    return TokenVerifier(settings.jwt_issuer, audiences, fetch_jwks, max_age_s=settings.jwt_jwks_max_age_s)
