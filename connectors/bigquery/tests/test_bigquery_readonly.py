"""10.4: read-only is decided by the dry run's statementType, never by the SQL text; 10.6 table_rules on reads."""

from __future__ import annotations

import pytest
from analytics_acp import InvalidArguments, ReadOnlyViolation
from analytics_acp_bigquery.arguments import QueryArguments
from analytics_acp_bigquery.execute import run_execute_query
from analytics_acp_bigquery.preflight import estimate
from fakebq import QuerySpec

# Every statement type BigQuery's dry run reports for a write, DDL, export, load, procedure call or script.
REFUSED = {
    "INSERT": "INSERT INTO t (x) VALUES (1)",
    "UPDATE": "UPDATE t SET x = 2 WHERE true",
    "DELETE": "DELETE FROM t WHERE true",
    "MERGE": "MERGE t USING s ON t.x = s.x WHEN MATCHED THEN DELETE",
    "TRUNCATE_TABLE": "TRUNCATE TABLE t",
    "CREATE_TABLE": "CREATE TABLE t2 (x INT64)",
    "CREATE_TABLE_AS_SELECT": "CREATE TABLE t3 AS SELECT 1 x",
    "CREATE_VIEW": "CREATE VIEW v AS SELECT 1 x",
    "DROP_TABLE": "DROP TABLE t",
    "ALTER_TABLE": "ALTER TABLE t ADD COLUMN y INT64",
    "EXPORT_DATA": "EXPORT DATA OPTIONS(uri='gs://b/*.csv', format='CSV') AS SELECT 1",
    "LOAD_DATA": "LOAD DATA INTO t FROM FILES (format='CSV', uris=['gs://b/x.csv'])",
    "CALL": "CALL mi-proyecto.analytics_123.do_things()",
    # A script whose first statement is a harmless SELECT: a regex on the first word would let it through.
    "SCRIPT": "SELECT 1; DELETE FROM t WHERE true",
}


@pytest.mark.parametrize("statement_type", sorted(REFUSED))
def test_every_write_statement_type_is_refused_before_any_job(world, ctx_for, statement_type):
    sql = f"/* {statement_type} */ {REFUSED[statement_type]}"
    world.bq.on_query(sql, QuerySpec(statement_type=statement_type, location="EU",
                                     referenced_tables=["mi-proyecto.analytics_123.tmp"]))
    ctx = ctx_for(cost_limit_usd=100)
    with pytest.raises(ReadOnlyViolation) as err:
        estimate(QueryArguments.parse({"query": sql}), ctx)
    assert err.value.message == f"This ACP is read-only: only SELECT statements are executed (the query is {statement_type})."
    with pytest.raises(ReadOnlyViolation):  # the tool itself refuses too when called without the core's preflight
        run_execute_query(QueryArguments.parse({"query": sql}), ctx_for(cost_limit_usd=100))
    assert world.bq.sent_jobs(dry_run=False) == []
    assert all(j["configuration"]["dryRun"] for j in world.bq.sent_jobs())


def test_a_select_that_mentions_delete_runs(world, ctx_for):
    """No regex: a SELECT whose text says DELETE/INSERT is a SELECT for the dry run, and it runs."""
    sql = "SELECT 'DELETE FROM t; INSERT INTO t' AS note"
    world.bq.on_query(sql, QuerySpec(schema=[{"name": "note", "type": "STRING"}], total_rows=1,
                                     row=lambda i: ["DELETE FROM t; INSERT INTO t"]))
    ex = run_execute_query(QueryArguments.parse({"query": sql}), ctx_for(cost_limit_usd=1))
    assert list(ex.rows) == [("DELETE FROM t; INSERT INTO t",)]


def test_table_rules_are_validated_for_the_referenced_tables(world, ctx_for):
    """10.6: referenced tables go through table_rules (any mode reads); a broken rule list is a config error."""
    from bqworld import SQL_WEEK

    ctx = ctx_for(cost_limit_usd=1, config={"table_rules": '[{"pattern": "events_", "mode": "onlyRead"}]'})
    assert estimate(QueryArguments.parse({"query": SQL_WEEK}), ctx).usd == 0.054932
    bad = ctx_for(cost_limit_usd=1, config={"table_rules": '[{"pattern": "(", "mode": "onlyRead"}]'})
    with pytest.raises(InvalidArguments, match="table_rules"):
        estimate(QueryArguments.parse({"query": SQL_WEEK}), bad)
