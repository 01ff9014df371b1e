"""The 16.7 session end to end: databases + prediction behind the bridge, a real MCP ClientSession."""

from __future__ import annotations

import csv
import datetime as dt
import json
import sqlite3

import pytest
from analytics_acp_bridge.store.datasets import META_FIELDS

example_db = pytest.importorskip("analytics_acp_databases.example_db")

END = dt.date(2026, 9, 28)
SQL = (
    "SELECT fecha, SUM(pedidos) AS pedidos, SUM(importe) AS importe FROM ventas "
    "WHERE fecha BETWEEN '{{start_date}}' AND '{{end_date}}' GROUP BY fecha ORDER BY fecha"
)
SUBSTITUTED = SQL.replace("{{start_date}}", "2026-07-01").replace("{{end_date}}", "2026-09-28")


@pytest.fixture
def project(tmp_path, write_sources):
    project = tmp_path / "proyecto"
    example_db.create_example_db(project / "data" / "ventas.sqlite", days=90, end=END)
    write_sources(project / "sources.json", {
        "defaults": {"row_limit": 25},
        "sources": [
            {"id": "ventas", "acp": "databases", "label": "Ventas (SQLite)", "default_resource_id": "ventas",
             "credentials": {"type": "sqlite", "path": {"projectPath": "data/ventas.sqlite"}}},
            {"id": "prevision", "acp": "prediction", "label": "Previsión local"},
        ],
    })
    return project


async def test_bridge_session_16_7(project, bridge):
    db_path = project / "data" / "ventas.sqlite"
    direct = sqlite3.connect(db_path)
    async with bridge(project) as client:
        tools = await client.tools()
        assert {"ventas__execute_sql", "prevision__forecast", "acp_query", "acp_sources", "acp_datasets"} <= set(tools)
        sql_tool = tools["ventas__execute_sql"]
        assert sql_tool["description"].startswith("[Ventas (SQLite) · ")
        assert {"start_date", "end_date"} <= set(sql_tool["inputSchema"]["properties"])
        table_ref = tools["prevision__forecast"]["inputSchema"]["properties"]["table_ref"]["description"]
        assert "acp-data" in table_ref

        # 1. execute_sql with the template window: 25 of 90 rows, autocontext, the host's note
        is_error, response, notes = await client.call_json(
            "ventas__execute_sql", {"sql": SQL, "start_date": "2026-07-01", "end_date": "2026-09-28"}
        )
        assert not is_error, response
        assert response["notice"] == "Showing 25 of 90 extracted rows."
        assert (response["total_rows"], response["returned_rows"], response["truncated"]) == (90, 25, True)
        assert response.get("autocontext"), "on_first_call: the first extraction carries the database autocontext (7.5)"
        files = sorted((project / "acp-data").glob("ventas_execute_sql_*.csv"))
        assert len(files) == 1
        dataset_id = files[0].stem
        assert notes[0].startswith(
            f"The full extraction was saved as dataset «{dataset_id}» in acp-data/{dataset_id}.csv. You saw 25 of 90 rows."
        )
        raw = files[0].read_bytes()
        assert raw.startswith(b"fecha,pedidos,importe\r\n")
        with open(files[0], encoding="utf-8", newline="") as f:
            stored = [(r["fecha"], int(r["pedidos"]), float(r["importe"])) for r in csv.DictReader(f)]
        assert stored == [(f, int(p), float(i)) for f, p, i in direct.execute(SUBSTITUTED).fetchall()]
        meta = json.loads((project / "acp-data" / f"{dataset_id}.meta.json").read_text(encoding="utf-8"))
        assert tuple(meta) == META_FIELDS
        assert (meta["id"], meta["origin"], meta["source"], meta["acp"], meta["tool"]) == (dataset_id, "acp", "ventas", "databases", "execute_sql")
        assert meta["arguments"]["sql"] == SUBSTITUTED  # the ACP received the substituted SQL, not the dates
        assert "start_date" not in meta["arguments"]
        assert {"2026-07-01", "2026-09-28"} <= set(meta["dates"])
        assert meta["headers"] == [{"name": "fecha", "type": "date"}, {"name": "pedidos", "type": "integer"},
                                   {"name": "importe", "type": "number"}]
        assert meta["row_count"] == 90 and meta["resource_id"]

        # 2. forecast over the saved dataset by table_ref
        is_error, forecast, fnotes = await client.call_json(
            "prevision__forecast",
            {"table_ref": dataset_id, "time_column": "fecha", "value_column": "pedidos", "horizon": 14, "method": "holt_winters"},
        )
        assert not is_error, forecast
        saved = sorted((project / "acp-data").glob("prevision_forecast_*.csv"))
        assert len(saved) == 1 and f"«{saved[0].stem}»" in fnotes[0]
        fmeta = json.loads(saved[0].with_suffix("").with_suffix(".meta.json").read_text(encoding="utf-8"))
        assert fmeta["arguments"]["table_ref"] == dataset_id and fmeta["source"] == "prevision"

        # a chart of the same dataset: screenshot_path becomes an image block (8.10)
        is_error, texts, raw = await client.call("prevision__plot", {"table_ref": dataset_id, "x": "fecha", "y": "pedidos"})
        assert not is_error, texts
        assert [c["mimeType"] for c in raw["content"] if c["type"] == "image"] == ["image/png"]

        # 3. monthly totals over all 90 rows
        is_error, totals, qnotes = await client.call_json(
            "acp_query", {"sql": f"SELECT strftime('%m', fecha) AS mes, SUM(pedidos) AS pedidos FROM {dataset_id} GROUP BY mes"}
        )
        assert not is_error, totals
        want = direct.execute(
            "SELECT strftime('%m', fecha), SUM(pedidos) FROM ventas WHERE fecha BETWEEN '2026-07-01' AND '2026-09-28' GROUP BY 1"
        ).fetchall()
        assert [(r["mes"], r["pedidos"]) for r in totals["rows"]] == want and len(want) == 3
        assert "You saw 3 of 3 rows." in qnotes[0]
        _, listing, _ = await client.call_json("acp_datasets", {})
        assert {d["origin"] for d in listing["datasets"]} == {"acp", "query"}
    # the database path is a credential: it never reached the client
    everything = "\n".join(client.received)
    assert str(db_path.resolve()) not in everything
