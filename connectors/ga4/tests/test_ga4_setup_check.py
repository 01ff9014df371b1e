"""Issue 34.1 and 34.3: `analytics-acp serve ga4` refuses a set-up offline through validate-only acp/configure
(the host client's ``validate_setup``) with the spec's codes and messages that name the field and say what to
give: no credentials, a key whose private_key is not a key, an OAuth client-secrets file given as a service
account, a downloaded key without private_key, a bad row_limit. A good key passes without any request (its
token endpoint and the API endpoint count connections), the session stays as it was, and no message holds a
secret. The Google setup schema says the same with ``contentSchema`` to a host checking without the server.

One HTTP server process for the module; each test is a session of its own.
"""

from __future__ import annotations

import json
import socket

import anyio
import pytest
from analytics_acp import kit
from analytics_acp.host import AcpClient
from analytics_acp.setup_check import check_offline
from googlefakes import keys

SECRET = "DISTINCT-SECRET-b7e04a"


@pytest.fixture(scope="module")
def counting():
    """A loopback listener standing for Google (token and API endpoint): no one may connect during a check."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        listener.setblocking(False)
        yield listener


@pytest.fixture(scope="module")
def served():
    with kit.serve_http([*kit.serve_command("ga4"), "--http"]) as server:
        yield server


def _key(counting, **changes) -> dict:
    info = {**keys.service_account_info(f"http://127.0.0.1:{counting.getsockname()[1]}/token"), **changes}
    return {k: v for k, v in info.items() if v is not None}


def _as_service_account(content: dict) -> dict:
    return {"type": "service_account", "service_account": json.dumps(content)}


def _validate(served, setup: dict):
    async def main():
        async with AcpClient.http(served.url) as client:
            assert client.supports_validate_only
            return await client.validate_setup(setup), client.server_capability

    return anyio.run(main)


def _refused(served, setup: dict, name: str):
    error, capability = _validate(served, setup)
    assert error is not None and error.name == name, error
    assert SECRET not in error.message and "BEGIN PRIVATE" not in error.message and "Ask the user" not in error.message
    return error.message, capability


def test_no_credentials_is_credentials_missing(served):
    message, _ = _refused(served, {"config": {"timeout_s": 10}}, "ACP_CREDENTIALS_MISSING")
    assert message == ("This source needs credentials (one of: Service account, OAuth, gcloud application-default "
                       "credentials) and none were given.")


def test_a_good_key_passes_without_a_request(served, counting):
    config = {"api_endpoint": f"http://127.0.0.1:{counting.getsockname()[1]}"}
    error, _ = _validate(served, {"credentials": _as_service_account(_key(counting)), "config": config, "row_limit": 50})
    assert error is None
    with pytest.raises(BlockingIOError):
        counting.accept()  # neither the token endpoint nor the API heard from the server


def test_a_private_key_that_is_not_a_key(served, counting):
    garbage = "-----BEGIN PRIVATE KEY-----\n" + SECRET + "\n-----END PRIVATE KEY-----\n"
    message, _ = _refused(served, {"credentials": _as_service_account(_key(counting, private_key=garbage))},
                          "ACP_CREDENTIALS_INVALID")
    # Passes the schema (PEM armour), refused by the ACP's own check: google-auth cannot load it.
    assert message == ("The service account key could not be read (its private_key is not a valid RSA key): download a "
                       "new key file and paste it whole.")
    message, _ = _refused(served, {"credentials": _as_service_account(_key(counting, private_key=SECRET))},
                          "ACP_CREDENTIALS_INVALID")
    assert message == ("The credentials are not valid: service_account: its private_key is not a PEM private key; "
                       "download a new key file.")


def test_an_oauth_client_secrets_file_given_as_a_service_account(served):
    client_file = {"installed": {"client_id": "123.apps.googleusercontent.com", "client_secret": SECRET,
                                 "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                                 "token_uri": "https://oauth2.googleapis.com/token"}}
    for content in (client_file, {"web": client_file["installed"]}):
        message, capability = _refused(served, {"credentials": _as_service_account(content)}, "ACP_CREDENTIALS_INVALID")
        assert message.startswith("The credentials are not valid: service_account: this is an OAuth client-secrets "
                                  "file, not a service account key.")
        assert "sign in with `analytics-acp login google` (the OAuth variant)" in message
        # The published schema alone says the same to a host that checks without the server (contentSchema).
        offline = check_offline(capability, {"credentials": _as_service_account(content)})
        assert offline is not None and offline.message == message


def test_a_downloaded_key_without_private_key(served, counting):
    message, capability = _refused(served, {"credentials": _as_service_account(_key(counting, private_key=None))},
                                   "ACP_CREDENTIALS_INVALID")
    assert message == ("The credentials are not valid: service_account lacks private_key (expected: the JSON key file "
                       "of a service account, with client_email, private_key and token_uri).")
    whole = _key(counting, private_key=None)  # the key file given whole, as sources.json {"file": ...} gives it
    assert _refused(served, {"credentials": whole}, "ACP_CREDENTIALS_INVALID")[0] == message
    assert check_offline(capability, {"credentials": whole}).message == message


def test_a_bad_row_limit_is_invalid_limit(served, counting):
    message, _ = _refused(served, {"credentials": _as_service_account(_key(counting)), "row_limit": 9000},
                          "ACP_INVALID_LIMIT")
    assert message == "row_limit must be an integer between 0 and 5000."


def test_validate_only_leaves_the_session_without_credentials(served, counting):
    async def main():
        async with AcpClient.http(served.url) as client:
            setup = {"credentials": _as_service_account(_key(counting)), "row_limit": 3}
            assert await client.validate_setup(setup) is None
            assert (await client.configure())["effective"]["has_credentials"] is False
            res = await client.call_tool("run_report", {"resource_id": "123456789", "metrics": ["sessions"]}, meta={})
            assert res.error["name"] == "ACP_CREDENTIALS_MISSING"

    anyio.run(main)
