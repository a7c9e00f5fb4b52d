"""A stand-in for the Cognito hosted UI, for the browser tests of the pages' sign-in: the OAuth 2.0
authorization-code grant with PKCE (RFC 6749 section 4.1, RFC 7636, S256 only), over HTTPS on
127.0.0.1 with a certificate of its own, issuing ID tokens signed with a test RSA key whose JWKS
it publishes, as a user pool does.

    GET  /oauth2/authorize      checks the request (client, redirect URI, response_type=code,
                                code_challenge_method=S256, a challenge, a state), shows a sign-in form
    POST /login                 the form: a known user → 302 to redirect_uri?code=…&state=… (state as sent)
    POST /oauth2/token          code + code_verifier → {id_token, access_token, …}; the code is
                                single-use, bound to the client and redirect URI, and redeemed only
                                if BASE64URL(SHA-256(code_verifier)) is its challenge; else 400 invalid_grant
    GET  /.well-known/jwks.json the public key (the API fetches it from <issuer>/.well-known/jwks.json)

Every request is recorded (`requests`) for the tests to assert on. Test code only: the private
key, the certificate and the users live in this process and a temporary directory.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import html
import ipaddress
import json
import re
import secrets
import ssl
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

CHALLENGE = re.compile(r"^[A-Za-z0-9_-]{43}$")  # BASE64URL of a SHA-256 digest, no padding
CODE_TTL_S = 300


def s256(verifier: str) -> str:
    """RFC 7636's S256 code challenge of `verifier`."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def loopback_certificate(directory: Path) -> tuple[Path, Path, Path]:
    """A test CA and a server certificate for 127.0.0.1 signed by it: (ca.pem, cert.pem, key.pem).
    The API server trusts ca.pem (SSL_CERT_FILE) to fetch the JWKS; the browser is told to
    accept the certificate (Playwright's ignore_https_errors)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "csagent test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                                       key_cert_sign=True, crl_sign=True, encipher_only=False,
                                       decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = directory / "ca.pem", directory / "cert.pem", directory / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


@dataclass
class Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    username: str
    expires: float


@dataclass
class StandIn:
    """The identity provider's state: its client, callbacks, users, signing key and log."""

    client_id: str
    callbacks: set[str]
    users: dict[str, dict[str, Any]]   # username → the claims its tokens carry besides the standard ones
    key: Any = None                    # joserfc RSAKey (private), made in `start`
    issuer: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    grants: dict[str, Grant] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    # -- tokens -----------------------------------------------------------------------------------
    def jwks(self) -> dict[str, Any]:
        return {"keys": [self.key.as_dict(private=False)]}

    def id_token(self, username: str, *, key: Any = None, lifetime_s: int = 3600) -> str:
        """An ID token for `username` as Cognito shapes one (token_use=id, aud=the client)."""
        from joserfc import jwt

        signer = key or self.key
        now = int(time.time())
        claims = {"iss": self.issuer, "sub": self.users[username]["sub"], "aud": self.client_id,
                  "token_use": "id", "auth_time": now, "iat": now, "exp": now + lifetime_s,
                  "cognito:username": username,
                  **{k: v for k, v in self.users[username].items() if k != "sub"}}
        return jwt.encode({"alg": "RS256", "kid": signer.kid}, claims, signer)

    def access_token(self, username: str) -> str:
        from joserfc import jwt

        now = int(time.time())
        claims = {"iss": self.issuer, "sub": self.users[username]["sub"], "client_id": self.client_id,
                  "token_use": "access", "scope": "openid email", "iat": now, "exp": now + 3600,
                  "username": username}
        return jwt.encode({"alg": "RS256", "kid": self.key.kid}, claims, self.key)

    # -- the grant ----------------------------------------------------------------------------
    def authorize_problem(self, query: dict[str, str]) -> str | None:
        if query.get("client_id") != self.client_id:
            return "unknown client_id"
        if query.get("redirect_uri") not in self.callbacks:
            return "redirect_uri is not a registered callback"
        if query.get("response_type") != "code":
            return "response_type must be code"
        if query.get("code_challenge_method") != "S256":
            return "code_challenge_method must be S256"
        if not CHALLENGE.match(query.get("code_challenge", "")):
            return "code_challenge must be BASE64URL(SHA-256(verifier))"
        if not query.get("state"):
            return "state is required"
        return None

    def issue_code(self, query: dict[str, str], username: str) -> str:
        code = secrets.token_urlsafe(24)
        with self.lock:
            self.grants[code] = Grant(query["client_id"], query["redirect_uri"], query["code_challenge"],
                                      username, time.time() + CODE_TTL_S)
        return code

    def redeem(self, form: dict[str, str]) -> tuple[int, dict[str, Any], str]:
        """(status, body, why) of a token request."""
        if form.get("grant_type") != "authorization_code":
            return 400, {"error": "unsupported_grant_type"}, "grant_type"
        if "client_secret" in form:
            return 400, {"error": "invalid_client"}, "a public client has no secret"
        with self.lock:
            grant = self.grants.pop(form.get("code", ""), None)  # single use, whatever follows
        if grant is None or grant.expires < time.time():
            return 400, {"error": "invalid_grant"}, "unknown, used or expired code"
        if form.get("client_id") != grant.client_id or form.get("redirect_uri") != grant.redirect_uri:
            return 400, {"error": "invalid_grant"}, "client or redirect_uri differ from the authorization"
        if s256(form.get("code_verifier", "")) != grant.challenge:
            return 400, {"error": "invalid_grant"}, "PKCE verification failed"
        tokens = {"id_token": self.id_token(grant.username), "token_type": "Bearer", "expires_in": 3600,
                  "access_token": self.access_token(grant.username)}
        return 200, tokens, "ok"

    # -- the server -----------------------------------------------------------------------------
    def start(self, directory: Path) -> tuple[ThreadingHTTPServer, Path]:
        """Serve on a free loopback port over HTTPS; (server, the CA file to trust)."""
        from joserfc.jwk import RSAKey

        self.key = RSAKey.generate_key(2048, parameters={"kid": f"test-{uuid.uuid4().hex[:8]}",
                                                          "use": "sig", "alg": "RS256"})
        ca, cert, key = loopback_certificate(directory)
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        self.issuer = f"https://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, name="oauth-standin", daemon=True).start()
        return server, ca

    @property
    def domain(self) -> str:
        """What config.json names: host:port of the hosted UI."""
        return self.issuer.removeprefix("https://")

    def token_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"] == "/oauth2/token"]


