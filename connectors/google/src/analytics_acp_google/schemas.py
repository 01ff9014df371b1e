"""Setup schemas shared by the Google connectors (spec 4.2, 5.5.2, 5.5.5), and what else their declarations share."""

from __future__ import annotations

from typing import Any

from analytics_acp import lazy

# ConnectorInfo.check_setup of every Google connector: the credentials built offline (offline_check.py).
CHECK_SETUP = lazy("analytics_acp_google.offline_check:check_setup")
# ConnectorInfo.autocontext_concurrency: blocks fetched at once, one slow Google is paid once, quota is not stormed.
# Here, not in retry.py (which re-exports it), so that a declaration does not import the retry policy at start-up.
AUTOCONTEXT_CONCURRENCY = 4

def _secret(title: str, description: str) -> dict[str, Any]:
    return {"type": "string", "title": title, "description": description, "writeOnly": True}


# Where an OAuth client file arrives as a key: what it is and what to give instead (5.5.0: English, for a person).
OAUTH_CLIENT_FILE = ("this is an OAuth client-secrets file, not a service account key. For a Google account, sign in "
                     "with `analytics-acp login google` (the OAuth variant); for a service account, download its key "
                     "(Google Cloud console > IAM > Service accounts > Keys > Add key > JSON).")

# contentSchema (JSON Schema 2020-12) of the service_account text: the core checks the pasted JSON against it and
# takes the failing part's description as the message (analytics_acp.schemas). Kept small: it is in the capability.
SERVICE_ACCOUNT_KEY: dict[str, Any] = {
    "type": "object",
    "description": "expected: the JSON key file of a service account, with client_email, private_key and token_uri",
    "required": ["client_email", "private_key", "token_uri"],
    "properties": {
        "type": {"const": "service_account",
                 "description": "this is not a service account key (its type is not service_account); a gcloud "
                                "authorized_user file goes in the authorized_user variant."},
        "private_key": {"type": "string", "pattern": "-----BEGIN [A-Z ]*PRIVATE KEY-----",
                        "description": "its private_key is not a PEM private key; download a new key file."},
    },
    # "installed" / "web": the sections of an OAuth client-secrets file, never in a key file.
    "patternProperties": {"^(installed|web)$": {"not": {}, "description": OAUTH_CLIENT_FILE}},
}


def credentials_schema(*, scopes: list[str], product: str) -> dict[str, Any]:
    """The ``credentials_schema`` oneOf: service_account (4.2's shape), oauth (with x-acp-login) and authorized_user.

    ``product`` names the Google product in the help texts ("Google Analytics 4", "Search Console"…).
    """
    service_account = {
        "title": "Service account",
        "type": "object",
        "description": f"A service account key with read access to {product}.",
        "properties": {
            "type": {"type": "string", "const": "service_account"},
            "service_account": {
                "type": "string",
                "title": "Service account JSON",
                "description": "Paste the full JSON key file (includes client_email and private_key).",
                "contentMediaType": "application/json",
                "contentSchema": SERVICE_ACCOUNT_KEY,
                "writeOnly": True,
            },
        },
        "required": ["type", "service_account"],
    }
    oauth = {
        "title": "OAuth",
        "type": "object",
        "description": (f"A Google account signed in with access to {product}: an access token, or a refresh token "
                        "with the OAuth client that issued it (client_id, client_secret)."),
        # 5.5.5: the host opens Google's login with these scopes and fills the marked fields.
        "x-acp-login": {"provider": "google", "scopes": list(scopes)},
        "properties": {
            "type": {"type": "string", "const": "oauth"},
            "access_token": {**_secret("Access token", "A current OAuth access token."), "x-acp-filled": True},
            "refresh_token": {**_secret("Refresh token", "Lets the server get new access tokens."), "x-acp-filled": True},
            "client_id": {"type": "string", "title": "OAuth client id", "description": "The OAuth client that issued the refresh token.",
                          "x-acp-filled": True},
            "client_secret": {**_secret("OAuth client secret", "The secret of that OAuth client."), "x-acp-filled": True},
            "expiry_date": {"type": "string", "title": "Access token expiry",
                            "description": "When the access token expires: ISO 8601 or epoch milliseconds.", "x-acp-filled": True},
            "email": {"type": "string", "title": "Account", "description": "The signed-in Google account.", "x-acp-filled": True},
        },
        "required": ["type"],
    }
    authorized_user = {
        "title": "gcloud application-default credentials",
        "type": "object",
        "description": ("The authorized_user JSON that 'gcloud auth application-default login' writes "
                        "(~/.config/gcloud/application_default_credentials.json)."),
        "properties": {
            "type": {"type": "string", "const": "authorized_user"},
            "client_id": {"type": "string", "title": "Client id"},
            "client_secret": _secret("Client secret", "client_secret from the file."),
            "refresh_token": _secret("Refresh token", "refresh_token from the file."),
            "account": {"type": "string", "title": "Account"},
            "quota_project_id": {"type": "string", "title": "Quota project"},
            "universe_domain": {"type": "string", "title": "Universe domain"},
        },
        "required": ["type", "client_id", "client_secret", "refresh_token"],
    }
    return {"oneOf": [service_account, oauth, authorized_user]}


def api_endpoint_property() -> dict[str, Any]:
    """The config_schema property ``api_endpoint`` (advanced: private endpoints and test fakes)."""
    return {
        "type": "string",
        "title": "API endpoint (advanced)",
        "description": ("Root URL of the API, for example https://analyticsdata.googleapis.com. Leave empty to use "
                        "Google's. Used for private endpoints and test fakes."),
        "format": "uri",
    }


def timeout_property() -> dict[str, Any]:
    """The config_schema property ``timeout_s`` (advanced): the longest one call waits for Google."""
    from .timeouts import DEFAULT_DEADLINE_S, TIMEOUT_S_MAX, TIMEOUT_S_MIN

    return {
        "type": "number",
        "title": "Timeout in seconds (advanced)",
        "description": (f"The longest one call waits for Google, retries included (default {DEFAULT_DEADLINE_S:.0f}); "
                        "also the read timeout of each request. Raise it on a slow network. A BigQuery job may run "
                        "longer than this: it polls under its own bound."),
        "minimum": TIMEOUT_S_MIN,
        "maximum": TIMEOUT_S_MAX,
    }
