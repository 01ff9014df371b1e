"""Issue 17 behaviours the audit found untested: jobs run in config.billing_project (5.5.1), a cache hit
costs 0 (15.3's extra.cache_hit), table_schemas keeps to the first 15 tables of a dataset (15.3 step 5),
the 10 MB minimum per referenced table in the preflight and validate_query (9.1, 9.2), and {{start_date}} /
{{end_date}} substituted before the SQL reaches BigQuery (8.9)."""

from __future__ import annotations

import pytest
from analytics_acp import InvalidArguments
from analytics_acp_bigquery import blocks
from analytics_acp_bigquery.arguments import QueryArguments, ValidateQueryArguments
from analytics_acp_bigquery.execute import run_execute_query
from analytics_acp_bigquery.preflight import estimate
from analytics_acp_bigquery.validate import run_validate_query
from bqworld import DATASET, PROJECT, SQL_WEEK
from fakebq import FakeTable, QuerySpec

BILLING = "facturacion-central"


def test_jobs_run_in_the_billing_project_while_the_data_stays_the_resource(world, ctx_for):
    ctx = ctx_for(cost_limit_usd=1, config={"billing_project": BILLING})
    out = run_execute_query(QueryArguments.parse({"query": SQL_WEEK}), ctx)
    assert sum(1 for _ in out.rows) == 181022
    assert out.source["project"] == BILLING
    inserts = world.server.requests_to(r"/bigquery/v2/projects/[^/]+/jobs$", "POST")
    assert len(inserts) == 2  # the dry run and the real job
    for req in inserts:
        assert req.path.endswith(f"/projects/{BILLING}/jobs")
        assert req.body["jobReference"]["projectId"] == BILLING
        # The data's project is the resource: unqualified names resolve in mi-proyecto.analytics_123.
        assert req.body["configuration"]["query"]["defaultDataset"] == {"projectId": PROJECT, "datasetId": DATASET}
    results = world.server.requests_to(r"/bigquery/v2/projects/[^/]+/queries/", "GET")
    assert results and all(f"/projects/{BILLING}/queries/" in r.path for r in results)  # pages read from the job's project
    assert out.description.startswith(f"BigQuery dataset {PROJECT}.{DATASET}.")

    # Without billing_project the jobs go to the resource's project.
    run_execute_query(QueryArguments.parse({"query": SQL_WEEK}), ctx_for(cost_limit_usd=1))
    last = world.server.requests_to(r"/bigquery/v2/projects/[^/]+/jobs$", "POST")[-1]
    assert last.path.endswith(f"/projects/{PROJECT}/jobs")


def test_a_cache_hit_costs_nothing(world, ctx_for):
    sql = "SELECT event_name FROM `mi-proyecto.analytics_123.events_20260901` -- cached"
    world.bq.on_query(sql, QuerySpec(total_bytes_processed=5 * 2**30, location="EU", cache_hit=True,
                                     referenced_tables=[f"{PROJECT}.{DATASET}.events_20260901"],
                                     schema=[{"name": "event_name", "type": "STRING", "mode": "NULLABLE"}],
                                     total_rows=2, row=lambda i: [("page_view", "scroll")[i]]))
    out = run_execute_query(QueryArguments.parse({"query": sql}), ctx_for(cost_limit_usd=1))
    assert list(out.rows) == [("page_view",), ("scroll",)]
    assert out.extra == {"bytes_processed": 5 * 2**30, "cache_hit": True}
    assert out.cost_actual_usd == 0.0 and out.source["cache_hit"] is True and out.source["total_bytes_billed"] == 0
    job = world.bq.sent_jobs(dry_run=False)[-1]
    assert job["configuration"]["query"]["useQueryCache"] is True

    # The same query answered without the cache is billed (the price is what decides, not cache_hit alone).
    world.bq.on_query(sql, QuerySpec(total_bytes_processed=5 * 2**30, location="EU", cache_hit=False,
                                     referenced_tables=[f"{PROJECT}.{DATASET}.events_20260901"],
                                     schema=[{"name": "event_name", "type": "STRING", "mode": "NULLABLE"}],
                                     total_rows=2, row=lambda i: [("page_view", "scroll")[i]]))
    billed = run_execute_query(QueryArguments.parse({"query": sql}), ctx_for(cost_limit_usd=1))
    assert billed.extra["cache_hit"] is False and billed.cost_actual_usd == round(5 / 1024 * 6.25, 6)


