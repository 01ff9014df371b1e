"""Fixtures of the gsc tests: the shared Google fakes plus a fake Search Console on 127.0.0.1, a fixed clock.

The clock: 2026-09-25 05:30 UTC, which is still 2026-09-24 in Pacific Time (22:30 PDT). The fake's
final data ends on 2026-09-22 (so 15.2's default window is 2026-08-22 .. 2026-09-22) and fresh data
goes on to 2026-09-24.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "google" / "tests"))
sys.path.insert(0, str(HERE))

from analytics_acp.kit import make_ctx as kit_make_ctx  # noqa: E402
from googlefakes import keys  # noqa: E402
from googlefakes.oauth import TokenEndpoint  # noqa: E402
from googlefakes.server import FakeServer  # noqa: E402
from gscfake import DOMAIN, NOW, PREFIX, REFRESH, SA_EMAIL, SHOP, USER, FakeSearchConsole, Site  # noqa: E402


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


@pytest.fixture
def env(monkeypatch) -> Any:
    """The fakes with final data through 2026-09-22, a fixed clock (PT 2026-09-24) and fresh in-process caches."""
    from analytics_acp_gsc import budget, client, dates, freshness

    monkeypatch.setattr(dates, "now_utc", lambda: NOW)
    client.forget_caches()
    freshness.forget()
    budget.forget_memory()
    with running_fakes(dt.date(2026, 9, 22)) as fakes:
        yield fakes


@pytest.fixture
def served_env() -> Any:
    """The fakes for a served connector (a subprocess on the real clock): final data through 2 days ago, PT."""
    from analytics_acp_gsc import dates

    final = dates.today_pt() - dt.timedelta(days=2)
    with running_fakes(final) as fakes:
        fakes.final_through = final
        yield fakes


@pytest.fixture(autouse=True)
def short_google_deadlines(monkeypatch):
    """Seconds, not Google's minutes: retries and hangs end quickly in tests."""
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_DEADLINE_S", "1.5")
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_TIMEOUT_S", "0.5")


@pytest.fixture
def ctx_for(env, tmp_path) -> Any:
    """ctx_for(tool, credentials=None, resource_id=DOMAIN, config=None, **fields) -> CallContext on the fakes."""

    def make(tool: str = "search_analytics", credentials: dict[str, Any] | None = None, resource_id: str | None = DOMAIN,
             config: dict[str, Any] | None = None, **fields: Any) -> Any:
        creds = credentials if credentials is not None else env.service_account()
        from analytics_acp_google.credentials import credential_identity

        fields.setdefault("credential_identity", str(credential_identity(creds)))
        fields.setdefault("cache_dir", tmp_path / "cache")
        return kit_make_ctx("gsc", tool, credentials=creds, config={**env.config, **(config or {})},
                            resource_id=resource_id, tmp_dir=tmp_path / "tmp", **fields)

    return make
