"""execute_query reports progress and a cancelled call stops the job (issue 28): job running, then rows
read of totalRows page by page; notifications/cancelled (ctx.signals.cancel, as the core does) sends
jobs.cancel for a running job, so its cost stops there, and no further page is read."""

from __future__ import annotations

import threading

import pytest
from analytics_acp import UpstreamError
from analytics_acp.kit import RecordingSignals
from analytics_acp.signals import CallSignals
from analytics_acp_bigquery.arguments import LoadRowsArguments, QueryArguments
from analytics_acp_bigquery.execute import PAGE_ROWS, run_execute_query
from fakebq import QuerySpec

TABLE = "mi-proyecto.analytics_123.numbers"
SCHEMA = [{"name": "n", "type": "INTEGER"}]


def test_progress_is_the_job_then_rows_of_total_rows(world, ctx_for):
    sql = f"SELECT n FROM `{TABLE}`"
    world.bq.on_query(sql, QuerySpec(schema=SCHEMA, total_rows=25_000, wire_row=lambda i: [str(i)],
                                     referenced_tables=[TABLE], location="EU"))
    signals = RecordingSignals()
    ex = run_execute_query(QueryArguments.parse({"query": sql}), ctx_for(cost_limit_usd=1, signals=signals))
    assert len(list(ex.rows)) == 25_000
    assert signals.seen[0][0] == 0 and "running" in signals.seen[0][2]
    assert [s[:2] for s in signals.seen[1:]] == [(10_000, 25_000), (20_000, 25_000), (25_000, 25_000)]


def test_a_cancelled_running_job_is_cancelled_at_bigquery(world, ctx_for):
    sql = f"SELECT n FROM `{TABLE}` WHERE n > 0"
    world.bq.on_query(sql, QuerySpec(schema=SCHEMA, total_rows=10, wire_row=lambda i: [str(i)],
                                     referenced_tables=[TABLE], location="EU", runs_until_cancelled=True))
    signals = CallSignals()
    ctx = ctx_for(cost_limit_usd=1, signals=signals)
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            run_execute_query(QueryArguments.parse({"query": sql}), ctx)
        except BaseException as exc:  # the tool's answer to a cancelled job
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    for _ in range(600):  # bounded: the job created and polled at least once
        if world.server.requests_to(r"/queries/", "GET"):
            break
        threading.Event().wait(0.05)
    signals.cancel()  # what the core does on notifications/cancelled
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert world.server.requests_to(r"/jobs/[^/]+/cancel$", "POST")  # BigQuery was told: the job stops billing
    assert outcome and isinstance(outcome[0], Exception)


def test_a_call_cancelled_while_reading_pages_reads_no_further_page(world, ctx_for):
    sql = f"SELECT n FROM `{TABLE}` WHERE n >= 0"
    world.bq.on_query(sql, QuerySpec(schema=SCHEMA, total_rows=5 * PAGE_ROWS, wire_row=lambda i: [str(i)],
                                     referenced_tables=[TABLE], location="EU"))
    signals = CallSignals()
    ex = run_execute_query(QueryArguments.parse({"query": sql}), ctx_for(cost_limit_usd=1, signals=signals))
    rows = iter(ex.rows)
    for _ in range(PAGE_ROWS):
        next(rows)
    signals.cancel()
    with pytest.raises(UpstreamError, match="cancelled"):
        list(rows)
    assert len(world.server.requests_to(r"/queries/", "GET")) <= 3  # the wait and at most two pages, not six


def _load_rows(ctx, arguments):
    import anyio
    from analytics_acp_bigquery.load import run_load_rows

    return anyio.run(run_load_rows, LoadRowsArguments.parse(arguments), ctx)


def _big_host():
    from analytics_acp import HostTable

    headers = [{"name": "day", "type": "date"}, {"name": "value", "type": "integer"}, {"name": "label", "type": "string"}]
    rows = [{"day": "2026-01-01", "value": i, "label": "x" * 60} for i in range(12_000)]  # ~1.1 MB of NDJSON
    return {"big": HostTable(ref="big", headers=headers, rows=rows)}


def test_load_rows_reports_rows_sent_per_chunk_of_the_total(world, ctx_for, monkeypatch):
    from analytics_acp_bigquery import upload

    monkeypatch.setattr(upload, "CHUNK_BYTES", 256 * 1024)  # several chunks instead of one
    signals = RecordingSignals()
    info = _load_rows(ctx_for("load_rows", config={"access_mode": "readAndOnlyAdd"}, tables=_big_host(), signals=signals),
                      {"table_ref": "big", "table": "sandbox.targets"})
    assert info.data["rows_appended"] == 12_000
    puts = world.server.requests_to(r"^/upload/", "PUT")
    assert len(puts) == len(signals.seen) > 2  # one report after each chunk the server acknowledged
    done = [s[0] for s in signals.seen]
    assert done == sorted(done) and 0 < done[0] < 12_000 and done[-1] == 12_000
    assert {s[1] for s in signals.seen} == {12_000}
    # Each report counts only the rows whose bytes the server had acknowledged.
    assert done[0] == sum(1 for line in puts[0].body.split("\n") if line.endswith("}"))


def test_a_cancelled_load_sends_no_further_chunk_and_loads_nothing(world, ctx_for, monkeypatch):
    # Issue 28: a cancel between chunks leaves what a failed upload leaves: an unfinalized resumable
    # session, no load job, no table (create_if_missing) and no row.
    from analytics_acp_bigquery import upload

    monkeypatch.setattr(upload, "CHUNK_BYTES", 256 * 1024)
    signals = RecordingSignals(cancel_after=1)  # at the first report: after the first chunk
    ctx = ctx_for("load_rows", config={"access_mode": "readAndOnlyAdd"}, tables=_big_host(), signals=signals)
    with pytest.raises(UpstreamError, match="cancelled before its last chunk; nothing was loaded"):
        _load_rows(ctx, {"table_ref": "big", "table": "sandbox.fresh", "create_if_missing": True})
    assert len(world.server.requests_to(r"^/upload/", "PUT")) == 1
    (session,) = world.bq.uploads.values()
    assert 0 < len(session["data"]) < 1_000_000
    assert ("mi-proyecto", "sandbox", "fresh") not in world.bq.tables
    assert not [j for j in world.bq.jobs.values() if "load" in j["configuration"]]


def test_a_cancel_while_the_load_job_runs_cancels_it_at_bigquery(world, ctx_for, monkeypatch):
    # Once the rows are uploaded, a cancel sends jobs.cancel: the load job commits nothing (no table, no row).
    monkeypatch.setenv("ANALYTICS_ACP_BIGQUERY_JOB_TIMEOUT_S", "20")  # without the cancel, the wait ends there
    world.bq.hold_loads = True
    signals = CallSignals()
    ctx = ctx_for("load_rows", config={"access_mode": "readAndOnlyAdd"}, tables=_big_host(), signals=signals)
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            _load_rows(ctx, {"table_ref": "big", "table": "sandbox.fresh", "create_if_missing": True})
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    assert world.bq.load_held.wait(30)
    signals.cancel()  # what the core does on notifications/cancelled
    worker.join(timeout=60)
    assert not worker.is_alive() and outcome and isinstance(outcome[0], UpstreamError)
    assert world.server.requests_to(r"/jobs/[^/]+/cancel$", "POST")
    assert ("mi-proyecto", "sandbox", "fresh") not in world.bq.tables
