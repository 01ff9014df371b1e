"""Issue 16 behaviours the audit found untested: dateHour typed datetime, keep_empty_rows and currency_code
as sent to the Data API, rates in regex clusters with a breakdown, a plain 404 on a property, and
compare_conversion_models' revenue columns and its "all key events" default."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from analytics_acp import ResourceNotFound
from analytics_acp_ga4.arguments import (
    ConversionModelsArguments,
    RegexClusterArguments,
    RunReportArguments,
)
from analytics_acp_ga4.attribution import compare_conversion_models
from analytics_acp_ga4.cluster import run_report_by_regex_cluster
from analytics_acp_ga4.report import run_report as _run_report
from ga4support import read_to_the_end

RR = r"/v1beta/properties/(\d+):runReport$"


def run_report(arguments, ctx):
    """The tool, with its streamed rows read to the end (as the core does when it builds the table)."""
    return read_to_the_end(_run_report(arguments, ctx))


def _in_default_window(fact, today):
    return (today - dt.timedelta(days=28)).strftime("%Y%m%d") <= fact["date"] <= (today - dt.timedelta(days=1)).strftime("%Y%m%d")


def test_date_hour_is_a_datetime_dimension(fake, make_ctx):
    ex = run_report(RunReportArguments.parse({"metrics": ["sessions"], "dimensions": ["dateHour"]}), make_ctx())
    assert [(h.name, h.type, h.role) for h in ex.headers] == [("dateHour", "datetime", "dimension"),
                                                              ("sessions", "integer", "metric")]
    facts = [f for f in fake.properties["123456789"].facts if _in_default_window(f, fake.today)]
    expected = {}
    for f in facts:
        h = f["dateHour"]
        key = f"{h[:4]}-{h[4:6]}-{h[6:8]}T{h[8:10]}:00:00"  # YYYYMMDDHH -> ISO datetime
        expected[key] = expected.get(key, 0) + f["sessions"]
    assert dict(ex.rows) == expected
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:00:00", r[0]) and dt.datetime.fromisoformat(r[0]) for r in ex.rows)


def test_keep_empty_rows_is_sent_and_keeps_the_zero_rows(fake, make_ctx, server):
    args = {"metrics": ["ecommercePurchases"], "dimensions": ["date", "sessionDefaultChannelGroup", "deviceCategory"]}
    kept = run_report(RunReportArguments.parse({**args, "keep_empty_rows": True}), make_ctx())
    assert server.requests_to(RR, "POST")[-1].body["keepEmptyRows"] is True
    assert len(kept.rows) == 28 * 4 * 3  # every date x channel x device of the window, purchases or not
    zeros = sum(1 for r in kept.rows if r[3] == 0)
    assert zeros > 0
    dropped = run_report(RunReportArguments.parse(args), make_ctx())
    assert not server.requests_to(RR, "POST")[-1].body.get("keepEmptyRows")
    assert len(dropped.rows) == len(kept.rows) - zeros and all(r[3] > 0 for r in dropped.rows)


def test_an_explicit_currency_code_is_sent_and_labels_the_currency_metrics(fake, make_ctx, server):
    ex = run_report(RunReportArguments.parse({"metrics": ["sessions", "totalRevenue"], "dimensions": ["date"], "currency_code": "USD"}), make_ctx())
    assert server.requests_to(RR, "POST")[-1].body["currencyCode"] == "USD"
    assert {h.name: h.description for h in ex.headers}["totalRevenue"] == "Currency amount (USD)"
    assert ex.source["currency_code"] == "USD"
    default = run_report(RunReportArguments.parse({"metrics": ["totalRevenue"], "dimensions": ["date"]}), make_ctx())
    assert "currencyCode" not in server.requests_to(RR, "POST")[-1].body
    assert default.headers[-1].description == "Currency amount (EUR)"  # the property's own currency


def test_cluster_rates_with_a_breakdown_are_the_apis_never_summed(fake, make_ctx):
    # The issue allows "recomputed from their components or refused"; the connector avoids both: each cluster is
    # its own filtered request, so GA4 computes the rate (and de-duplicates users) for exactly that cluster.
    clusters = [{"name": "Blog", "regex": "^/blog/"}, {"name": "Products", "regex": "^/products/"}]
    metrics = ["sessions", "engagementRate", "averageSessionDuration", "totalUsers"]
    ex = run_report_by_regex_cluster(RegexClusterArguments.parse({"dimension": "pagePath", "clusters": clusters, "metrics": metrics,
                                      "dimensions": ["sessionDefaultChannelGroup"]}), make_ctx())
    assert ex.columns == ["cluster", "sessionDefaultChannelGroup", *metrics]
    got = {(r[0], r[1]): r[2:] for r in ex.rows}
    ref = run_report(RunReportArguments.parse({"metrics": metrics, "dimensions": ["sessionDefaultChannelGroup"],
                      "dimension_filters": [{"field": "pagePath", "match_type": "PARTIAL_REGEXP", "value": "^/blog/"}]}), make_ctx())
    assert {("Blog", r[0]): r[1:] for r in ref.rows} == {k: v for k, v in got.items() if k[0] == "Blog"}
    # Organic Search reaches two blog pages in the fake: summing their rates would give a different (wrong) number.
    pages = run_report(RunReportArguments.parse({"metrics": metrics, "dimensions": ["pagePath", "sessionDefaultChannelGroup"]}), make_ctx())
    blog = [r for r in pages.rows if r[0].startswith("/blog/") and r[1] == "Organic Search"]
    assert len(blog) == 2
    rate = got[("Blog", "Organic Search")][1]
    assert 0 < rate <= 1 and rate != pytest.approx(sum(r[3] for r in blog))
    assert got[("Blog", "Organic Search")][0] == sum(r[2] for r in blog)  # sessions (additive) do add up


def test_a_plain_404_on_a_property_is_resource_not_found(fake, make_ctx, server):
    with pytest.raises(ResourceNotFound) as info:
        run_report(RunReportArguments.parse({"metrics": ["sessions"], "dimensions": ["date"]}), make_ctx(resource_id="555"))
    msg = info.value.message
    assert msg.startswith("'properties/555' does not exist (HTTP 404: Property properties/555 not found.)")
    assert "ikaue.com (123456789, account IKAUE)" in msg and "Store (987654321, account Client X)" in msg
    assert info.value.code == -32004 or info.value.name == "ACP_RESOURCE_NOT_FOUND"
    assert len(server.requests_to(r"/properties/555:runReport$", "POST")) == 1  # a 404 is not retried


MODELS = [("first_user", "firstUserDefaultChannelGroup"), ("session", "sessionDefaultChannelGroup"),
          ("attributed", "defaultChannelGroup")]


def _credit(facts, dimension, event=None):
    """{channel: (key events, revenue)} straight from the fake's facts, as GA4 would group them."""
    out: dict[str, tuple[float, float]] = {}
    for f in facts:
        ke = f["keyEvents"] if event is None or f["eventName"] == event else 0
        k, r = out.get(f[dimension], (0, 0.0))
        out[f[dimension]] = (k + ke, r + f["totalRevenue"])
    return out


