"""load_rows (8.8.2, 10.6): both access modes, table_rules (first match wins), create from typed headers,
WRITE_APPEND only, and what the client uploaded (multipart, or resumable past 5 MB)."""

from __future__ import annotations

import json

import anyio
import pytest
from analytics_acp import HostTable, InvalidArguments, ReadOnlyViolation
from analytics_acp.kit import FakeHost
from analytics_acp_bigquery.arguments import LoadRowsArguments

SALES = HostTable(
    ref="ds_sales",
    headers=[{"name": "day", "type": "date"}, {"name": "value", "type": "integer"}, {"name": "label", "type": "string"}],
    rows=[{"day": "2026-01-01", "value": 3, "label": "a"}, {"day": "2026-01-02", "value": None, "label": ""}],
)


def _load(ctx, arguments):
    from analytics_acp_bigquery.load import run_load_rows

    return anyio.run(run_load_rows, LoadRowsArguments.parse(arguments), ctx)


def _uploads(world):
    return world.server.requests_to(r"^/upload/bigquery/v2/projects/[^/]+/jobs$")


def test_only_read_refuses_before_any_request(world, ctx_for):
    host = FakeHost({"ds_sales": SALES})
    ctx = ctx_for("load_rows", tables=host)
    with pytest.raises(ReadOnlyViolation) as err:
        _load(ctx, {"table_ref": "ds_sales", "table": "sandbox.targets"})
    assert "onlyRead" in err.value.message
    assert world.server.requests == [] and host.requests == [], "neither BigQuery nor the host was asked anything"


def test_read_and_only_add_appends_with_a_multipart_load_job(world, ctx_for):
    host = FakeHost({"ds_sales": SALES})
    ctx = ctx_for("load_rows", config={"access_mode": "readAndOnlyAdd"}, tables=host)
    info = _load(ctx, {"table_ref": "ds_sales", "table": "sandbox.targets"})
    assert info.data["table"] == "mi-proyecto.sandbox.targets" and info.data["rows_appended"] == 2
    assert info.data["created"] is False and info.data["write_disposition"] == "WRITE_APPEND"
    (upload,) = _uploads(world)
    assert upload.query["uploadType"] == ["multipart"]
    from fakebq import _split_multipart, header

    metadata, data = _split_multipart(header(upload, "Content-Type"), upload.body)
    load = metadata["configuration"]["load"]
    assert load["writeDisposition"] == "WRITE_APPEND" and load["createDisposition"] == "CREATE_NEVER"
    assert load["sourceFormat"] == "NEWLINE_DELIMITED_JSON"
    assert load["destinationTable"] == {"projectId": "mi-proyecto", "datasetId": "sandbox", "tableId": "targets"}
    assert metadata["configuration"]["labels"] == {"acp_connector": "bigquery", "acp_tool": "load_rows"}
    assert [json.loads(line) for line in data.splitlines()] == [
        {"day": "2026-01-01", "value": 3, "label": "a"}, {"day": "2026-01-02", "label": ""}]
    assert world.bq.tables[("mi-proyecto", "sandbox", "targets")].rows[0] == {"day": "2026-01-01", "value": 3, "label": "a"}


def test_a_missing_table_is_created_from_the_typed_headers_only_when_asked(world, ctx_for):
    ctx = ctx_for("load_rows", config={"access_mode": "readAndOnlyAdd"}, tables={"ds_sales": SALES})
    with pytest.raises(InvalidArguments, match="create_if_missing"):
        _load(ctx, {"table_ref": "ds_sales", "table": "sandbox.new_one"})
    assert _uploads(world) == []
    info = _load(ctx_for("load_rows", config={"access_mode": "readAndOnlyAdd"}, tables={"ds_sales": SALES}),
                 {"table_ref": "ds_sales", "table": "sandbox.new_one", "create_if_missing": True})
    assert info.data["created"] is True
    table = world.bq.tables[("mi-proyecto", "sandbox", "new_one")]
    assert [(f["name"], f["type"]) for f in table.schema] == [("day", "DATE"), ("value", "INT64"), ("label", "STRING")]


def test_table_rules_open_one_table_of_a_read_only_source_and_close_one_of_a_writable_one(world, ctx_for):
    rules = json.dumps([{"pattern": r"\.sandbox\.targets$", "mode": "readAndOnlyAdd"}, {"pattern": r"\.sandbox\.", "mode": "onlyRead"}])
    ok = _load(ctx_for("load_rows", config={"table_rules": rules}, tables={"ds_sales": SALES}),
               {"table_ref": "ds_sales", "table": "mi-proyecto.sandbox.targets"})
    assert ok.data["rows_appended"] == 2
    host = FakeHost({"ds_sales": SALES})
    with pytest.raises(ReadOnlyViolation):  # readAndOnlyAdd instance, but the second rule closes the rest of sandbox
        _load(ctx_for("load_rows", config={"access_mode": "readAndOnlyAdd", "table_rules": rules}, tables=host),
              {"table_ref": "ds_sales", "table": "sandbox.other", "create_if_missing": True})
    assert host.requests == []


def test_unknown_columns_are_refused_before_uploading(world, ctx_for):
    odd = HostTable(ref="odd", headers=[{"name": "nope", "type": "string"}], rows=[{"nope": "x"}])
    with pytest.raises(InvalidArguments, match="nope"):
        _load(ctx_for("load_rows", config={"access_mode": "readAndOnlyAdd"}, tables={"odd": odd}),
              {"table_ref": "odd", "table": "sandbox.targets"})
    assert _uploads(world) == []


def test_a_big_table_goes_through_a_resumable_upload(world, ctx_for):
    rows = [{"day": "2026-01-01", "value": i, "label": "x" * 60} for i in range(70_000)]  # > 5 MB of NDJSON
    big = HostTable(ref="big", headers=SALES.headers, rows=rows)
    info = _load(ctx_for("load_rows", config={"access_mode": "readAndOnlyAdd"}, tables={"big": big}),
                 {"table_ref": "big", "table": "sandbox.targets"})
    assert info.data["rows_appended"] == 70_000
    kinds = [r.query.get("uploadType", [""])[0] for r in world.server.requests_to(r"^/upload/")]
    assert kinds[0] == "resumable" and world.server.requests_to(r"^/upload/", "PUT")
    assert len(world.bq.tables[("mi-proyecto", "sandbox", "targets")].rows) == 70_000


def test_upload_retries_are_bounded(world, ctx_for):
    from analytics_acp import UpstreamError
    from analytics_acp_bigquery.load import UPLOAD_RETRIES
    from fakebq import bq_error

    world.server.fail("POST", r"/upload/bigquery/v2/projects/([^/]+)/jobs", *[(503, bq_error(503, "Backend error", "backendError"))] * 20)
    with pytest.raises(UpstreamError):
        _load(ctx_for("load_rows", config={"access_mode": "readAndOnlyAdd"}, tables={"ds_sales": SALES}),
              {"table_ref": "ds_sales", "table": "sandbox.targets"})
    assert len(_uploads(world)) == 1 + UPLOAD_RETRIES
