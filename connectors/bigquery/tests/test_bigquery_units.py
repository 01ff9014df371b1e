"""Pure parts: resource ids (6.1), cost arithmetic (9.1/9.2), shard grouping (15.3 step 5), SQL dates (8.2)."""

from __future__ import annotations

import pytest
from analytics_acp import InvalidArguments
from analytics_acp_bigquery import costs
from analytics_acp_bigquery.resource_ids import normalize, parse, resolve_table
from analytics_acp_bigquery.sharding import collapse_referenced, group_tables
from analytics_acp_bigquery.sqltext import apply_window, sql_dates


@pytest.mark.parametrize("given,expected,level", [
    ("mi-proyecto", "mi-proyecto", "project"),
    ("mi-proyecto.analytics_123", "mi-proyecto.analytics_123", "dataset"),
    ("mi-proyecto.analytics_123.events_*", "mi-proyecto.analytics_123.events_*", "table"),
    ("mi-proyecto/analytics_123", "mi-proyecto.analytics_123", "dataset"),
    ("`mi-proyecto.analytics_123.events_*`", "mi-proyecto.analytics_123.events_*", "table"),
    ("`mi-proyecto`.`analytics_123`", "mi-proyecto.analytics_123", "dataset"),
    ("example.com:mi-proyecto.analytics_123", "example.com:mi-proyecto.analytics_123", "dataset"),
    ("example.com:mi-proyecto", "example.com:mi-proyecto", "project"),
    ("mi-proyecto:analytics_123.events_20260901", "mi-proyecto.analytics_123.events_20260901", "table"),
    ("projects/mi-proyecto/datasets/analytics_123/tables/daily", "mi-proyecto.analytics_123.daily", "table"),
    (" Mi-Proyecto.analytics_123 ", "mi-proyecto.analytics_123", "dataset"),
])
def test_resource_ids_normalize_6_1(given, expected, level):
    ref = normalize(given)
    assert (ref.id, ref.level) == (expected, level)


@pytest.mark.parametrize("bad", ["", "a.b.c.d", "mi proyecto", "p.data-set", "p.d.t*x", "p..t"])
def test_bad_resource_ids_say_the_format(bad):
    with pytest.raises(InvalidArguments, match="project"):
        parse(bad)


def test_relative_table_names_resolve_against_the_resource():
    base = parse("mi-proyecto.analytics_123")
    assert resolve_table("daily", base).id == "mi-proyecto.analytics_123.daily"
    assert resolve_table("sandbox.t", base).id == "mi-proyecto.sandbox.t"
    assert resolve_table("otro-proyecto.ventas.t", base).id == "otro-proyecto.ventas.t"
    with pytest.raises(InvalidArguments):
        resolve_table("otro-proyecto.ventas", None)


def test_costs_follow_15_3_and_the_10_mb_minimum():
    assert costs.usd(674810580992, 6.25) == 3.835854 and costs.usd(9663676416, 6.25) == 0.054932
    assert costs.human_bytes(674810580992) == "628.5 GB" and costs.human_bytes(512) == "512 B"
    assert costs.human_bytes(3 << 40) == "3.0 TB"
    assert costs.billed_estimate(0, 3) == 3 * 10 * (1 << 20)  # a tiny query bills 10 MB per referenced table
    assert costs.billed_estimate(1 << 30, 3) == 1 << 30
    assert costs.maximum_bytes_billed(1, 6.25) == (1 << 40) // 6.25
    assert costs.maximum_bytes_billed(0, 6.25) == 1  # never 0, which BigQuery reads as "no cap"
    assert costs.maximum_bytes_billed(1, 0) is None
    with pytest.raises(InvalidArguments):
        costs.price_per_tib({"price_per_tib_usd": -1})


def test_shards_group_as_name_star_with_latest():
    listed = [("events_20260922", "TABLE"), ("daily", "TABLE"), ("events_20260923", "TABLE"), ("events_intraday_20260924", "TABLE"),
              ("backup_20261340", "TABLE"), ("v", "VIEW")]
    groups = group_tables(listed)
    assert [g.name for g in groups] == ["events_*", "daily", "events_intraday_20260924", "backup_20261340", "v"]
    assert groups[0].members == ["events_20260922", "events_20260923"] and groups[0].latest == "events_20260923"
    assert groups[4].type == "VIEW"
    refs = ["p.d.events_20260901", "p.d.events_20260902", "p.d.daily"]
    assert collapse_referenced(refs) == ["p.d.events_*", "p.d.daily"]
    assert collapse_referenced(["p.d.events_20260901"]) == ["p.d.events_20260901"]


def test_sql_dates_from_literals_and_table_suffix():
    assert sql_dates("SELECT 1 FROM `p.d.events_*` WHERE _TABLE_SUFFIX BETWEEN '20260901' AND '20260907'") == ["2026-09-01", "2026-09-07"]
    assert sql_dates("SELECT 1 WHERE d >= '2026-01-05' AND ts < '2026-02-01 00:00:00' AND _table_suffix >= '20251231'") == [
        "2025-12-31", "2026-01-05", "2026-02-01"]
    assert sql_dates("SELECT 'x'") is None
    sql, window = apply_window("WHERE d BETWEEN '{{start_date}}' AND '{{end_date}}'", "2026-09-01", "20260907")
    assert sql == "WHERE d BETWEEN '2026-09-01' AND '2026-09-07'" and window == ["2026-09-01", "2026-09-07"]


def test_suggestions_are_projects_then_their_datasets_with_location(world, ctx_for):
    """6.3: projects.list, then datasets.list per project (group = project, description = location)."""
    from analytics_acp_bigquery.resources import list_resources

    listed = list_resources(ctx_for("autocontext", resource_id=None))
    assert [(r.resource_id, r.group, r.description) for r in listed] == [
        ("mi-proyecto", "mi-proyecto", "Project"),
        ("mi-proyecto.analytics_123", "mi-proyecto", "Dataset in EU"),
        ("mi-proyecto.sandbox", "mi-proyecto", "Dataset in EU"),
        ("otro-proyecto", "otro-proyecto", "Project"),
        ("otro-proyecto.ventas", "otro-proyecto", "Dataset in US"),
    ]
    assert world.server.requests_to(r"^/bigquery/v2/projects$", "GET")
