"""Issue 24.3: the worked session of the bridge — Search Console × GA4 (× the GA4 BigQuery export) by page.

A real bridge process with three sources (gsc, ga4, bigquery) on the Google fakes of the connectors'
tests, all on one loopback FakeServer. The same site's pages are in every fake, spelled the way each
API spells them: Search Console full URLs with trailing slashes, fragments and percent-encoding; GA4
landing pages with query strings, decoded accents, ``index.html`` and ``(not set)``; the export's
``page_location`` with campaign parameters. The SQL the model runs is the skill's own
(skills/search-console-ga4-by-page/SKILL.md, its fenced ``sql`` blocks in order), so the skill is
proven with the functions.

The truth is the fakes' data joined here independently: every raw value is mapped to its page by
hand (the ``PAGE`` column of the tables below), never by url_key. Per page, the acp_query join must
give exactly those totals: no row lost to a key mismatch, and the mismatches the data really has
(a page only search knows, a page only GA4 knows, a case-different path, GA4's ``(not set)``, a
second host of the Domain property) reported as such.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

ROOT = Path(__file__).resolve().parents[3]
for _tests in ("connectors/google/tests", "connectors/gsc/tests", "connectors/ga4/tests", "connectors/bigquery/tests"):
    sys.path.insert(0, str(ROOT / _tests))

from fakebq import FakeBigQuery, FakeTable, QuerySpec  # noqa: E402
from ga4fake import GA4Fake, Property  # noqa: E402
from googlefakes import keys  # noqa: E402
from googlefakes.oauth import TokenEndpoint  # noqa: E402
from googlefakes.server import FakeServer  # noqa: E402
from gscfake import FakeSearchConsole, Site  # noqa: E402

SKILL = ROOT / "tools/bridge/src/analytics_acp_bridge/skills/search-console-ga4-by-page/SKILL.md"
README = ROOT / "tools/bridge/README.md"
README_IDS = ("search_search_analytics_20261101_101500", "analytics_run_report_20261101_101502")
SA_EMAIL = "acp-test@fake-project.iam.gserviceaccount.com"
DOMAIN = "sc-domain:example.com"
PROPERTY = "123456789"
BQ_PROJECT, BQ_DATASET = "mi-proyecto", "analytics_123"

# Search Console: raw page -> (PAGE, impressions a day, clicks a day, position). PAGE None: another host.
GSC_PAGES: dict[str, tuple[str | None, int, int, float]] = {
    "https://www.example.com/": ("/", 400, 20, 2.0),
    "https://www.example.com/blog/seo-guide/": ("/blog/seo-guide", 900, 18, 6.5),
    "https://www.example.com/blog/caf%C3%A9-guide/": ("/blog/café-guide", 300, 30, 4.0),
    "https://www.example.com/guides/seo%20basics": ("/guides/seo basics", 200, 12, 8.0),
    "https://www.example.com/products/shoes": ("/products/shoes", 500, 60, 3.0),
    "https://www.example.com/products/shoes#reviews": ("/products/shoes", 50, 5, 3.5),
    "https://www.example.com/faq": ("/faq", 120, 6, 9.0),
    "https://www.example.com/blog/old-post/": ("/blog/old-post", 250, 28, 5.0),  # search only: no GA4 sessions
    "https://help.example.com/faq": (None, 80, 8, 4.0),  # another host of the Domain property
}
# GA4 landingPagePlusQueryString -> (PAGE, [(channel, sessions a day, key events a day)]). PAGE None: (not set).
GA4_LANDINGS: dict[str, tuple[str | None, list[tuple[str, int, int]]]] = {
    "/": ("/", [("Organic Search", 30, 1), ("Direct", 50, 3)]),
    "/?utm_source=newsletter&utm_medium=email": ("/", [("Email", 10, 1)]),
    "/blog/seo-guide": ("/blog/seo-guide", [("Organic Search", 12, 1)]),
    "/blog/seo-guide?utm_source=newsletter": ("/blog/seo-guide", [("Email", 4, 0)]),
    "/blog/café-guide": ("/blog/café-guide", [("Organic Search", 25, 0)]),
    "/guides/seo%20basics/": ("/guides/seo basics", [("Organic Search", 10, 1)]),
    "/products/shoes/": ("/products/shoes", [("Organic Search", 45, 4), ("Paid Search", 20, 2)]),
    "/products/shoes/index.html": ("/products/shoes", [("Organic Search", 5, 0)]),
    "/faq?ref=footer": ("/faq", [("Direct", 8, 0)]),
    "/landing/webinar?utm_source=linkedin": ("/landing/webinar", [("Paid Social", 20, 5)]),  # GA4 only
    "/Blog/SEO-Guide": ("/Blog/SEO-Guide", [("Referral", 3, 0)]),  # a real mismatch: paths are case-sensitive
    "(not set)": (None, [("Direct", 6, 0)]),
}
# The export's session_start page_location -> (PAGE, utm_source, sessions over the window). PAGE None: other host.
EXPORT: dict[str, tuple[str | None, str, int]] = {
    "https://www.example.com/": ("/", "(none)", 500),
    "https://www.example.com/?gclid=Cj0KCQiA": ("/", "(none)", 310),
    "https://www.example.com/?utm_source=newsletter&utm_medium=email": ("/", "newsletter", 95),
    "https://www.example.com/blog/seo-guide": ("/blog/seo-guide", "(none)", 120),
    "https://www.example.com/blog/seo-guide/?utm_source=google&utm_medium=cpc&utm_campaign=seo_q4": ("/blog/seo-guide", "google", 70),
    "https://www.example.com/blog/seo-guide/?utm_source=newsletter&utm_medium=email": ("/blog/seo-guide", "newsletter", 40),
    "https://www.example.com/blog/caf%C3%A9-guide/": ("/blog/café-guide", "(none)", 250),
    "https://www.example.com/blog/caf%C3%A9-guide?utm_source=facebook&utm_medium=social": ("/blog/café-guide", "facebook", 90),
    "https://www.example.com/products/shoes/?utm_source=google&utm_medium=cpc&gclid=abc": ("/products/shoes", "google", 200),
    "https://www.example.com/products/shoes/": ("/products/shoes", "(none)", 500),
    "https://www.example.com/landing/webinar?utm_source=linked%20in&utm_campaign=webinar%20oto%C3%B1o": ("/landing/webinar", "linked in", 200),
    "https://help.example.com/faq?utm_source=app": (None, "app", 50),
}


def factor(day: dt.date) -> int:
    """Each day's multiple of the daily figures (so a wrong window changes every total)."""
    return 1 + day.toordinal() % 3


