"""An OAuth 2.0 token endpoint (``POST /token``) for the fakes: JWT-bearer and refresh_token grants."""

from __future__ import annotations

import secrets
from typing import Any

from .server import FakeServer, Request

TOKEN_PATH = "/token"


class TokenEndpoint:
    """Issues opaque access tokens; verifies JWT assertions with registered public keys."""

    def __init__(self, server: FakeServer):
        self.server = server
        self.refresh_tokens: dict[str, tuple[str, str, str]] = {}  # refresh -> (client_id, client_secret, subject)
        self.invalid_grant = False
        self.issued: list[dict[str, Any]] = []  # grant type, subject, scope per issued token (no token values)
        server.route("POST", TOKEN_PATH, self._handle)

    @property
    def token_uri(self) -> str:
        return self.server.url + TOKEN_PATH

    def register_service_account(self, email: str, public_pem: str) -> None:
        """Accept assertions (and self-signed JWTs on the API routes) signed by this key for ``email``."""
        self.server.public_keys[email] = public_pem

    def register_refresh_token(self, refresh_token: str, client_id: str, client_secret: str, subject: str) -> None:
        """Accept this refresh token from this OAuth client; tokens issued for it belong to ``subject``."""
        self.refresh_tokens[refresh_token] = (client_id, client_secret, subject)

    def _issue(self, subject: str, grant: str, scope: str | None) -> tuple[int, Any]:
        token = "ya29.fake-" + secrets.token_urlsafe(16)
        self.server.tokens[token] = subject
        self.issued.append({"grant_type": grant, "subject": subject, "scope": scope})
        return 200, {"access_token": token, "expires_in": 3599, "token_type": "Bearer", **({"scope": scope} if scope else {})}

    def _handle(self, req: Request) -> tuple[int, Any]:
        form = req.body if isinstance(req.body, dict) else {}
        bad = (400, {"error": "invalid_grant", "error_description": "Invalid grant: account not found"})
        if self.invalid_grant:
            return bad
        grant = form.get("grant_type")
        if grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            from google.auth import jwt

            assertion = form.get("assertion", "")
            try:
                claims = jwt.decode(assertion, verify=False)
                pem = self.server.public_keys[claims["iss"]]
                # google-auth signs the assertion for Google's token URI even when the key's token_uri differs.
                claims = jwt.decode(assertion, certs=pem, verify=True,
                                    audience=[self.token_uri, "https://oauth2.googleapis.com/token"])
            except (KeyError, ValueError):
                return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
            return self._issue(str(claims["iss"]), "jwt-bearer", claims.get("scope"))
        if grant == "refresh_token":
            known = self.refresh_tokens.get(form.get("refresh_token", ""))
            if not known or known[:2] != (form.get("client_id"), form.get("client_secret")):
                return 400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
            return self._issue(known[2], "refresh_token", form.get("scope"))
        return 400, {"error": "unsupported_grant_type"}
