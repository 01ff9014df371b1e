"""Google failures -> typed ACP errors (spec 12.1), for GAPIC REST, BigQuery and googleapiclient alike.

Messages are English, say what to do next and never contain a secret, a token or a raw body
that could echo one.
"""

from __future__ import annotations

import json
import re
from typing import Any

from analytics_acp import AcpError, CredentialsInvalid, ResourceNotFound, UpstreamError

from .retry import deadline_s, request_timeout_s

_QUOTA_WORDS = ("RESOURCE_EXHAUSTED", "rateLimitExceeded", "quotaExceeded", "userRateLimitExceeded",
                "dailyLimitExceeded", "Exhausted", "quota")
# Anything that looks like a bearer token, a JWT or a PEM block is cut from upstream messages.
_SECRETISH = re.compile(r"(ya29\.[\w\-.]+|eyJ[\w\-]+\.[\w\-]+\.[\w\-]*|-----BEGIN[^-]+-----.*?-----END[^-]+-----|"
                        r"(?i:bearer)\s+\S+|1//[\w\-]+)", re.S)

# google.api_core's REST errors start their message with "POST https://…/v1beta/properties/1:runReport?%24alt=json…: ";
# the request line is noise for the model and pushed Google's own words past the length bound.
_REQUEST_LINE = re.compile(r"^(?:GET|POST|PUT|PATCH|DELETE) \S+: ")


