"""The identity provider's public signing keys (JWKS), fetched over HTTPS.

Cognito publishes them at `<issuer>/.well-known/jwks.json`. Used by
`csagent.http.tokens.TokenVerifier` where no API Gateway authorizer checks tokens for us.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

JWKS_PATH = "/.well-known/jwks.json"
MAX_JWKS_BYTES = 256 * 1024


def fetch_jwks(issuer: str, timeout_s: float = 3.0) -> dict[str, Any]:
    """The issuer's key set ({"keys": [...]}); raises OSError or ValueError when it cannot be had."""
    url = issuer.rstrip("/") + JWKS_PATH
    if not url.startswith("https://"):
        raise ValueError("the token issuer must be an https:// URL")
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 - https only, above
        document = json.loads(response.read(MAX_JWKS_BYTES))
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise ValueError("the issuer's JWKS document has no key list")
    return document
