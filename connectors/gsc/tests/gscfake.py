"""A fake Search Console on the shared loopback FakeServer, speaking the real REST shapes.

Routes (paths as googleapiclient builds them from the static searchconsole v1 discovery document):
  GET  /webmasters/v3/sites                                   sites.list
  POST /webmasters/v3/sites/{siteUrl}/searchAnalytics/query  searchanalytics.query
  GET  /webmasters/v3/sites/{siteUrl}/sitemaps                sitemaps.list (?sitemapIndex=)
  POST /v1/urlInspection/index:inspect                        urlInspection.index.inspect

Data: per property a deterministic universe of facts (date, query, page, country, device, hour,
searchAppearance) with clicks/impressions/position. A query aggregates the facts of its window
on the requested dimensions (clicks and impressions summed, position weighted by impressions),
sorts by clicks descending, keeps at most ``row_ceiling`` rows (Google exposes the top rows only)
and serves them in pages by startRow/rowLimit (rowLimit 1..25,000). dataState final stops at
``final_through``; all/hourly_all go on to ``last_date`` and name firstIncompleteDate/Hour in
``metadata`` when date/hour is a dimension. Requests are authorised by the bearer token's owner:
an unknown token gets 401, a property the owner cannot see gets 403 with Google's message.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from googlefakes import keys
from googlefakes.oauth import TokenEndpoint
from googlefakes.server import FakeServer, Request, google_error

SITES = r"/webmasters/v3/sites"
QUERY = r"/webmasters/v3/sites/([^/]+)/searchAnalytics/query"
SITEMAPS = r"/webmasters/v3/sites/([^/]+)/sitemaps"
INSPECT = r"/v1/urlInspection/index:inspect"
APPEARANCES = ["AMP_BLUE_LINK", "RICHCARD", "VIDEO", "FAQ_RICH_RESULT"]
DEVICES = ["MOBILE", "DESKTOP", "TABLET"]
COUNTRIES = ["esp", "usa", "mex", "arg", "fra"]

# The test world: a fixed clock (05:30 UTC on the 25th is still the 24th in Pacific Time) and its actors.
NOW = dt.datetime(2026, 9, 25, 5, 30, tzinfo=dt.UTC)
SA_EMAIL = "acp-test@fake-project.iam.gserviceaccount.com"
USER = "person@example.com"
REFRESH = "1//fake-refresh-token"
DOMAIN = "sc-domain:example.com"
PREFIX = "https://www.example.com/"
SHOP = "https://shop.example.org/"


def _h(*parts: Any) -> int:
    return int.from_bytes(hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).digest(), "big")


@dataclass
class Site:
    """One property's data: ``queries`` distinct queries per day between first_date and last_date."""

    url: str
    queries: int = 40
    pages: int = 12
    first_date: dt.date = dt.date(2026, 8, 1)
    final_through: dt.date = dt.date(2026, 9, 22)
    last_date: dt.date = dt.date(2026, 9, 24)
    host: str = "example.com"
    sitemaps: list[dict[str, Any]] = field(default_factory=list)
    children: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def facts(self, start: dt.date, end: dt.date) -> list[tuple[Any, ...]]:
        """(date, query, page, country, device, hour, appearance, clicks, impressions, position) per query and day."""
        out = []
        day = max(start, self.first_date)
        while day <= min(end, self.last_date):
            d = day.isoformat()
            for i in range(self.queries):
                h = _h(self.url, d, i)
                impressions = 1 + h % 97 + (self.queries - i) // 3
                clicks = (h >> 8) % (impressions // 4 + 1)
                position = 1 + ((h >> 16) % 400) / 10 + i / 5
                out.append((d, f"query {i}", f"https://{self.host}/{'blog' if i % 2 == 0 else 'shop'}/p{i % self.pages}", COUNTRIES[(h >> 24) % 5],
                            DEVICES[(h >> 28) % 3], (h >> 32) % 24, APPEARANCES[(h >> 36) % 4], clicks, impressions, position))
            day += dt.timedelta(days=1)
        return out


_COL = {"date": 0, "query": 1, "page": 2, "country": 3, "device": 4, "hour": 5, "searchAppearance": 6}


def _matches(value: str, operator: str, expression: str) -> bool:
    import re

    op = operator.lower()
    if op == "equals":
        return value == expression
    if op == "notequals":
        return value != expression
    if op == "contains":
        return expression in value
    if op == "notcontains":
        return expression not in value
    if op == "includingregex":
        return re.search(expression, value) is not None
    if op == "excludingregex":
        return re.search(expression, value) is None
    raise ValueError(operator)


class FakeSearchConsole:
    """Installs the Search Console routes on a FakeServer; ``access`` maps token owners to (siteUrl, permission)."""

    def __init__(self, server: FakeServer, sites: list[Site], access: dict[str, list[tuple[str, str]]],
                 row_ceiling: int = 50_000):
        self.server = server
        self.sites = {s.url: s for s in sites}
        self.access = access
        self.row_ceiling = row_ceiling
        self.inspected: dict[str, dict[str, Any]] = {}
        self.in_flight = 0
        self.max_in_flight = 0
        self.queries_in_flight = 0
        self.max_queries_in_flight = 0
        self.barrier: threading.Barrier | None = None  # set to prove concurrent inspections
        self._lock = threading.Lock()
        self._cache: dict[str, list[dict[str, Any]]] = {}
        server.route("GET", SITES, self.sites_list)
        server.route("POST", QUERY, self.query)
        server.route("GET", SITEMAPS, self.sitemaps_list)
        server.route("POST", INSPECT, self.inspect)

    # --- auth
    def _who(self, req: Request) -> tuple[str | None, tuple[int, Any] | None]:
        if req.identity in (None, "unknown-token", "invalid-jwt") or req.identity not in self.access:
            return None, (401, google_error(401, "Request had invalid authentication credentials. Expected OAuth 2 access token."))
        return req.identity, None

    def _site(self, req: Request, site_url: str) -> tuple[Site | None, tuple[int, Any] | None]:
        who, err = self._who(req)
        if err:
            return None, err
        visible = {u for u, _ in self.access[who or ""]}
        if site_url not in visible or site_url not in self.sites:
            return None, (403, {"error": {"code": 403, "message": f"User does not have sufficient permission for site "
                                          f"'{site_url}'. See also: https://support.google.com/webmasters/answer/2451999.",
                                          "errors": [{"message": "forbidden", "domain": "global", "reason": "forbidden"}]}})
        return self.sites[site_url], None

    # --- routes
    def sites_list(self, req: Request) -> tuple[int, Any]:
        who, err = self._who(req)
        if err:
            return err
        return 200, {"siteEntry": [{"siteUrl": u, "permissionLevel": p} for u, p in self.access[who or ""]]}

    def query(self, req: Request) -> tuple[int, Any]:
        with self._lock:
            self.queries_in_flight += 1
            self.max_queries_in_flight = max(self.max_queries_in_flight, self.queries_in_flight)
        try:
            return self._query(req)
        finally:
            with self._lock:
                self.queries_in_flight -= 1

    def _query(self, req: Request) -> tuple[int, Any]:
        assert req.match is not None
        site, err = self._site(req, unquote(req.match.group(1)))
        if err:
            return err
        assert site is not None
        body = req.body if isinstance(req.body, dict) else {}
        dims = [str(d) for d in body.get("dimensions") or []]
        limit, start_row = int(body.get("rowLimit", 1000)), int(body.get("startRow", 0))
        if not 1 <= limit <= 25_000:
            return 400, google_error(400, "rowLimit must be a number from 1 to 25,000 (inclusive).")
        if "searchAppearance" in dims and len(dims) > 1:
            return 400, google_error(400, "searchAppearance cannot be grouped with other dimensions.")
        try:
            start, end = dt.date.fromisoformat(body["startDate"]), dt.date.fromisoformat(body["endDate"])
        except (KeyError, ValueError):
            return 400, google_error(400, "startDate and endDate are required (YYYY-MM-DD).")
        state = str(body.get("dataState", "final")).lower()
        rows = self._rows(site, body, dims, start, end, state)
        response: dict[str, Any] = {"rows": rows[start_row:start_row + limit], "responseAggregationType": "byProperty"}
        if not response["rows"]:
            del response["rows"]
        incomplete = site.final_through + dt.timedelta(days=1)
        if state == "all" and "date" in dims and end >= incomplete:
            response["metadata"] = {"firstIncompleteDate": incomplete.isoformat()}
        if state == "hourly_all" and "hour" in dims and end >= incomplete:
            response["metadata"] = {"firstIncompleteHour": f"{incomplete.isoformat()}T00:00:00-07:00"}
        return 200, response

    def _rows(self, site: Site, body: dict[str, Any], dims: list[str], start: dt.date, end: dt.date, state: str) -> list[dict[str, Any]]:
        key = repr((site.url, sorted((k, repr(v)) for k, v in body.items() if k not in ("rowLimit", "startRow"))))
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            return hit
        if str(body.get("type", body.get("searchType", "web"))).lower() != "web":
            return []
        last = site.final_through if state == "final" else site.last_date
        filters = [f for g in body.get("dimensionFilterGroups") or [] for f in g.get("filters") or []]
        groups: dict[tuple[Any, ...], list[float]] = {}
        for fact in site.facts(start, min(end, last)):
            if any(not _matches(str(fact[_COL[f["dimension"]]]), f.get("operator", "equals"), f["expression"]) for f in filters):
                continue
            keys = tuple(self._key(fact, d) for d in dims)
            acc = groups.setdefault(keys, [0.0, 0.0, 0.0])
            acc[0] += fact[7]
            acc[1] += fact[8]
            acc[2] += fact[9] * fact[8]
        ordered = sorted(groups.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))[: self.row_ceiling]
        rows = []
        for keys, (clicks, impressions, pos) in ordered:
            row: dict[str, Any] = {"clicks": clicks, "impressions": impressions, "ctr": clicks / impressions,
                                   "position": pos / impressions}
            if dims:
                row = {"keys": list(keys), **row}
            rows.append(row)
        with self._lock:
            self._cache[key] = rows
        return rows

    @staticmethod
    def _key(fact: tuple[Any, ...], dim: str) -> str:
        if dim == "hour":
            return f"{fact[0]}T{fact[5]:02d}:00:00-07:00"
        return str(fact[_COL[dim]])

    def sitemaps_list(self, req: Request) -> tuple[int, Any]:
        assert req.match is not None
        site, err = self._site(req, unquote(req.match.group(1)))
        if err:
            return err
        assert site is not None
        index = (req.query.get("sitemapIndex") or [None])[0]
        entries = site.children.get(index, []) if index else site.sitemaps
        return 200, {"sitemap": entries} if entries else {}

    def inspect(self, req: Request) -> tuple[int, Any]:
        body = req.body if isinstance(req.body, dict) else {}
        site, err = self._site(req, str(body.get("siteUrl", "")))
        if err:
            return err
        assert site is not None
        url = str(body.get("inspectionUrl", ""))
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.barrier is not None:
                try:  # only passes when another inspection is in flight at the same time
                    self.barrier.wait(timeout=30)
                except threading.BrokenBarrierError:
                    pass
            if site.host not in url:
                return 400, google_error(400, f"URL '{url}' does not belong to the property '{site.url}'.")
            return 200, {"inspectionResult": self.result_for(site, url)}
        finally:
            with self._lock:
                self.in_flight -= 1

    def result_for(self, site: Site, url: str) -> dict[str, Any]:
        """The inspection result of a URL (deterministic)."""
        if url in self.inspected:
            return self.inspected[url]
        h = _h(url)
        indexed = h % 3 != 0
        return {
            "inspectionResultLink": f"https://search.google.com/search-console/inspect?resource_id={site.url}&id={h % 10000}",
            "indexStatusResult": {
                "verdict": "PASS" if indexed else "NEUTRAL",
                "coverageState": "Submitted and indexed" if indexed else "Crawled - currently not indexed",
                "robotsTxtState": "ALLOWED", "indexingState": "INDEXING_ALLOWED", "pageFetchState": "SUCCESSFUL",
                "lastCrawlTime": "2026-09-20T08:15:30Z", "crawledAs": "MOBILE",
                "googleCanonical": url, "userCanonical": url,
                "sitemap": [f"https://{site.host}/sitemap.xml"], "referringUrls": [f"https://{site.host}/"] * (h % 4),
            },
            "mobileUsabilityResult": {"verdict": "PASS"},
            "richResultsResult": {"verdict": "PASS", "detectedItems": [{"richResultType": "Breadcrumbs", "items": []}]},
        }

