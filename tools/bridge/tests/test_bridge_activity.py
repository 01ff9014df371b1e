"""The activity record (issue 37.1) through a real bridge process driven by an MCP client: a SQLite source whose
credential is a literal value in sources.json, and the test connector's paid tool (9.2)."""

from __future__ import annotations

import json
import sqlite3
from types import SimpleNamespace

import pytest
import pytest_asyncio

# A literal credential (the SQLAlchemy URL variant is writeOnly): searched for in the record file.
SECRET_DIR = "sk-DISTINCTIVE-activity-4d1e9"


def make_db(folder):
    folder.mkdir(parents=True)
    path = folder / "ventas.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE ventas (fecha TEXT, canal TEXT, pedidos INTEGER)")
        db.executemany("INSERT INTO ventas VALUES (?, ?, ?)",
                       [(f"2026-07-{1 + i % 28:02d}", ("web", "tienda")[i % 2], i) for i in range(90)])
    return path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory, shared_bridge, write_sources):
    base = tmp_path_factory.mktemp("activity")
    root = shared_bridge.fixture_root(base / "root")
    project = base / "proj"
    project.mkdir()
    url = f"sqlite:///{make_db(base / SECRET_DIR)}"
    write_sources(root / "sources.json", {"sources": [
        {"id": "ventas", "acp": "databases", "credentials": {"type": "url", "url": url}, "default_resource_id": "ventas"},
        {"id": "fx", "acp": "fixture", "credentials": {"account": "acct-a", "token": "tok-activity-literal"}},
    ]})
    async with shared_bridge.open(project, root) as client:
        await client.sources_settled()
        yield SimpleNamespace(client=client, project=project, url=url, record=project / "acp-data" / "activity.jsonl")


def entries(record):
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


def entry_of(shared, until, tool, count_before):
    """The first entry of ``tool`` written after ``count_before`` lines (the writer thread: bounded wait)."""
    found = []

    def written():
        if not shared.record.exists():
            return False
        found[:] = [e for e in entries(shared.record)[count_before:] if e["tool"] == tool]
        return bool(found)

    until(written, f"an activity entry for {tool}")
    return found[0]


def lines(shared):
    return len(entries(shared.record)) if shared.record.exists() else 0


@pytest.mark.asyncio(loop_scope="module")
async def test_an_extraction_is_recorded_with_rows_dataset_and_no_secret(shared, until):
    before = lines(shared)
    sql = f"SELECT fecha, canal, pedidos FROM ventas WHERE canal <> '{shared.url}'"
    failed, texts, _ = await shared.client.call("ventas__execute_sql", {"sql": sql})
    assert not failed, texts
    entry = entry_of(shared, until, "ventas__execute_sql", before)
    assert entry["via"] == "mcp" and entry["source"] == "ventas" and entry["acp"] == "databases"
    assert entry["acp_tool"] == "execute_sql" and entry["outcome"] == "ok" and entry["rows"] == 90
    assert isinstance(entry["duration_ms"], int) and entry["time"].endswith("Z")
    [dataset] = entry["datasets"]
    assert dataset["rows"] == 90 and (shared.project / "acp-data" / f"{dataset['id']}.csv").is_file()
    # The argument quoted the credential: the record keeps the SQL with the value masked.
    assert "[redacted]" in entry["arguments"]["sql"] and entry["arguments"]["sql"].startswith("SELECT fecha")
    assert shared.url not in shared.record.read_text(encoding="utf-8")
    assert SECRET_DIR not in shared.record.read_text(encoding="utf-8")
    # The dataset's meta (a project file the Datasets page shows) quotes the arguments: masked too.
    meta = (shared.project / "acp-data" / f"{dataset['id']}.meta.json").read_text(encoding="utf-8")
    assert shared.url not in meta and "[redacted]" in meta


@pytest.mark.asyncio(loop_scope="module")
async def test_a_failing_call_records_its_typed_error(shared, until):
    before = lines(shared)
    failed, texts, _ = await shared.client.call("ventas__execute_sql", {"sql": "SELECT * FROM no_such_table"})
    assert failed
    entry = entry_of(shared, until, "ventas__execute_sql", before)
    assert entry["outcome"] == "error" and entry["datasets"] == [] and "rows" in entry
    error = entry["error"]
    assert error["name"].startswith("ACP_") and isinstance(error["code"], int)
    assert error["message"] == json.loads(texts[0])["error"]["message"]


@pytest.mark.asyncio(loop_scope="module")
async def test_the_bridges_own_tools_are_recorded(shared, until):
    before = lines(shared)
    failed, texts, _ = await shared.client.call("acp_query", {"sql": "SELECT 1 AS one UNION ALL SELECT 2", "save_as": "two_rows"})
    assert not failed, texts
    entry = entry_of(shared, until, "acp_query", before)
    assert entry["source"] is None and entry["acp_tool"] == "acp_query" and entry["outcome"] == "ok"
    assert entry["rows"] == 2 and entry["datasets"] == [{"id": "two_rows", "rows": 2}]
    failed, _, _ = await shared.client.call("acp_sources")
    assert not failed
    assert entry_of(shared, until, "acp_sources", before)["outcome"] == "ok"


@pytest.mark.asyncio(loop_scope="module")
async def test_a_paid_call_over_the_cost_limit_records_the_estimate(shared, until):
    before = lines(shared)
    failed, texts, _ = await shared.client.call("fx__priced", {})
    assert failed and json.loads(texts[0])["error"]["name"] == "ACP_COST_LIMIT_EXCEEDED"
    entry = entry_of(shared, until, "fx__priced", before)
    assert entry["outcome"] == "error" and entry["error"]["name"] == "ACP_COST_LIMIT_EXCEEDED"
    assert entry["cost_usd"] == 5.0  # 9.2: the ACP's estimate, from the refusal's data
    assert "tok-activity-literal" not in shared.record.read_text(encoding="utf-8")