class PagesSite(Site):
    """A Search Console property whose facts are GSC_PAGES, one query per page and day."""

    def facts(self, start: dt.date, end: dt.date) -> list[tuple[Any, ...]]:
        out = []
        day = max(start, self.first_date)
        while day <= min(end, self.last_date):
            for i, (url, (_, impressions, clicks, position)) in enumerate(GSC_PAGES.items()):
                f = factor(day)
                out.append((day.isoformat(), f"query {i}", url, "esp", "MOBILE", 10, "AMP_BLUE_LINK", clicks * f, impressions * f, position))
            day += dt.timedelta(days=1)
        return out


class LandingGA4(GA4Fake):
    """The GA4 fake with landingPagePlusQueryString (GA4's landing page with its query string)."""

    def dimension_names(self, prop: Property) -> list[str]:
        return [*super().dimension_names(prop), "landingPagePlusQueryString"]


def ga4_facts(start: dt.date, end: dt.date) -> list[dict[str, Any]]:
    facts = []
    day = start - dt.timedelta(days=5)  # days outside the window too: the window must select them
    while day <= end + dt.timedelta(days=2):
        for landing, (_, rows) in GA4_LANDINGS.items():
            for channel, sessions, key_events in rows:
                f = factor(day)
                facts.append({"date": day.strftime("%Y%m%d"), "landingPagePlusQueryString": landing,
                              "sessionDefaultChannelGroup": channel, "sessions": sessions * f, "keyEvents": key_events * f})
        day += dt.timedelta(days=1)
    return facts


