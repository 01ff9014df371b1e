"""Error mapping (12.1), retry policy and schemas of the shared Google package."""

import json
import subprocess
import sys

import pytest
import requests
from analytics_acp import CredentialsInvalid, InvalidArguments, ResourceNotFound, UpstreamError
from analytics_acp_google import retry
from analytics_acp_google.endpoint import api_endpoint
from analytics_acp_google.errors import scrub, to_acp_error
from analytics_acp_google.schemas import SERVICE_ACCOUNT_KEY, api_endpoint_property, credentials_schema
from google.api_core import exceptions as gexc
from googlefakes.server import google_error


def _http(status, message="boom", reason=None):
    return gexc.from_http_status(status, message, errors=[{"reason": reason}] if reason else None)


class _Resp:  # the shape of httplib2.Response that googleapiclient.errors.HttpError carries
    def __init__(self, status):
        self.status = status
        self.reason = "x"


class HttpError(Exception):  # duck-typed googleapiclient.errors.HttpError (resp.status + JSON content)
    def __init__(self, status, body):
        super().__init__("HttpError")
        self.resp = _Resp(status)
        self.content = json.dumps(body).encode()


def test_status_mapping_for_gapic_errors():
    assert isinstance(to_acp_error(_http(401)), CredentialsInvalid)
    err = to_acp_error(_http(403, "User does not have sufficient permissions"), resource="123", visible="ikaue.com (123)")
    assert isinstance(err, ResourceNotFound) and "'123'" in err.message and "can see: ikaue.com (123)" in err.message
    assert isinstance(to_acp_error(_http(404)), ResourceNotFound)
    quota = to_acp_error(_http(429, "Exhausted property tokens per day. Quota tokensPerDay", "RESOURCE_EXHAUSTED"))
    assert isinstance(quota, UpstreamError) and "tokensPerDay" in quota.message and "midnight Pacific" in quota.message
    hourly = to_acp_error(_http(429, "Exhausted property tokens per hour (tokensPerHour)"))
    assert "tokensPerHour" in hourly.message and "within the hour" in hourly.message
    assert isinstance(to_acp_error(_http(503, "backend")), UpstreamError)
    same = InvalidArguments("x")
    assert to_acp_error(same) is same


def test_googleapiclient_http_errors_map_the_same_way():
    assert isinstance(to_acp_error(HttpError(401, google_error(401, "bad"))), CredentialsInvalid)
    assert isinstance(to_acp_error(HttpError(403, google_error(403, "denied"))), ResourceNotFound)
    rate = to_acp_error(HttpError(403, {"error": {"code": 403, "message": "Quota exceeded",
                                                  "errors": [{"reason": "rateLimitExceeded"}]}}))
    assert isinstance(rate, UpstreamError) and "exhausted" in rate.message


def test_timeouts_connection_errors_and_retry_error():
    assert "did not answer within 1 s" in to_acp_error(requests.exceptions.ReadTimeout()).message
    assert "Could not reach" in to_acp_error(requests.exceptions.ConnectionError()).message
    err = to_acp_error(gexc.RetryError("Timeout of 2.0s exceeded", cause=_http(503, "down")))
    assert isinstance(err, UpstreamError) and "2 s" in err.message and "down" in err.message
    # the review's complaint: a token endpoint that cannot be reached is not a credentials error
    from google.auth import exceptions as gauth

    cut = gauth.TransportError(requests.exceptions.ConnectionError("Failed to establish a new connection: [Errno 111] Connection refused"))
    assert isinstance(to_acp_error(cut), UpstreamError) and "refused" in to_acp_error(cut).message
    assert isinstance(to_acp_error(gauth.RefreshError("invalid_grant: Token has been expired or revoked.")), CredentialsInvalid)


def test_secrets_are_scrubbed_from_upstream_messages():
    text = scrub("token ya29.A0ARrdaM-secret and Bearer abc.def and 1//0gLongRefresh and eyJhbGciOi.eyJpc3Mi.sig")
    assert "ya29.A0" not in text and "abc.def" not in text and "1//0g" not in text and "eyJhbGciOi" not in text
    assert "ya29.LEAK" not in to_acp_error(_http(400, "bad token ya29.LEAK")).message