def test_table_schemas_keeps_the_first_15_tables_of_a_big_dataset(world, ctx_for):
    world.bq.add_dataset(PROJECT, "wide", location="EU")
    names = [f"t{i:02d}" for i in range(20)]
    for n in names:
        world.bq.add_table(FakeTable(PROJECT, "wide", n, schema=[{"name": f"c_{n}", "type": "INTEGER", "mode": "NULLABLE"}]))
    ctx = ctx_for("autocontext", resource_id=f"{PROJECT}.wide")
    schemas = blocks.block_table_schemas(f"{PROJECT}.wide", ctx)
    assert [s["table"] for s in schemas] == names[:15]  # the listing's order
    assert schemas[3]["columns"][0]["name"] == "c_t03"
    fetched = {r.path.rsplit("/", 1)[1] for r in world.server.requests_to("/datasets/wide/tables/[^/]+$", "GET")}
    assert fetched == set(names[:15])  # tables 16-20 are not even read
    tables = blocks.block_tables(f"{PROJECT}.wide", ctx)
    assert [t["table"] for t in tables] == [f"{PROJECT}.wide.{n}" for n in names]  # the tables block lists them all


# --- 9.1/9.2: BigQuery bills at least 10 MB per referenced table; the preflight and validate_query apply it.

SMALL_SHARDS = [f"{PROJECT}.analytics_999.events_{20230101 + i}" for i in range(28)] + [
    f"{PROJECT}.analytics_999.events_{20230201 + i}" for i in range(28)]
SQL_SMALL = "SELECT event_name FROM `mi-proyecto.analytics_999.events_*` WHERE _TABLE_SUFFIX BETWEEN '20230101' AND '20230228'"
MIB10 = 10 * (1 << 20)


def _small_site(world, tables: list[str] = SMALL_SHARDS) -> None:
    """A small property's GA4 export: 56 daily shards that together scan only 5 MB."""
    world.bq.on_query(SQL_SMALL, QuerySpec(total_bytes_processed=5_000_000, referenced_tables=tables, location="EU",
                                           schema=[{"name": "event_name", "type": "STRING", "mode": "NULLABLE"}],
                                           total_rows=2, row=lambda i: [("page_view", "scroll")[i]]))


def test_the_10_mb_minimum_per_table_reaches_the_preflight_validate_and_the_bill(world, ctx_for):
    _small_site(world)
    billed = 56 * MIB10  # 587,202,560 bytes, not the 5,000,000 scanned
    expected_usd = round(billed / (1 << 40) * 6.25, 6)
    assert expected_usd == 0.003338 and round(5_000_000 / (1 << 40) * 6.25, 6) == 0.000028

    est = estimate(QueryArguments.parse({"query": SQL_SMALL}), ctx_for(cost_limit_usd=0.003))
    assert est.usd == expected_usd
    assert est.data == {"total_bytes_processed": 5_000_000, "estimated_bytes_billed": billed, "price_per_tib_usd": 6.25,
                        "statement_type": "SELECT"}

    info = run_validate_query(ValidateQueryArguments.parse({"query": SQL_SMALL}), ctx_for("validate_query", cost_limit_usd=0.003)).data
    assert info["total_bytes_processed"] == 5_000_000 and info["human_bytes"] == "4.8 MB"  # what the engine scans
    assert info["estimated_cost_usd"] == expected_usd  # what BigQuery bills
    assert info["within_cost_limit"] is False  # 5 MB alone would fit under $0.003
    assert info["referenced_tables"] == [f"{PROJECT}.analytics_999.events_*"]
    assert run_validate_query(ValidateQueryArguments.parse({"query": SQL_SMALL}), ctx_for("validate_query", cost_limit_usd=0.004)).data["within_cost_limit"] is True

    # The price comes from config (5.5.1); the minimum applies at any price.
    assert estimate(QueryArguments.parse({"query": SQL_SMALL}), ctx_for(cost_limit_usd=1, config={"price_per_tib_usd": 5})).usd == round(billed / (1 << 40) * 5, 6)

    # Run: the fake bills the same minimum, and cost_actual_usd says so.
    out = run_execute_query(QueryArguments.parse({"query": SQL_SMALL}), ctx_for(cost_limit_usd=0.004))
    assert list(out.rows) == [("page_view",), ("scroll",)]
    assert out.source["total_bytes_billed"] == billed and out.cost_actual_usd == expected_usd
    assert out.extra == {"bytes_processed": 5_000_000, "cache_hit": False}