def test_conversion_models_revenue_columns_are_each_models_revenue(fake, make_ctx, server):
    facts = [f for f in fake.properties["123456789"].facts if _in_default_window(f, fake.today)]
    ex = compare_conversion_models(ConversionModelsArguments.parse({"key_events": ["purchase"]}), make_ctx("compare_conversion_models"))
    rows = {r[0]: dict(zip(ex.columns, r, strict=True)) for r in ex.rows}
    assert ex.columns[7:10] == ["revenue_first_user", "revenue_session", "revenue_attributed"]
    assert {h.name: (h.type, h.role) for h in ex.headers}["revenue_attributed"] == ("number", "metric")
    moved = False
    for model, dimension in MODELS:
        expected = _credit(facts, dimension, "purchase")
        assert {c: row[f"revenue_{model}"] for c, row in rows.items()} == {c: expected.get(c, (0, 0.0))[1] for c in rows}
        assert {c: row[f"key_events_{model}"] for c, row in rows.items()} == {c: expected.get(c, (0, 0))[0] for c in rows}
        moved |= any(rows[c]["revenue_first_user"] != rows[c][f"revenue_{model}"] for c in rows)
    assert moved, "the fake's data moves revenue between models, so the columns can tell them apart"
    total_revenue = sum(f["totalRevenue"] for f in facts)
    assert total_revenue > 0
    for model, _ in MODELS:  # the API's totals: every model credits the same revenue, split differently
        assert ex.totals[f"revenue_{model}"] == total_revenue
        assert sum(r[f"revenue_{model}"] for r in rows.values()) == total_revenue
    # Purchases are the only revenue events; 2 key events each in this data.
    assert ex.totals["key_events_session"] == 2 * sum(1 for f in facts if f["eventName"] == "purchase")


def test_conversion_models_without_key_events_count_all_key_events(fake, make_ctx, server):
    facts = [f for f in fake.properties["123456789"].facts if _in_default_window(f, fake.today)]
    ex = compare_conversion_models(ConversionModelsArguments.parse({}), make_ctx("compare_conversion_models"))
    bodies = [r.body for r in server.requests_to(RR)]
    assert [b["metrics"] for b in bodies] == [[{"name": "keyEvents"}, {"name": "totalRevenue"}]] * 3  # no keyEvents:<event>
    assert [b["dateRanges"] for b in bodies] == [[{"startDate": "28daysAgo", "endDate": "yesterday"}]] * 3
    assert ex.arguments["key_events"] == [] and (ex.arguments["start_date"], ex.arguments["end_date"]) == ("28daysAgo", "yesterday")
    assert "(all key events)" in ex.description
    rows = {r[0]: dict(zip(ex.columns, r, strict=True)) for r in ex.rows}
    for model, dimension in MODELS:
        expected = _credit(facts, dimension)
        assert {c: row[f"key_events_{model}"] for c, row in rows.items()} == {c: expected.get(c, (0, 0))[0] for c in rows}
        assert ex.totals[f"key_events_{model}"] == sum(f["keyEvents"] for f in facts)
    # All key events include generate_lead, so the default counts more than purchases alone.
    purchases_only = compare_conversion_models(ConversionModelsArguments.parse({"key_events": ["purchase"]}), make_ctx("compare_conversion_models"))
    leads = 2 * sum(1 for f in facts if f["eventName"] == "generate_lead")
    assert leads > 0 and ex.totals["key_events_session"] == purchases_only.totals["key_events_session"] + leads
    # Shares are of all key events: per model they add up to 1.
    for model, _ in MODELS:
        assert abs(sum(r[f"share_{model}"] for r in rows.values()) - 1) < 0.01