def rows_of(extraction: Any) -> list[dict[str, Any]]:
    """An Extraction's rows as dicts."""
    return [dict(zip(extraction.columns, row, strict=True)) for row in extraction.rows]


class Env:
    """The running fakes and ready credentials."""

    def __init__(self, server: FakeServer, oauth: TokenEndpoint, gsc: FakeSearchConsole):
        self.server, self.oauth, self.gsc = server, oauth, gsc
        self.final_through: dt.date | None = None

    @property
    def config(self) -> dict[str, Any]:
        return {"api_endpoint": self.server.url}

    def service_account(self) -> dict[str, Any]:
        return keys.service_account_credentials(self.oauth.token_uri, SA_EMAIL)

    def oauth_user(self) -> dict[str, Any]:
        return keys.oauth(access_token=None, refresh_token=REFRESH, client_id="fake-client.apps.googleusercontent.com",
                          client_secret="fake-client-secret", email=USER, token_uri=self.oauth.token_uri)

    def queries(self, site: str | None = None) -> list[Any]:
        """Recorded searchAnalytics.query requests (optionally for one property)."""
        from urllib.parse import quote

        pattern = "/searchAnalytics/query" if site is None else f"/sites/{quote(site, safe='')}/searchAnalytics/query"
        return self.server.requests_to(pattern, "POST")