def skill_sql() -> list[str]:
    """The skill's SQL blocks in order: hosts, join, three analyses, export extraction, export join."""
    blocks = re.findall(r"```sql\n(.*?)```", SKILL.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 7, "the skill's SQL blocks changed: update this test's reading of them"
    return blocks


def readme_sql() -> list[str]:
    """The README's worked session: its join and its second analysis (the two SQL blocks of that section)."""
    section = README.read_text(encoding="utf-8").split("## What it is for", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sql\n(.*?)```", section, re.S)
    assert len(blocks) == 2, "the README's worked session changed: update this test's reading of it"
    return blocks


def truth(start: dt.date, end: dt.date) -> dict[str | None, dict[str, Any]]:
    """The fakes' data joined by the hand-written PAGE of every raw value (example.com only)."""
    days = [start + dt.timedelta(days=i) for i in range((end - start).days + 1)]
    pages: dict[str | None, dict[str, Any]] = {}
    for _, (page, impressions, clicks, position) in GSC_PAGES.items():
        if page is None:
            continue
        row = pages.setdefault(page, {})
        for day in days:
            f = factor(day)
            row["clicks"] = row.get("clicks", 0) + clicks * f
            row["impressions"] = row.get("impressions", 0) + impressions * f
            row["weighted"] = row.get("weighted", 0.0) + position * impressions * f
    for _, (page, rows) in GA4_LANDINGS.items():
        row = pages.setdefault(page, {})
        for channel, sessions, key_events in rows:
            for day in days:
                f = factor(day)
                organic = channel == "Organic Search"
                row["sessions"] = row.get("sessions", 0) + sessions * f
                row["key_events"] = row.get("key_events", 0) + key_events * f
                row["organic_sessions"] = row.get("organic_sessions", 0) + (sessions * f if organic else 0)
                row["organic_key_events"] = row.get("organic_key_events", 0) + (key_events * f if organic else 0)
    for page, row in pages.items():
        if "weighted" in row:
            row["position"] = row.pop("weighted") / row["impressions"]
        row["found_in"] = ("no page: (not set) or an unreadable URL" if page is None else "both" if "clicks" in row and "sessions" in row
                           else "Search Console only" if "clicks" in row else "GA4 only")
    return pages


@pytest.fixture
def google():
    """One loopback server with the token endpoint, Search Console, GA4 and BigQuery fakes (one service account)."""
    today_pt = dt.datetime.now(ZoneInfo("America/Los_Angeles")).date()
    end = today_pt - dt.timedelta(days=5)
    start = end - dt.timedelta(days=13)
    with FakeServer(hang_s=10) as server:
        oauth = TokenEndpoint(server)
        oauth.register_service_account(SA_EMAIL, keys.public_key_pem(0))
        site = PagesSite(DOMAIN, host="example.com", first_date=today_pt - dt.timedelta(days=60),
                         final_through=today_pt - dt.timedelta(days=2), last_date=today_pt)
        FakeSearchConsole(server, [site], {SA_EMAIL: [(DOMAIN, "siteOwner")]})
        ga4 = LandingGA4(server, today=dt.date.today())
        prop = ga4.add(Property(PROPERTY, "example.com", "1001", "Example"))
        prop.facts = ga4_facts(start, end)
        bq = FakeBigQuery(server)
        bq.add_dataset(BQ_PROJECT, BQ_DATASET, location="EU", description="GA4 export")
        schema = [{"name": "event_date", "type": "STRING"}, {"name": "event_name", "type": "STRING"},
                  {"name": "event_params", "type": "RECORD", "mode": "REPEATED", "fields": [
                      {"name": "key", "type": "STRING"},
                      {"name": "value", "type": "RECORD", "fields": [{"name": "string_value", "type": "STRING"}]}]}]
        shards = [f"events_{start + dt.timedelta(days=i):%Y%m%d}" for i in range((end - start).days + 1)]
        for name in shards:
            bq.add_table(FakeTable(BQ_PROJECT, BQ_DATASET, name, schema=schema, num_rows=5000, num_bytes=4_000_000))
        exported = list(EXPORT.items())
        bq.on_query("event_name = 'session_start'", QuerySpec(
            location="EU", total_bytes_processed=56_000_000, referenced_tables=[f"{BQ_PROJECT}.{BQ_DATASET}.{s}" for s in shards],
            schema=[{"name": "page_location", "type": "STRING", "mode": "NULLABLE"}, {"name": "sessions", "type": "INTEGER", "mode": "NULLABLE"}],
            total_rows=len(exported), row=lambda i: [exported[i][0], exported[i][1][2]]))
        credentials = keys.service_account_credentials(oauth.token_uri, SA_EMAIL)["service_account"]
        yield {"server": server, "start": start, "end": end, "bq": bq, "key": credentials}


def saved_id(notes: list[str]) -> str:
    """The dataset id the bridge's note names (what the model reads)."""
    [found] = re.findall(r"saved as dataset «([a-z0-9_]+)»", " ".join(notes))
    return found


async def test_search_console_and_ga4_joined_by_page(google, bridge, write_sources, tmp_path):
    start, end = google["start"], google["end"]
    project = tmp_path / "proj"
    project.mkdir()
    config = {"api_endpoint": google["server"].url}
    credentials = {"type": "service_account", "service_account": {"env": "GOOGLE_TEST_KEY"}}
    write_sources(project / "sources.json", {"sources": [
        {"id": "search", "acp": "gsc", "label": "Search Console (example.com)", "default_resource_id": DOMAIN,
         "credentials": credentials, "config": config},
        {"id": "analytics", "acp": "ga4", "label": "GA4 (example.com)", "default_resource_id": PROPERTY,
         "credentials": credentials, "config": config},
        {"id": "export", "acp": "bigquery", "label": "GA4 export", "default_resource_id": f"{BQ_PROJECT}.{BQ_DATASET}",
         "credentials": credentials, "config": config, "cost_limit_usd": 1},
    ]})
    env = {"GOOGLE_TEST_KEY": google["key"], "ACP_CACHE_DIR": str(tmp_path / "cache"),
           "ANALYTICS_ACP_GOOGLE_DEADLINE_S": "20", "ANALYTICS_ACP_GOOGLE_TIMEOUT_S": "10"}
    hosts_sql, join_sql, opportunity_sql, no_conversion_sql, no_search_sql, export_sql, export_join_sql = skill_sql()
    want = truth(start, end)

    async with bridge(project, sources=project / "sources.json", env=env) as client:
        listed = await client.session.list_resources()  # the bridge's skill, then the installed ACPs' (gsc's...)
        assert [str(r.uri) for r in listed.resources][0] == "skill://search-console-ga4-by-page/SKILL.md"
        assert "skill://gsc-ga4-landing-pages/SKILL.md" in {str(r.uri) for r in listed.resources}
        skill = await client.session.read_resource("skill://search-console-ga4-by-page/SKILL.md")
        assert skill.contents[0].text == SKILL.read_text(encoding="utf-8")

        # Prompt 1: "Extract Search Console clicks per page for <dates>."
        window = {"start_date": start.isoformat(), "end_date": end.isoformat()}
        is_error, gsc, notes = await client.call_json("search__search_analytics", {"dimensions": ["page"], **window})
        assert not is_error, gsc
        gsc_id = saved_id(notes)
        # Prompt 2: "And GA4 sessions and key events per landing page, same dates."
        is_error, ga4, notes = await client.call_json("analytics__run_report", {
            "dimensions": ["landingPagePlusQueryString", "sessionDefaultChannelGroup"], "metrics": ["sessions", "keyEvents"], **window})
        assert not is_error, ga4
        ga4_id = saved_id(notes)

        def sql(text: str) -> str:
            return text.replace("<gsc_dataset>", gsc_id).replace("<ga4_dataset>", ga4_id)

        # The hosts of the Domain property: help.example.com is there, and left out of the join.
        is_error, hosts, _ = await client.call_json("acp_query", {"sql": sql(hosts_sql)})
        assert not is_error, hosts
        days = [start + dt.timedelta(days=i) for i in range((end - start).days + 1)]
        clicks_of = {h: sum(c * factor(d) for u, (_, _, c, _) in GSC_PAGES.items() if (u.split("/")[2].removeprefix("www.") == h)
                            for d in days) for h in ("example.com", "help.example.com")}
        assert hosts["rows"] == [{"host": "example.com", "pages": 8, "clicks": clicks_of["example.com"]},
                                 {"host": "help.example.com", "pages": 1, "clicks": clicks_of["help.example.com"]}]

        # Prompt 3: "Join them by page." One acp_query, saved as pages_joined.
        is_error, joined, _ = await client.call_json("acp_query", {"sql": sql(join_sql), "save_as": "pages_joined"})
        assert not is_error, joined
        assert joined["total_rows"] == len(want) == 10 and not joined["truncated"]
        got = {r["page_key"]: r for r in joined["rows"]}
        assert set(got) == set(want)
        for page, expected in want.items():
            row = got[page]
            for column in ("clicks", "impressions", "sessions", "organic_sessions", "key_events", "organic_key_events"):
                assert row[column] == expected.get(column), (page, column)
            assert row["found_in"] == expected["found_in"], page
            if "position" in expected:
                assert row["position"] == pytest.approx(expected["position"])
        # No row lost to a key mismatch: the join's totals are the extractions' totals.
        assert sum(r["clicks"] or 0 for r in joined["rows"]) == clicks_of["example.com"]
        ga4_sessions = sum(s * factor(d) for _, rows in GA4_LANDINGS.values() for _, s, _ in rows for d in days)
        assert sum(r["sessions"] or 0 for r in joined["rows"]) == ga4_sessions == ga4["totals"]["sessions"]
        # ... and the raw spellings really differ: compared as written, only the home page would have matched.
        is_error, naive, _ = await client.call_json("acp_query", {"sql": (
            f"SELECT DISTINCT a.landingPagePlusQueryString AS p FROM {gsc_id} g JOIN {ga4_id} a "
            "ON substr(g.page, length('https://www.example.com') + 1) = a.landingPagePlusQueryString")})
        assert not is_error and naive["rows"] == [{"p": "/"}]

        # The README shows the same join (with the ids of its example): same rows.
        readme_join, readme_no_conversion = readme_sql()
        readme_join = readme_join.replace(README_IDS[0], gsc_id).replace(README_IDS[1], ga4_id)
        is_error, again, _ = await client.call_json("acp_query", {"sql": readme_join})
        assert not is_error and again["rows"] == joined["rows"]

        # Prompt 4: "Which pages have many impressions but a low CTR? Which get clicks but don't convert?
        # Which convert but get no search traffic?" The skill's three analyses, as written.
        pages = {p: r for p, r in want.items() if p is not None}
        gsc_pages = [r for r in pages.values() if "clicks" in r]
        site_ctr = sum(r["clicks"] for r in gsc_pages) / sum(r["impressions"] for r in gsc_pages)
        impressions_per_page = sum(r["impressions"] for r in gsc_pages) / len(gsc_pages)
        clicks_per_page = sum(r["clicks"] for r in gsc_pages) / len(gsc_pages)
        organic_rate = sum(r.get("organic_key_events", 0) for r in pages.values()) / sum(r.get("organic_sessions", 0) for r in pages.values())
        rate = sum(r.get("key_events", 0) for r in pages.values()) / sum(r.get("sessions", 0) for r in pages.values())

        is_error, opportunity, _ = await client.call_json("acp_query", {"sql": opportunity_sql})
        assert not is_error, opportunity
        expected = sorted((p for p, r in pages.items() if "clicks" in r and r["impressions"] >= impressions_per_page
                           and r["clicks"] < site_ctr * r["impressions"]), key=lambda p: -pages[p]["impressions"])
        assert [r["page_key"] for r in opportunity["rows"]] == expected == ["/blog/seo-guide", "/"]

        is_error, no_conversion, _ = await client.call_json("acp_query", {"sql": no_conversion_sql})
        assert not is_error, no_conversion
        expected = sorted((p for p, r in pages.items() if "clicks" in r and r["clicks"] >= clicks_per_page
                           and ("sessions" not in r or r["organic_key_events"] < 0.5 * organic_rate * r["organic_sessions"])),
                          key=lambda p: -pages[p]["clicks"])
        assert [r["page_key"] for r in no_conversion["rows"]] == expected == ["/blog/café-guide", "/blog/old-post"]
        assert no_conversion["rows"][1]["found_in"] == "Search Console only"
        is_error, readme_rows, _ = await client.call_json("acp_query", {"sql": readme_no_conversion})
        assert not is_error and [r["page_key"] for r in readme_rows["rows"]] == expected

        is_error, no_search, _ = await client.call_json("acp_query", {"sql": no_search_sql})
        assert not is_error, no_search
        expected = sorted((p for p, r in pages.items() if r.get("sessions", 0) > 0 and r["key_events"] >= rate * r["sessions"]
                           and r.get("clicks", 0) < 0.1 * clicks_per_page), key=lambda p: -pages[p]["key_events"])
        assert [r["page_key"] for r in no_search["rows"]] == expected == ["/landing/webinar"]

        # Variant 3: the GA4 BigQuery export (page_location with campaign parameters) instead of the Data API.
        query = (export_sql.replace("my-project.analytics_123456789", f"{BQ_PROJECT}.{BQ_DATASET}")
                 .replace("<yyyymmdd start>", f"{start:%Y%m%d}").replace("<yyyymmdd end>", f"{end:%Y%m%d}"))
        is_error, export, notes = await client.call_json("export__execute_query", {"query": query})
        assert not is_error, export
        assert google["bq"].sent_jobs(dry_run=False)[0]["configuration"]["query"]["query"] == query
        export_id = saved_id(notes)
        is_error, by_campaign, _ = await client.call_json("acp_query", {"sql": sql(export_join_sql).replace("<export_dataset>", export_id)})
        assert not is_error, by_campaign
        expected_sessions: dict[tuple[str, str], int] = {}
        for page, source, sessions in EXPORT.values():
            if page is not None:
                expected_sessions[(page, source)] = expected_sessions.get((page, source), 0) + sessions
        got_sessions = {(r["page_key"], r["utm_source"]): r["sessions"] for r in by_campaign["rows"]}
        assert got_sessions == expected_sessions
        assert sum(got_sessions.values()) == sum(s for p, _, s in EXPORT.values() if p is not None)
        for row in by_campaign["rows"]:
            assert row["page_search_clicks"] == want.get(row["page_key"], {}).get("clicks"), row

    meta = json.loads((project / "acp-data" / "pages_joined.meta.json").read_text(encoding="utf-8"))
    assert meta["origin"] == "query" and gsc_id in meta["sql"] and ga4_id in meta["sql"] and "url_key(" in meta["sql"]
