"""Credential variants -> google-auth credentials, in memory only.

Never google.auth.default(), never a metadata-server probe, never a file: the credentials are
exactly what arrived in ``_meta.acp`` / ``acp/configure``. Error messages never quote a value.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from analytics_acp import CredentialsInvalid, CredentialsMissing

GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"


ACCEPTED = ("Accepted: the JSON key file downloaded from the Google Cloud console (given whole, or as the value of "
            "service_account), gcloud's application_default_credentials.json (type authorized_user), or an OAuth login.")


def normalized(credentials: dict[str, Any]) -> dict[str, Any]:
    """The service_account variant for a key file given whole ({"type": "service_account", "private_key", …})."""
    if credentials.get("type") == "service_account" and "service_account" not in credentials and (
            "private_key" in credentials or "client_email" in credentials):
        return {"type": "service_account", "service_account": dict(credentials)}
    return credentials


def _parse_service_account(raw: Any) -> dict[str, Any]:
    if raw is None:
        raise CredentialsInvalid("The service account credentials lack the key: give service_account (the JSON key "
                                 f"file) or the key file's fields (private_key, client_email). {ACCEPTED}")
    if isinstance(raw, dict):
        info = raw
    elif isinstance(raw, str) and raw.strip():
        try:
            info = json.loads(raw)
        except ValueError:
            raise CredentialsInvalid("The service account key is not valid JSON: paste the whole key file "
                                     "downloaded from the Google Cloud console.") from None
    else:
        raise CredentialsInvalid("The service account key is empty: paste the whole JSON key file.")
    if not isinstance(info, dict):
        raise CredentialsInvalid("The service account key must be a JSON object (the key file).")
    if "installed" in info or "web" in info:  # the two sections of an OAuth client-secrets file
        from .schemas import OAUTH_CLIENT_FILE

        raise CredentialsInvalid(f"The JSON given as the service account key: {OAUTH_CLIENT_FILE}")
    if info.get("type", "service_account") != "service_account":
        raise CredentialsInvalid(f"The pasted JSON is a {str(info.get('type'))[:40]!r} file, not a service account key.")
    missing = [k for k in ("client_email", "private_key", "token_uri") if not info.get(k)]
    if missing:
        raise CredentialsInvalid(f"The service account key lacks {', '.join(missing)}: give the whole JSON key file. {ACCEPTED}")
    return info


def parse_expiry(value: Any) -> datetime | None:
    """``expiry_date`` (ISO 8601 or epoch milliseconds) as the naive UTC datetime google-auth expects."""
    if value in (None, ""):
        return None
    try:
        if isinstance(value, int | float) or (isinstance(value, str) and value.strip().isdigit()):
            moment = datetime.fromtimestamp(float(value) / 1000.0, tz=UTC)
        else:
            moment = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        raise CredentialsInvalid("expiry_date must be ISO 8601 (2026-09-25T14:00:00Z) or epoch milliseconds.") from None
    return moment.astimezone(UTC).replace(tzinfo=None)


def build_credentials(credentials: dict[str, Any] | None, scopes: list[str]) -> Any:
    """google-auth credentials for a credentials object of ``credentials_schema`` (service_account/oauth/authorized_user)."""
    if not credentials:
        raise CredentialsMissing("No Google credentials: configure a service account key or an OAuth login for this source.")
    credentials = normalized(credentials)
    kind = credentials.get("type")
    if kind == "service_account":
        info = _parse_service_account(credentials.get("service_account"))
        from google.oauth2 import service_account

        try:
            # The key's own token_uri is honoured (private endpoints, fakes).
            return service_account.Credentials.from_service_account_info(info, scopes=scopes)
        except (ValueError, TypeError, KeyError):
            raise CredentialsInvalid("The service account key could not be read (its private_key is not a valid RSA key): "
                                     "download a new key file and paste it whole.") from None
    if kind in ("oauth", "authorized_user"):
        token = credentials.get("access_token") or None
        refresh = credentials.get("refresh_token") or None
        client_id = credentials.get("client_id") or None
        client_secret = credentials.get("client_secret") or None
        if not token and not (refresh and client_id and client_secret):
            raise CredentialsInvalid(f"The {kind} credentials need an access_token, or a refresh_token with the "
                                     "client_id and client_secret of the OAuth client that issued it.")
        from google.oauth2 import credentials as oauth2

        return oauth2.Credentials(
            token=token, refresh_token=refresh, client_id=client_id, client_secret=client_secret,
            token_uri=credentials.get("token_uri") or GOOGLE_TOKEN_URI, scopes=scopes if refresh else None,
            expiry=parse_expiry(credentials.get("expiry_date")),
            quota_project_id=credentials.get("quota_project_id") or None,
        )
    raise CredentialsInvalid(f"Unknown credentials type: use 'service_account', 'oauth' or 'authorized_user'. {ACCEPTED}")


def account_of(credentials: dict[str, Any] | None) -> str | None:
    """The account to name in a 403 (the key's client_email, the OAuth email/account), or None."""
    if not credentials:
        return None
    if credentials.get("type") == "service_account":
        info = service_account_info(credentials)
        email = info.get("client_email") if info else None
        return str(email) if email else None
    for key in ("email", "account"):
        if credentials.get(key):
            return str(credentials[key])
    return None


def service_account_info(credentials: dict[str, Any]) -> dict[str, Any] | None:
    """The key-file dict inside a service_account credentials object (string or object, or the key given whole)."""
    raw = normalized(credentials).get("service_account")
    try:
        info = raw if isinstance(raw, dict) else json.loads(raw or "")
    except (TypeError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def credential_identity(credentials: dict[str, Any] | None) -> str | None:
    """A non-secret identity (client_email, email, account or client_id) so caches split per identity (7.4)."""
    if not credentials:
        return None
    kind = credentials.get("type")
    if kind == "service_account":
        email = account_of(credentials)
        return f"service_account:{email}" if email else None
    for key in ("email", "account", "client_id"):
        if credentials.get(key):
            return f"{kind}:{key}:{credentials[key]}"
    return None