def test_retry_policy_retries_5xx_and_connection_errors_only(monkeypatch, fake):
    assert retry.deadline_s() == 2 and retry.request_timeout_s() == 1
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_DEADLINE_S", "nonsense")
    assert retry.deadline_s() == 30
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_DEADLINE_S", "2")
    for status in (500, 502, 503, 504):
        assert retry.is_retryable(_http(status))
    for status in (400, 401, 403, 404, 429):
        assert not retry.is_retryable(_http(status))
    # a connection that cannot be made is not a transient server error (issue 26.1): call() retries it once, typed
    assert retry.classify(requests.exceptions.ConnectionError()) == "network" and not retry.is_retryable(requests.exceptions.ConnectionError())
    assert retry.classify(requests.exceptions.ReadTimeout()) == "timeout" and not retry.is_retryable(requests.exceptions.ReadTimeout())
    assert retry.classify(_http(429, "Quota exceeded")) == "quota" and retry.classify(_http(403, "rateLimitExceeded")) == "quota"

    fake.route("GET", "/thing", lambda req: (200, {"ok": True}))
    fake.fail("GET", "/thing", (503, google_error(503, "try again")), (502, google_error(502, "again")))

    def call():
        resp = requests.get(fake.url + "/thing", timeout=retry.request_timeout_s())
        if resp.status_code >= 400:
            raise gexc.from_http_response(resp)
        return resp.json()

    assert retry.api_core_retry()(call)() == {"ok": True}
    assert len(fake.requests_to("^/thing$")) == 3

    fake.fail("GET", "/thing", *[(503, google_error(503, "down"))] * 1000)
    with pytest.raises(gexc.RetryError) as info:
        retry.api_core_retry()(call)()
    assert isinstance(to_acp_error(info.value), UpstreamError)

    fake.clear_faults()
    fake.fail("GET", "/thing", (404, google_error(404, "nope")))
    fake.requests.clear()
    with pytest.raises(gexc.NotFound):
        retry.api_core_retry()(call)()
    assert len(fake.requests) == 1  # a 4xx is never retried


def test_schemas_follow_4_2_and_5_5_5():
    schema = credentials_schema(scopes=["https://www.googleapis.com/auth/analytics.readonly"], product="Google Analytics 4")
    sa, oauth, au = schema["oneOf"]
    assert sa["properties"]["service_account"] == {
        "type": "string", "title": "Service account JSON",
        "description": "Paste the full JSON key file (includes client_email and private_key).",
        "contentMediaType": "application/json", "contentSchema": SERVICE_ACCOUNT_KEY, "writeOnly": True}
    # Issue 34.1: what a key file must hold, as JSON Schema 2020-12 any host can check the pasted text against.
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(SERVICE_ACCOUNT_KEY)
    assert sa["required"] == ["type", "service_account"] and sa["properties"]["type"]["const"] == "service_account"
    assert oauth["x-acp-login"] == {"provider": "google", "scopes": ["https://www.googleapis.com/auth/analytics.readonly"]}
    assert set(oauth["properties"]) == {"type", "access_token", "refresh_token", "client_id", "client_secret", "expiry_date", "email"}
    assert all(oauth["properties"][k].get("x-acp-filled") for k in oauth["properties"] if k != "type")
    assert all(oauth["properties"][k].get("writeOnly") for k in ("access_token", "refresh_token", "client_secret"))
    assert set(au["properties"]) == {"type", "client_id", "client_secret", "refresh_token", "account", "quota_project_id",
                                     "universe_domain"}
    assert api_endpoint_property()["title"] == "API endpoint (advanced)" and api_endpoint_property()["format"] == "uri"
    assert api_endpoint({"api_endpoint": "  http://127.0.0.1:9/ "}) == "http://127.0.0.1:9"
    assert api_endpoint({"api_endpoint": "  "}) is None and api_endpoint(None) is None


def test_importing_the_package_imports_no_google_module():
    code = ("import sys, analytics_acp_google, analytics_acp_google.credentials, analytics_acp_google.errors, "
            "analytics_acp_google.retry, analytics_acp_google.schemas, analytics_acp_google.endpoint; "
            "print(sorted(m for m in sys.modules if m.startswith('google')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
