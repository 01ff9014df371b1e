"""Issue 17 behaviours the audit found untested: jobs run in config.billing_project (5.5.1), a cache hit
costs 0 (15.3's extra.cache_hit), and table_schemas keeps to the first 15 tables of a dataset (15.3 step 5)."""

from __future__ import annotations

from analytics_acp_bigquery import blocks
from analytics_acp_bigquery.execute import run_execute_query
from bqworld import DATASET, PROJECT, SQL_WEEK
from fakebq import FakeTable, QuerySpec

BILLING = "facturacion-central"


def test_jobs_run_in_the_billing_project_while_the_data_stays_the_resource(world, ctx_for):
    ctx = ctx_for(cost_limit_usd=1, config={"billing_project": BILLING})
    out = run_execute_query({"query": SQL_WEEK}, ctx)
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
    run_execute_query({"query": SQL_WEEK}, ctx_for(cost_limit_usd=1))
    last = world.server.requests_to(r"/bigquery/v2/projects/[^/]+/jobs$", "POST")[-1]
    assert last.path.endswith(f"/projects/{PROJECT}/jobs")


def test_a_cache_hit_costs_nothing(world, ctx_for):
    sql = "SELECT event_name FROM `mi-proyecto.analytics_123.events_20260901` -- cached"
    world.bq.on_query(sql, QuerySpec(total_bytes_processed=5 * 2**30, location="EU", cache_hit=True,
                                     referenced_tables=[f"{PROJECT}.{DATASET}.events_20260901"],
                                     schema=[{"name": "event_name", "type": "STRING", "mode": "NULLABLE"}],
                                     total_rows=2, row=lambda i: [("page_view", "scroll")[i]]))
    out = run_execute_query({"query": sql}, ctx_for(cost_limit_usd=1))
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
    billed = run_execute_query({"query": sql}, ctx_for(cost_limit_usd=1))
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
