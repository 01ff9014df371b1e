"""Throwaway credentials generated at test time (never a real key)."""

from __future__ import annotations

import functools
import json
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


@functools.lru_cache(maxsize=8)
def _rsa_pem(slot: int) -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, public


def service_account_info(token_uri: str, email: str = "acp-test@fake-project.iam.gserviceaccount.com",
                         *, slot: int = 0) -> dict[str, Any]:
    """A service account key file's dict with a freshly generated RSA key (``slot`` picks one of a few keys)."""
    private, _ = _rsa_pem(slot)
    return {
        "type": "service_account",
        "project_id": "fake-project",
        "private_key_id": f"fakekey{slot}",
        "private_key": private,
        "client_email": email,
        "client_id": "100000000000000000000",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": token_uri,
        "universe_domain": "googleapis.com",
    }


def public_key_pem(slot: int = 0) -> str:
    """The public half of the key of ``slot`` (the token endpoint verifies assertions with it)."""
    return _rsa_pem(slot)[1]


def service_account_credentials(token_uri: str, email: str = "acp-test@fake-project.iam.gserviceaccount.com",
                                *, slot: int = 0) -> dict[str, Any]:
    """The ACP credentials object of the service_account variant (the key JSON pasted as a string)."""
    return {"type": "service_account", "service_account": json.dumps(service_account_info(token_uri, email, slot=slot))}


def authorized_user(token_uri: str | None = None, *, refresh_token: str = "1//fake-refresh-token",
                    client_id: str = "fake-client.apps.googleusercontent.com", client_secret: str = "fake-client-secret",
                    account: str = "person@example.com") -> dict[str, Any]:
    """The authorized_user JSON that gcloud writes (plus token_uri when pointing at a fake)."""
    out = {"type": "authorized_user", "client_id": client_id, "client_secret": client_secret,
           "refresh_token": refresh_token, "account": account, "quota_project_id": "fake-project",
           "universe_domain": "googleapis.com"}
    if token_uri:
        out["token_uri"] = token_uri
    return out


def oauth(*, access_token: str | None = "ya29.fake-access-token", refresh_token: str | None = None,
          client_id: str | None = None, client_secret: str | None = None, email: str = "person@example.com",
          expiry_date: str | int | None = None, token_uri: str | None = None) -> dict[str, Any]:
    """An ACP credentials object of the oauth variant."""
    out: dict[str, Any] = {"type": "oauth", "email": email}
    for key, value in (("access_token", access_token), ("refresh_token", refresh_token), ("client_id", client_id),
                       ("client_secret", client_secret), ("expiry_date", expiry_date), ("token_uri", token_uri)):
        if value is not None:
            out[key] = value
    return out