def scrub(text: str, limit: int = 400) -> str:
    """An upstream message made safe to show: secret-looking strings removed, length bounded."""
    text = _SECRETISH.sub("[redacted]", " ".join(str(text).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _safe(obj: Any, attr: str) -> Any:
    # Some api_core properties raise when the error was built without details (errors=None).
    try:
        return getattr(obj, attr, None)
    except Exception:
        return None


def _http_status_and_message(exc: BaseException) -> tuple[int | None, str, str]:
    """(HTTP status, message, reason/status text) from a GoogleAPICallError or a googleapiclient HttpError."""
    code = getattr(exc, "code", None)
    if isinstance(code, int) and hasattr(exc, "message"):  # google.api_core.exceptions.GoogleAPICallError
        reason = " ".join(str(x) for x in (_safe(exc, "reason"), _safe(exc, "grpc_status_code"),
                                            _safe(exc, "details"), _safe(exc, "errors")) if x)
        return code, _REQUEST_LINE.sub("", str(getattr(exc, "message", "") or "")), reason
    resp = getattr(exc, "resp", None)
    status = getattr(resp, "status", None)
    if status is not None:  # googleapiclient.errors.HttpError
        content = getattr(exc, "content", b"") or b""
        message, reason = "", ""
        try:
            err = json.loads(content.decode("utf-8", "replace")).get("error", {})
            message = str(err.get("message", ""))
            reason = " ".join([str(err.get("status", ""))] + [str(e.get("reason", "")) for e in err.get("errors", []) or []])
        except (ValueError, AttributeError):
            message = str(getattr(exc, "reason", "") or "")
        try:
            return int(status), message, reason
        except (TypeError, ValueError):
            return None, message, reason
    return None, "", ""


def _quota_text(message: str, reason: str) -> str:
    blob = f"{message} {reason}"
    which = "the API quota"
    for bucket in ("tokensPerDay", "tokensPerHour", "tokensPerProjectPerHour", "concurrentRequests",
                   "serverErrorsPerProjectPerHour", "potentiallyThresholdedRequestsPerHour"):
        if bucket.lower() in blob.lower():
            which = f"the {bucket} quota"
            break
    else:
        lowered = blob.lower()
        if "per day" in lowered or "daily" in lowered:
            which = "a daily quota"
        elif "per hour" in lowered or "hourly" in lowered:
            which = "an hourly quota"
        elif "per minute" in lowered or "ratelimit" in lowered:
            which = "a per-minute rate limit"
    lowered_which = which.lower()
    when = ("it refills at midnight Pacific Time" if "day" in lowered_which or "daily" in lowered_which else
            "it refills within the hour" if "hour" in lowered_which else "retry in a minute")
    return f"Google: {which} is exhausted ({scrub(message, 200) or 'RESOURCE_EXHAUSTED'}); {when}. Make fewer or smaller requests."


def to_acp_error(exc: BaseException, *, resource: str | None = None, visible: str | None = None) -> AcpError:
    """The typed ACP error for a Google failure; an AcpError passes through unchanged."""
    if isinstance(exc, AcpError):
        return exc
    module = type(exc).__module__ or ""
    name = type(exc).__name__
    if module.startswith("google.auth") and name in ("RefreshError", "TransportError", "DefaultCredentialsError",
                                                     "MalformedError", "OAuthError", "UserAccessTokenError"):
        detail = "invalid_grant" if "invalid_grant" in str(exc) else name
        return CredentialsInvalid(f"Google rejected the credentials ({detail}): the key was revoked, the refresh token "
                                  "expired or the OAuth client does not match. Sign in again with `analytics-acp login google`, "
                                  "or paste a new service account key.")
    if name == "RetryError" and module.startswith("google.api_core"):
        cause = getattr(exc, "cause", None)
        tail = f" Last error: {scrub(str(getattr(cause, 'message', cause)), 200)}." if cause is not None else ""
        return UpstreamError(f"Google kept failing for {deadline_s():.0f} s (retried 5xx/connection errors).{tail} "
                             "Try again in a few minutes.")
    status, message, reason = _http_status_and_message(exc)
    if status == 401:
        return CredentialsInvalid("Google answered 401 Unauthenticated: the token expired or was revoked. "
                                  "Sign in again or paste a new service account key.")
    if status in (403, 404) and not any(w.lower() in f"{message} {reason}".lower() for w in ("RESOURCE_EXHAUSTED", "rateLimitExceeded", "quotaExceeded")):
        what = f"'{resource}'" if resource else "The resource"
        seen = f" These credentials can see: {visible}." if visible else ""
        verb = "does not exist" if status == 404 else "is not accessible with these credentials"
        return ResourceNotFound(f"{what} {verb} (HTTP {status}: {scrub(message, 200)}).{seen} "
                                "Check the id or grant the account access.")
    blob = f"{message} {reason}"
    if status == 429 or any(w.lower() in blob.lower() for w in _QUOTA_WORDS[:5]):
        return UpstreamError(_quota_text(message, reason))
    if status is not None and status >= 500:
        return UpstreamError(f"Google answered HTTP {status} ({scrub(message, 200)}) after retries for up to "
                             f"{deadline_s():.0f} s. Try again later.")
    if status is not None:
        return UpstreamError(f"Google answered HTTP {status}: {scrub(message, 300)}")
    if _is_timeout(exc):
        return UpstreamError(f"Google did not answer within {request_timeout_s():.0f} s. Try again later or narrow the request.")
    if _is_connection_error(exc):
        return UpstreamError("Could not reach Google's API (connection failed). Check the network or the api_endpoint setting.")
    return UpstreamError(f"Google call failed: {name}: {scrub(str(exc), 200)}")


def _is_timeout(exc: BaseException) -> bool:
    try:
        import requests
        if isinstance(exc, requests.exceptions.Timeout):
            return True
    except ImportError:  # pragma: no cover
        pass
    return isinstance(exc, TimeoutError) or type(exc).__name__ in ("DeadlineExceeded", "ReadTimeout", "socket.timeout")


def _is_connection_error(exc: BaseException) -> bool:
    try:
        import requests
        if isinstance(exc, requests.exceptions.ConnectionError):
            return True
    except ImportError:  # pragma: no cover
        pass
    return isinstance(exc, ConnectionError)


def error_details(exc: BaseException) -> dict[str, Any]:
    """(status, message, reason) of a Google HTTP error, for connectors that refine the mapping."""
    status, message, reason = _http_status_and_message(exc)
    return {"status": status, "message": message, "reason": reason}
