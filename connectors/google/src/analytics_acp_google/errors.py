"""Google failures -> typed ACP errors (spec 12.1), for GAPIC REST, BigQuery and googleapiclient alike.

Messages are English, say what to do next and never contain a secret, a token or a raw body
that could echo one.
"""

from __future__ import annotations

import re
from typing import Any

from analytics_acp import AcpError, CredentialsInvalid, ResourceNotFound, UpstreamError

from .failures import chain, classify, host_of, http_status_and_message
from .failures import error_details as error_details  # re-exported: connectors refine the mapping with it
from .failures import is_quota_text as is_quota_text  # re-exported: connectors read quota words with it
from .timeouts import deadline_s, request_timeout_s

# Anything that looks like a bearer token, a JWT or a PEM block is cut from upstream messages.
_SECRETISH = re.compile(r"(ya29\.[\w\-.]+|eyJ[\w\-]+\.[\w\-]+\.[\w\-]*|-----BEGIN[^-]+-----.*?-----END[^-]+-----|"
                        r"(?i:bearer)\s+\S+|1//[\w\-]+)", re.S)


_QUERY_STRING = re.compile(r"(https?://[^\s?#]+)[?#]\S*")


def scrub(text: str, limit: int = 400) -> str:
    """An upstream message made safe to show: secret-looking strings and URL query strings removed,
    length bounded at a word boundary (never cut mid-word)."""
    text = _SECRETISH.sub("[redacted]", " ".join(str(text).split()))
    text = _QUERY_STRING.sub(r"\1", text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    head = cut.rsplit(" ", 1)[0] if " " in cut else cut
    return head.rstrip(" ,;:") + "…"


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


def _auth_failure(exc: BaseException) -> AcpError:
    """A google-auth failure: unreachable token endpoint (upstream) vs Google refusing the credentials."""
    kind = classify(exc)
    if kind in ("network", "timeout"):
        host = host_of(exc) or "the token endpoint"
        return timeout_error(host) if kind == "timeout" else unreachable_error(exc, host)
    text = str(exc)
    refused = next((w for w in _REJECTED if w in text), None)
    status = _refresh_status(exc)
    # A RefreshError Google marks retryable (its token endpoint answered 5xx) is not the credentials' fault.
    if refused or status in (400, 401, 403) or not getattr(exc, "retryable", False):
        detail = refused or (f"HTTP {status}" if status else type(exc).__name__)
        return CredentialsInvalid(f"Google rejected the credentials ({detail}): the key was revoked or deleted, the refresh "
                                  "token expired or the OAuth client does not match. Sign in again with "
                                  "`analytics-acp login google`, or use a new service account key.")
    return UpstreamError(f"Google's token endpoint failed ({scrub(text, 160)}). Try again later.")


_REJECTED = ("invalid_grant", "invalid_client", "unauthorized_client", "invalid_scope", "access_denied")


def _refresh_status(exc: BaseException) -> int | None:
    # RefreshError args: (message, response body); the message often names the HTTP status
    for arg in getattr(exc, "args", ()):
        if isinstance(arg, dict) and isinstance(arg.get("error"), dict) and isinstance(arg["error"].get("code"), int):
            return int(arg["error"]["code"])
    found = re.search(r"\b(40[013])\b", str(exc))
    return int(found.group(1)) if found else None


def to_acp_error(exc: BaseException, *, resource: str | None = None, visible: str | None = None,
                 account: str | None = None, grant: str | None = None, host: str | None = None) -> AcpError:
    """The typed ACP error for a Google failure; an AcpError passes through unchanged.

    ``account`` (the service account's client_email / the OAuth email) and ``grant`` (where to give it
    access in the product) make a 403 actionable; ``host`` names what could not be reached.
    """
    if isinstance(exc, AcpError):
        return exc
    if (type(exc).__module__ or "").startswith("google.auth"):
        return _auth_failure(exc)
    if type(exc).__name__ == "RetryError" and (type(exc).__module__ or "").startswith("google.api_core"):
        cause = getattr(exc, "cause", None)
        if isinstance(cause, BaseException):
            return to_acp_error(cause, resource=resource, visible=visible, account=account, grant=grant, host=host)
        return UpstreamError(f"Google kept failing for {deadline_s():.0f} s. Try again later.")
    status, message, reason = http_status_and_message(exc)
    blob = f"{message} {reason}"
    if status == 401:
        return CredentialsInvalid("Google answered 401 Unauthenticated: the token expired or was revoked. "
                                  "Sign in again with `analytics-acp login google`, or use a new service account key.")
    if status == 429 or (status == 403 and is_quota_text(blob)):
        return UpstreamError(_quota_text(message, reason))
    if status in (403, 404):
        what = f"'{resource}'" if resource else "The resource"
        seen = f" These credentials can see: {visible}." if visible else ""
        if status == 404:
            return ResourceNotFound(f"{what} does not exist (HTTP 404: {scrub(message, 200)}).{seen} Check the id.")
        who = f"the account {account}" if account else "these credentials"
        where = f" Grant {account or 'the account'} access: {grant}." if grant else " Grant the account access."
        return ResourceNotFound(f"{what} is not accessible to {who} (HTTP 403: {scrub(message, 160)}).{where}{seen}")
    if status is not None and status >= 500:
        return UpstreamError(f"Google answered HTTP {status} ({scrub(message, 200)}) and kept failing within the "
                             f"{deadline_s():.0f} s budget. Try again later.")
    if status is not None:
        return UpstreamError(f"Google answered HTTP {status}: {scrub(message, 300)}")
    kind = classify(exc)
    if kind == "timeout":
        return timeout_error(host or host_of(exc) or "Google")
    if kind == "network":
        return unreachable_error(exc, host or host_of(exc) or "Google's API")
    return UpstreamError(f"Google call failed ({type(exc).__name__}: {scrub(str(exc), 200)}).")


def _cause(exc: BaseException) -> str:
    """Why a connection could not be made, in a few words ("proxy" when a proxy failed it)."""
    import socket
    import ssl

    links = chain(exc)
    names = {type(e).__name__ for e in links}
    text = " ".join(str(e) for e in links).lower()
    if names & {"ProxyError", "GeneralProxyError", "ProxyConnectionError"} or "proxy" in text or "tunnel" in text:
        return "proxy"
    if any(isinstance(e, socket.gaierror) for e in links) or names & {"NameResolutionError", "ServerNotFoundError"} \
            or "name or service not known" in text or "failed to resolve" in text or "unable to find the server" in text:
        return "the name could not be resolved"
    if any(isinstance(e, ssl.SSLError) for e in links) or "certificate" in text:
        return "the TLS handshake failed"
    if "ConnectTimeout" in names or "timed out" in text:
        return "the connection timed out"
    if any(isinstance(e, ConnectionRefusedError) for e in links) or "refused" in text:
        return "the connection was refused"
    if "unreachable" in text or "no route" in text:
        return "there is no route to the host"
    if any(isinstance(e, ConnectionResetError) for e in links) or "reset" in text:
        return "the connection was reset"
    return "the connection failed"


def proxy_for(host: str) -> str | None:
    """host:port of the proxy the environment routes ``host`` through (HTTPS_PROXY/HTTP_PROXY unless NO_PROXY)."""
    import urllib.request
    from urllib.parse import urlsplit

    proxies = urllib.request.getproxies()
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]  # NO_PROXY rules, not in typeshed
    if not proxies or bypass(host, proxies):
        return None
    raw = proxies.get("https") or proxies.get("http") or proxies.get("all")
    if not raw:
        return None
    parts = urlsplit(raw if "://" in raw else f"http://{raw}")  # never the proxy's user:password
    return f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname


def unreachable_error(exc: BaseException, host: str) -> UpstreamError:
    """ACP_UPSTREAM_ERROR for a connection that could not be made, naming the host (and proxy) and why."""
    cause = _cause(exc)
    proxy = proxy_for(host) if host else None
    if cause == "proxy" or (proxy and cause in ("the connection was refused", "the connection timed out")):
        via = proxy or "the configured proxy"
        return UpstreamError(f"Could not reach {host} through the proxy {via}: the proxy refused or failed the "
                             "connection. Check HTTPS_PROXY / NO_PROXY and that the proxy is running.")
    return UpstreamError(f"Could not reach {host}: {cause}. Check the network, the proxy (HTTPS_PROXY) "
                         "or the source's api_endpoint.")


def timeout_error(host: str, budget: Any = None) -> UpstreamError:
    """ACP_UPSTREAM_ERROR for a server that accepted the connection and did not answer in time."""
    seconds = getattr(budget, "read_s", None) or request_timeout_s()
    return UpstreamError(f"{host} did not answer within {seconds:.0f} s. Try again later or narrow the request; "
                         "on a slow network raise config.timeout_s.")