def make_sites(final_through: dt.date = dt.date(2026, 9, 22)) -> list[Site]:
    """sc-domain:example.com (40 queries a day), https://www.example.com/ and https://shop.example.org/.

    Final data through ``final_through``, fresh data two more days, 60 days of data before.
    """
    span = {"first_date": final_through - dt.timedelta(days=60), "final_through": final_through,
            "last_date": final_through + dt.timedelta(days=2)}
    sitemap = {"path": "https://example.com/sitemap_index.xml", "type": "sitemap", "isSitemapsIndex": True, "isPending": False,
               "lastSubmitted": "2026-09-01T10:00:00.000Z", "lastDownloaded": "2026-09-23T04:12:00.000Z",
               "warnings": "0", "errors": "0", "contents": [{"type": "web", "submitted": "120", "indexed": "0"}]}
    child = {"path": "https://example.com/sitemap-posts.xml", "type": "sitemap", "isSitemapsIndex": False, "isPending": False,
             "lastSubmitted": "2026-09-01T10:00:00.000Z", "lastDownloaded": "2026-09-23T04:13:00.000Z", "warnings": "2",
             "errors": "1", "contents": [{"type": "web", "submitted": "100"}, {"type": "image", "submitted": "40"}]}
    return [
        Site(DOMAIN, host="example.com", sitemaps=[sitemap], children={sitemap["path"]: [child]}, **span),
        Site(PREFIX, host="www.example.com", queries=10, **span),
        Site(SHOP, host="shop.example.org", queries=5, **span),
    ]


@contextlib.contextmanager
def running_fakes(final_through: dt.date) -> Iterator[Env]:
    """Token endpoint + Search Console on 127.0.0.1 (service account and OAuth user registered)."""
    with FakeServer(hang_s=10) as server:
        oauth = TokenEndpoint(server)
        oauth.register_service_account(SA_EMAIL, keys.public_key_pem(0))
        oauth.register_refresh_token(REFRESH, "fake-client.apps.googleusercontent.com", "fake-client-secret", USER)
        access = {
            SA_EMAIL: [(DOMAIN, "siteOwner"), (SHOP, "siteFullUser")],
            USER: [(PREFIX, "siteOwner"), (SHOP, "siteRestrictedUser")],
        }
        gsc = FakeSearchConsole(server, make_sites(final_through), access)
        yield Env(server, oauth, gsc)
