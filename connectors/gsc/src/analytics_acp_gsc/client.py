"""The Search Console client: google-api-python-client with the static ``searchconsole`` v1 discovery document.

- Credentials are built in memory by the shared Google package (never google.auth.default()).
- One ``Resource`` per endpoint is built once per process with a plain ``httplib2.Http`` (so it holds
  no credentials); every request executes with an ``AuthorizedHttp`` of the call's credentials,
  one per thread (httplib2 is not thread-safe), whose socket timeout is the call's read timeout.
  httplib2 reads HTTPS_PROXY/HTTP_PROXY/NO_PROXY from the environment (token requests included).
- Retries, the deadline and the typing of network failures: analytics_acp_google.retry (one policy
  for the three Google connectors). googleapiclient's ``num_retries`` stays 0: it also retries 429
  and rate-limit 403s with 2**n sleeps that no deadline bounds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from analytics_acp import AcpError, CallContext, InvalidArguments, ResourceNotFound
from analytics_acp.state import identity_key

from .constants import SCOPES
from .resource_ids import describe_alternatives
from .state import CREDENTIALS, SERVICES, SITES

SERVICE, VERSION = "searchconsole", "v1"
DEFAULT_HOST = "searchconsole.googleapis.com"
GRANT = "in Search Console > Settings > Users and permissions, add it as a user of the property"


def _service(ctx: CallContext, endpoint: str | None) -> Any:
    """The discovery-built Resource for an endpoint (None = Google's), built once per server (state.SERVICES)."""

    def build_service() -> Any:
        import httplib2
        from googleapiclient.discovery import build

        options = {"api_endpoint": endpoint.rstrip("/") + "/"} if endpoint else None
        return build(SERVICE, VERSION, http=httplib2.Http(), static_discovery=True,
                     cache_discovery=False, client_options=options, model=_orjson_model())

    return ctx.state(SERVICES).get_or_make(endpoint, build_service)


def _orjson_model() -> Any:
    """googleapiclient's JSON model, parsing responses with orjson (a 25,000-row page is ~4 MB of JSON)."""
    import orjson
    from googleapiclient.model import JsonModel

    class OrjsonModel(JsonModel):
        def deserialize(self, content: Any) -> Any:
            try:
                body = orjson.loads(content)
            except orjson.JSONDecodeError:
                return super().deserialize(content)
            if self._data_wrapper and isinstance(body, dict) and "data" in body:
                body = body["data"]
            return body

    return OrjsonModel(data_wrapper=False)


def _google_credentials(ctx: CallContext) -> Any:
    """google-auth credentials for the call's credentials, kept in memory by a hash of their content (state.CREDENTIALS)."""
    from analytics_acp_google.credentials import build_credentials

    credentials = ctx.require_credentials()
    return ctx.state(CREDENTIALS).get_or_make(identity_key(credentials), lambda: build_credentials(credentials, SCOPES))


class Client:
    """Search Console calls for one tool call (or one block fetch), with the call's credentials."""

    def __init__(self, ctx: CallContext):
        from analytics_acp_google.endpoint import api_endpoint

        self.ctx = ctx
        self.credentials = _google_credentials(ctx)
        self.endpoint = api_endpoint(ctx.config)
        self.service = _service(ctx, self.endpoint)
        self._local = threading.local()
        from analytics_acp_google import retry
        from analytics_acp_google.endpoint import endpoint_host

        self.budget = retry.budget(ctx)
        self.host = endpoint_host(ctx.config) or DEFAULT_HOST

    # --- transport -------------------------------------------------------------------------
    def _http(self) -> Any:
        http = getattr(self._local, "http", None)
        if http is None:
            import google_auth_httplib2
            import httplib2

            # httplib2 has one socket timeout for connect and read; the proxy comes from the environment.
            http = google_auth_httplib2.AuthorizedHttp(self.credentials, http=httplib2.Http(timeout=self.budget.timeouts()[1]))
            self._local.http = http
        return http

    def execute(self, make_request: Callable[[Any], Any], *, site: str | None = None) -> Any:
        """Run ``make_request(service).execute()`` under the call's budget; failures become typed ACP errors."""
        from analytics_acp_google import retry

        try:
            return retry.call(lambda _t: make_request(self.service).execute(http=self._http(), num_retries=0),
                              budget_=self.budget, host=self.host)
        except Exception as exc:  # noqa: BLE001 - every failure is mapped below
            raise self.map_error(exc, site) from None

    def ensure_token(self) -> None:
        """Fetch an access token now, once, before requests run concurrently in threads."""
        if getattr(self.credentials, "valid", False):
            return
        from analytics_acp_google import retry

        def refresh(_t: Any) -> None:
            import google_auth_httplib2

            self.credentials.refresh(google_auth_httplib2.Request(self._http().http))

        try:
            retry.call(refresh, budget_=self.budget, host=self.host)
        except Exception as exc:  # noqa: BLE001
            raise self.map_error(exc, None) from None

    # --- errors ----------------------------------------------------------------------------
    def map_error(self, exc: BaseException, site: str | None) -> AcpError:
        """A typed ACP error: 403/404 on a property names the properties the credentials can see."""
        from analytics_acp_google.credentials import account_of
        from analytics_acp_google.errors import error_details, is_quota_text, scrub, to_acp_error

        if isinstance(exc, AcpError):
            return exc
        details = error_details(exc)
        status, message, reason = details["status"], details["message"], details["reason"]
        quota = is_quota_text(f"{message} {reason}")
        if status == 400:
            return InvalidArguments(f"Search Console rejected the request (HTTP 400): {scrub(message, 300)} "
                                    "Fix the arguments and call again.")
        if status in (403, 404) and site and not quota:
            return self._not_found(site, status)
        return to_acp_error(exc, resource=site, account=account_of(self.ctx.credentials), grant=GRANT, host=self.host)

    def _not_found(self, site: str, status: int) -> ResourceNotFound:
        try:
            sites = [s["siteUrl"] for s in self.sites()]
        except AcpError:
            sites = None
        if sites is None:
            seen = ""
        elif sites:
            shown = ", ".join(sites[:20]) + (f" and {len(sites) - 20} more" if len(sites) > 20 else "")
            seen = f" These credentials can see: {shown}."
        else:
            seen = " These credentials cannot see any Search Console property."
        from analytics_acp_google.credentials import account_of

        alternatives = describe_alternatives(site, sites or [])
        account = account_of(self.ctx.credentials)
        who = f"the account {account}" if account else "these credentials"
        return ResourceNotFound(
            f"The Search Console property {site} is not accessible to {who} (HTTP {status}).{alternatives}{seen} "
            "Check the id (URL prefix like https://www.example.com/ or sc-domain:example.com), or grant "
            f"{account or 'the account'} access: {GRANT}."
        )

    # --- API methods -------------------------------------------------------------------------
    def sites(self) -> list[dict[str, Any]]:
        """sites.list (cached 600 s per credential identity and endpoint): [{siteUrl, permissionLevel}]."""
        cache = self.ctx.state(SITES)
        key = (self.ctx.credential_identity, self.endpoint)
        hit = cache.get(key)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        response = self.execute(lambda s: s.sites().list())
        entries = [e for e in response.get("siteEntry", []) or [] if e.get("siteUrl")]
        cache.put(key, entries)
        return entries

    def query(self, site: str, body: dict[str, Any]) -> dict[str, Any]:
        """searchanalytics.query: one page of rows and the response metadata."""
        return self.execute(lambda s: s.searchanalytics().query(siteUrl=site, body=body), site=site)

    def sitemaps(self, site: str, index: str | None = None) -> list[dict[str, Any]]:
        """sitemaps.list for the property (or the children of a sitemap index)."""
        response = self.execute(lambda s: s.sitemaps().list(siteUrl=site, sitemapIndex=index), site=site)
        return list(response.get("sitemap", []) or [])

    def inspect(self, site: str, url: str, language: str | None = None) -> dict[str, Any]:
        """urlInspection.index.inspect for one URL of the property."""
        body: dict[str, Any] = {"inspectionUrl": url, "siteUrl": site}
        if language:
            body["languageCode"] = language
        response = self.execute(lambda s: s.urlInspection().index().inspect(body=body), site=site)
        return dict(response.get("inspectionResult") or {})

