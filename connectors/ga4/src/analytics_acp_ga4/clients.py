"""Google Analytics clients (REST transport), built on first use and reused per credential and endpoint.

Credentials come from ``ctx`` (``_meta.acp`` / ``acp/configure``) through analytics_acp_google; the
clients are kept in the connector's state (state.CLIENTS, an LRU keyed by a hash of (credentials, endpoint)),
so several accounts in one process never share a client and a client is not rebuilt for every page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from analytics_acp import AcpError, CallContext
from analytics_acp_google import retry
from analytics_acp_google.credentials import account_of, build_credentials
from analytics_acp_google.endpoint import api_endpoint, endpoint_host
from analytics_acp_google.errors import to_acp_error

from .constants import SCOPES
from .state import CLIENTS, credentials_key

T = TypeVar("T")
GRANT = "in GA4 Admin > Property access management, add it as Viewer"
_HOSTS = {"data": "analyticsdata.googleapis.com", "data_alpha": "analyticsdata.googleapis.com",
          "admin": "analyticsadmin.googleapis.com", "admin_alpha": "analyticsadmin.googleapis.com"}


def _factory(kind: str) -> Callable[..., Any]:
    if kind == "data":
        from google.analytics.data_v1beta import BetaAnalyticsDataClient

        return BetaAnalyticsDataClient
    if kind == "data_alpha":
        from google.analytics.data_v1alpha import AlphaAnalyticsDataClient

        return AlphaAnalyticsDataClient
    if kind == "admin":
        from google.analytics.admin_v1beta import AnalyticsAdminServiceClient

        return AnalyticsAdminServiceClient
    if kind == "admin_alpha":
        from google.analytics.admin_v1alpha import AnalyticsAdminServiceClient as AlphaAdmin

        return AlphaAdmin
    raise ValueError(kind)


def client(ctx: CallContext, kind: str = "data") -> Any:
    """The ``kind`` client (data, data_alpha, admin, admin_alpha) for this call's credentials and api_endpoint."""
    credentials = ctx.require_credentials()

    def make() -> Any:
        endpoint = api_endpoint(ctx.config)
        options = {"api_endpoint": endpoint} if endpoint else None
        return _factory(kind)(credentials=build_credentials(credentials, SCOPES), transport="rest", client_options=options)

    return ctx.state(CLIENTS).get_or_make((credentials_key(ctx), kind), make)


class BadRequest(Exception):
    """A 400 the caller wants to diagnose itself (unknown names, incompatible fields)."""

    def __init__(self, exc: BaseException):
        super().__init__(str(exc))
        self.exc = exc


def call(fn: Callable[..., T], request: Any, *, resource: str | None = None, ctx: CallContext | None = None, raw_400: bool = False) -> T:
    """Call a client method under the call's budget and the shared retry policy; failures become typed ACP errors.

    Retries, the deadline and (connect, read) timeouts come from analytics_acp_google.retry (the GAPIC
    retry is off). A 403/404 on a property names the account and the properties it can see (12.1).
    With ``raw_400`` a 400 is raised as ``BadRequest`` for the caller to explain.
    """
    host = _host(fn, ctx)
    try:
        return retry.call(lambda t: fn(request=request, retry=None, timeout=retry.GapicTimeout(t)), ctx=ctx, host=host)
    except AcpError:
        raise
    except Exception as exc:
        if raw_400 and _status(exc) == 400:
            raise BadRequest(exc) from None
        visible = _visible_properties(ctx) if ctx is not None and resource and _status(exc) in (403, 404) else None
        account = account_of(ctx.credentials) if ctx is not None else None
        raise to_acp_error(exc, resource=f"properties/{resource}" if resource else None, visible=visible,
                           account=account, grant=GRANT, host=host) from None


def _host(fn: Any, ctx: CallContext | None) -> str:
    """The host a client method talks to: the api_endpoint's, else Google's data or admin API."""
    configured = endpoint_host(ctx.config) if ctx is not None else None
    if configured:
        return configured
    owner = type(getattr(fn, "__self__", None)).__module__ or ""
    return _HOSTS["admin" if "admin" in owner else "data"]


def _status(exc: BaseException) -> int | None:
    code = getattr(exc, "code", None)
    return code if isinstance(code, int) else None


def account_properties(ctx: CallContext) -> list[dict[str, Any]]:
    """Every property of every account summary: {id, name, account, property_type, parent}.

    Here, beside ``call``, because a 403/404 names what the credentials can see (resources lists it too).
    """
    from google.analytics.admin_v1beta import ListAccountSummariesRequest

    admin = client(ctx, "admin")
    pager = call(admin.list_account_summaries, ListAccountSummariesRequest(page_size=200), ctx=ctx)
    out = []
    for summary in pager:  # the pager follows nextPageToken with the same retry policy
        for prop in summary.property_summaries:
            out.append({"id": prop.property.split("/")[-1], "name": prop.display_name or prop.property,
                        "account": summary.display_name or summary.account,
                        "property_type": prop.property_type.name if prop.property_type else None,
                        "parent": prop.parent})
    return out


def _visible_properties(ctx: CallContext) -> str:
    """'Store (987654321, account Client X), …' for the error message; never raises."""
    try:
        props = account_properties(ctx)
    except Exception:
        return "(the property list could not be read)"
    if not props:
        return "no GA4 property (grant the account Viewer access in GA4 Admin > Property access management)"
    shown = ", ".join(f"{p['name']} ({p['id']}, account {p['account']})" for p in props[:10])
    return shown + (f" and {len(props) - 10} more" if len(props) > 10 else "")


def message_to_dict(message: Any) -> dict[str, Any]:
    """A proto-plus message as a camelCase JSON dict (the API's own field names)."""
    return type(message).to_dict(message, use_integers_for_enums=False, preserving_proto_field_name=False)
