"""The kit's ready CallContext for connector unit tests (issue 13 item 2)."""

import dataclasses

import anyio
import pytest
from analytics_acp import CallContext, HostTable
from analytics_acp.errors import HostTablesUnsupported, TableNotFound
from analytics_acp.kit import FakeHost, make_ctx

TABLE = HostTable("sales", [{"name": "day", "type": "date"}], [{"day": "2026-01-01"}])


def test_call_context_has_no_private_fields():
    # No hidden channel: everything the runtime passes is a public constructor argument.
    assert [f.name for f in dataclasses.fields(CallContext) if f.name.startswith("_")] == []


def test_make_ctx_answers_read_table_and_records_requests():
    ctx = make_ctx("demo", "forecast", tables={"sales": TABLE}, config={"a": 1}, resource_id="r1")
    assert (ctx.connector_id, ctx.tool, ctx.config, ctx.resource_id) == ("demo", "forecast", {"a": 1}, "r1")
    assert ctx.client.acp and ctx.client.host_tables
    assert anyio.run(ctx.read_table, "sales") is TABLE
    with pytest.raises(TableNotFound):
        anyio.run(ctx.read_table, "missing")
    assert ctx.table_reader.requests == ["sales", "missing"]


def test_make_ctx_without_host_tables_never_asks_the_host():
    host = FakeHost({"sales": TABLE})
    ctx = make_ctx("demo", "forecast", tables=host, host_tables=False)
    with pytest.raises(HostTablesUnsupported):
        anyio.run(ctx.read_table, "sales")
    assert host.requests == []
    assert not make_ctx().client.host_tables  # no tables: a host without acp/read_table (8.8)


def test_make_ctx_passes_other_fields_and_sees_later_tables():
    tables: dict[str, HostTable] = {}
    ctx = make_ctx(tables=tables, row_limit=5, session_id="s", credential_identity="abc")
    tables["late"] = TABLE
    assert anyio.run(ctx.read_table, "late") is TABLE
    assert (ctx.row_limit, ctx.state_key, ctx.credential_identity) == (5, "s", "abc")


def test_require_resource_id():
    from analytics_acp.errors import ResourceRequired

    assert make_ctx(resource_id="demo").require_resource_id() == "demo"
    with pytest.raises(ResourceRequired):
        make_ctx().require_resource_id()
