"""What a Google failure is: its HTTP status, message and reasons, the chain of what it wraps, and its kind
(transient, network, timeout, quota, other) for GAPIC REST, BigQuery and googleapiclient alike.

Read by the retry policy (what to retry, retry.py) and by the error mapping (which typed ACP error, errors.py),
so it sits below both (issue 38.7: the two used to import each other).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

RETRIED_STATUS = (500, 502, 503, 504)
# BigQuery names its transient 5xx; any other named reason on a 5xx (bytesBilledLimitExceeded) is final.
TRANSIENT_REASONS = frozenset({"backendError", "internalError", "badGateway", "backendFailed"})
# The one list of words that mark a quota or rate-limit error (GA4, Search Console, BigQuery).
_QUOTA_WORDS = ("RESOURCE_EXHAUSTED", "rateLimitExceeded", "quotaExceeded", "userRateLimitExceeded",
                "dailyLimitExceeded", "Exhausted", "quota")
# google.api_core's REST errors start their message with "POST https://…/v1beta/properties/1:runReport?%24alt=json…: ";
# the request line is noise for the model and pushed Google's own words past the length bound.
_REQUEST_LINE = re.compile(r"^(?:GET|POST|PUT|PATCH|DELETE) \S+: ")

Kind = Literal["transient", "network", "timeout", "quota", "other"]


def is_quota_text(text: str) -> bool:
    """True when an error's message/reason names a quota or a rate limit."""
    lowered = text.lower()
    return any(w.lower() in lowered for w in _QUOTA_WORDS)


def _safe(obj: Any, attr: str) -> Any:
    # Some api_core properties raise when the error was built without details (errors=None).
    try:
        return getattr(obj, attr, None)
    except Exception:
        return None


def http_status_and_message(exc: BaseException) -> tuple[int | None, str, str]:
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


def error_details(exc: BaseException) -> dict[str, Any]:
    """(status, message, reason) of a Google HTTP error, for connectors that refine the mapping."""
    status, message, reason = http_status_and_message(exc)
    return {"status": status, "message": message, "reason": reason}


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a GAPIC error (``code``) or a googleapiclient HttpError (``resp.status``), else None."""
    code = getattr(exc, "code", None)
    if isinstance(code, int):
        return code
    status = getattr(getattr(exc, "resp", None), "status", None)  # googleapiclient.errors.HttpError
    try:
        return int(status) if status is not None else None
    except (TypeError, ValueError):
        return None


def _reasons(exc: BaseException) -> list[str]:
    out = []
    try:
        items = getattr(exc, "errors", None) or []
    except Exception:  # api_core properties may raise on a bare error
        items = []
    for item in items:
        if isinstance(item, dict) and item.get("reason"):
            out.append(str(item["reason"]))
    return out


def chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps (__cause__, __context__, urllib3's ``reason``, exception args), outermost first."""
    seen: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo and len(seen) < 12:
        cur = todo.pop(0)
        if any(cur is s for s in seen):
            continue
        seen.append(cur)
        for nxt in (cur.__cause__, cur.__context__, getattr(cur, "reason", None), getattr(cur, "cause", None),
                    *[a for a in getattr(cur, "args", ()) if isinstance(a, BaseException)]):
            if isinstance(nxt, BaseException):
                todo.append(nxt)
    return seen


def host_of(exc: BaseException) -> str | None:
    """The host a failed request was for, from requests/urllib3 errors in the chain."""
    from urllib.parse import urlsplit

    for e in chain(exc):
        request = getattr(e, "request", None)
        url = getattr(request, "url", None)
        if isinstance(url, str) and url:
            return urlsplit(url).hostname
        for owner in (getattr(e, "pool", None), getattr(e, "conn", None)):  # urllib3's pool / connection
            named = getattr(owner, "host", None)
            if named:
                return str(named)
    return None


def _is_read_timeout(exc: BaseException) -> bool:
    import requests

    for e in chain(exc):
        if isinstance(e, requests.exceptions.ConnectTimeout):
            return False
        if isinstance(e, requests.exceptions.Timeout | TimeoutError):
            return True
        if type(e).__name__ in ("ReadTimeoutError", "DeadlineExceeded"):
            return True
    return False


def is_network_failure(exc: BaseException) -> bool:
    """A connection that could not be made: refused, DNS, no route, connect timeout, TLS, proxy."""
    import ssl

    import requests

    for e in chain(exc):
        if isinstance(e, requests.exceptions.ConnectionError) and not isinstance(e, requests.exceptions.ReadTimeout):
            return True
        if isinstance(e, ConnectionError | ssl.SSLError):  # refused, reset, aborted, broken pipe; TLS
            return True
        if isinstance(e, OSError) and not isinstance(e, TimeoutError) and e.errno is not None:
            return True  # gaierror, ENETUNREACH, EHOSTUNREACH
        if type(e).__name__ in ("ServerNotFoundError", "ProxyError", "GeneralProxyError", "ProxyConnectionError",
                                "NameResolutionError", "NewConnectionError"):
            return True  # httplib2 (DNS, socks proxies), urllib3
    return False


def is_quota(exc: BaseException) -> bool:
    """429, or a 403 whose reason or message says quota/rate limit."""
    status = status_of(exc)
    if status == 429:
        return True
    if status != 403:
        return False
    d = error_details(exc)
    return is_quota_text(f"{d['message']} {d['reason']} {' '.join(_reasons(exc))}")


def classify(exc: BaseException) -> Kind:
    """What kind of failure ``exc`` is, for the retry decision and the error type."""
    status = status_of(exc)
    if status is not None:
        if status in RETRIED_STATUS:
            named = [r for r in _reasons(exc) if r not in ("", "None")]
            if named and not set(named) & TRANSIENT_REASONS and any(r[:1].islower() for r in named):
                return "other"  # a BigQuery job failure reported as 500 (bytesBilledLimitExceeded…)
            return "transient"
        if is_quota(exc):
            return "quota"
        return "other"
    if _is_read_timeout(exc):
        return "timeout"
    if is_network_failure(exc):
        return "network"
    return "other"


def is_retryable(exc: BaseException) -> bool:
    """True for a transient server error (500/502/503/504) only: never a 4xx, a quota or a timeout."""
    return classify(exc) == "transient"