def _handler(idp: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, body: bytes, content_type: str,
                  headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            origin = self.headers.get("Origin")
            if origin and any(c.startswith(origin + "/") for c in idp.callbacks):
                self.send_header("Access-Control-Allow-Origin", origin)  # the token endpoint's CORS
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, body: dict[str, Any]) -> None:
            self._send(status, json.dumps(body).encode(), "application/json")

        def _form(self) -> dict[str, str]:
            length = int(self.headers.get("Content-Length") or 0)
            return {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            idp.requests.append({"path": url.path, "method": "GET", "query": query})
            if url.path == "/.well-known/jwks.json":
                self._json(200, idp.jwks())
            elif url.path == "/oauth2/authorize":
                problem = idp.authorize_problem(query)
                if problem:
                    self._send(400, html.escape(problem).encode(), "text/plain; charset=utf-8")
                    return
                hidden = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                                 for k, v in query.items())
                page = (f"<!doctype html><title>Sign in</title><form method=post action=/login>{hidden}"
                        "<label>Username <input name=username></label><button>Sign in</button></form>")
                self._send(200, page.encode(), "text/html; charset=utf-8")
            else:
                self._send(404, b"not found", "text/plain")

        def do_POST(self) -> None:  # noqa: N802
            url = urlsplit(self.path)
            form = self._form()
            record: dict[str, Any] = {"path": url.path, "method": "POST", "form": form,
                                      "origin": self.headers.get("Origin")}
            idp.requests.append(record)
            if url.path == "/login":
                problem = idp.authorize_problem(form)
                if problem or form.get("username") not in idp.users:
                    why = problem or "unknown user"
                    self._send(400, html.escape(why).encode(), "text/plain; charset=utf-8")
                    return
                names = ("client_id", "redirect_uri", "response_type", "scope", "code_challenge_method",
                         "code_challenge", "state")
                query = {k: form[k] for k in names if k in form}
                code = idp.issue_code(query, form["username"])
                target = f"{form['redirect_uri']}?{urlencode({'code': code, 'state': form['state']})}"
                self._send(302, b"", "text/plain", {"Location": target})
            elif url.path == "/oauth2/token":
                status, body, why = idp.redeem(form)
                record.update(status=status, why=why)
                self._json(status, body)
            else:
                self._send(404, b"not found", "text/plain")

    return Handler