def test_one_big_table_is_billed_what_it_scans(world, ctx_for):
    """The minimum is a floor per table, not an addition: one table scanning 5 MB bills 10 MB, one scanning 1 GB bills 1 GB."""
    _small_site(world, tables=SMALL_SHARDS[:1])
    assert estimate(QueryArguments.parse({"query": SQL_SMALL}), ctx_for(cost_limit_usd=1)).data["estimated_bytes_billed"] == MIB10
    sql = "SELECT * FROM `mi-proyecto.analytics_123.daily` -- one GiB"
    world.bq.on_query(sql, QuerySpec(total_bytes_processed=1 << 30, referenced_tables=[f"{PROJECT}.{DATASET}.daily"], location="EU",
                                     schema=[{"name": "day", "type": "DATE"}]))
    assert estimate(QueryArguments.parse({"query": sql}), ctx_for(cost_limit_usd=1)).data["estimated_bytes_billed"] == 1 << 30


# --- 8.9: {{start_date}}/{{end_date}} through execute_query (x-acp-date: template).

SQL_TEMPLATE = ("SELECT event_date, event_name FROM `mi-proyecto.analytics_123.events_*` "
                "WHERE _TABLE_SUFFIX BETWEEN FORMAT_DATE('%Y%m%d', '{{start_date}}') AND FORMAT_DATE('%Y%m%d', '{{end_date}}')")


def test_date_templates_reach_bigquery_substituted(world, ctx_for):
    sent_sql = SQL_TEMPLATE.replace("{{start_date}}", "2026-09-01").replace("{{end_date}}", "2026-09-07")
    world.bq.on_query(sent_sql, QuerySpec(
        total_bytes_processed=3 << 30, location="EU", referenced_tables=[f"{PROJECT}.{DATASET}.events_2026090{d}" for d in range(1, 8)],
        schema=[{"name": "event_date", "type": "STRING"}, {"name": "event_name", "type": "STRING"}],
        total_rows=7, row=lambda i: [f"2026090{i + 1}", "page_view"]))
    args = {"query": SQL_TEMPLATE, "start_date": "2026-09-01", "end_date": "20260907"}  # 8.9 accepts YYYYMMDD too
    ctx = ctx_for(cost_limit_usd=1)
    assert estimate(QueryArguments.parse(args), ctx).data["total_bytes_processed"] == 3 << 30  # the preflight dry-runs the substituted SQL
    out = run_execute_query(QueryArguments.parse(args), ctx)
    assert [r[0] for r in out.rows] == [f"2026090{d}" for d in range(1, 8)]
    (dry,) = world.bq.sent_jobs(dry_run=True)  # the preflight's dry run is reused by the run
    (job,) = world.bq.sent_jobs(dry_run=False)
    assert dry["configuration"]["query"]["query"] == sent_sql and job["configuration"]["query"]["query"] == sent_sql
    assert "{{" not in job["configuration"]["query"]["query"]
    assert out.dates == ["2026-09-01", "2026-09-07"]  # the window is the substitution (8.9)
    assert out.description.endswith(f"SQL: {sent_sql}")
    assert out.arguments["query"] == SQL_TEMPLATE and out.arguments["end_date"] == "20260907"

    # Without a window the template cannot run: refused before any request.
    before = len(world.server.requests)
    with pytest.raises(InvalidArguments, match="still contains"):
        run_execute_query(QueryArguments.parse({"query": SQL_TEMPLATE}), ctx_for(cost_limit_usd=1))
    assert len(world.server.requests) == before
