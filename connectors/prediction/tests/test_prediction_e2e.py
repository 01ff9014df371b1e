"""End to end through the host client: analytics-acp serve prediction over stdio, tables resolved by the host."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analytics_acp.errors import TableNotFound, TableTruncated
from analytics_acp.host import AcpClient
from PIL import Image
from statsmodels.tsa.holtwinters import ExponentialSmoothing

SERVER = [sys.executable, "-m", "analytics_acp", "serve", "prediction"]
# The real server, with an import hook that appends every heavy top-level package to a log file when it is
# first imported: the test reads the log between requests to see when each library was loaded.
SPIED_SERVER = """
import sys
log, heavy = sys.argv[1], {"statsmodels", "matplotlib", "pandas", "scipy"}
class Spy:
    def find_spec(self, name, path=None, target=None):
        if name in heavy:
            with open(log, "a", encoding="utf-8") as out:
                out.write(name + "\\n")
        return None
sys.meta_path.insert(0, Spy())
from analytics_acp.cli import main
sys.exit(main(["serve", "prediction"]))
"""
HEADERS = [{"name": "fecha", "type": "date"}, {"name": "canal", "type": "string"}, {"name": "pedidos", "type": "number"}]


def _rows() -> list[dict]:
    rng = np.random.default_rng(11)
    days = pd.date_range("2026-07-01", periods=90, freq="D")
    out = []
    for canal, scale in (("web", 1.0), ("shop", 0.5)):
        for i, d in enumerate(days):
            value = (100 + 0.5 * i + 10 * np.sin(2 * np.pi * i / 7) + rng.normal(0, 3)) * scale
            out.append({"fecha": d.strftime("%Y-%m-%d"), "canal": canal, "pedidos": round(float(value), 4)})
    return out


@pytest.fixture
def host(tmp_path):
    """A fake host: one dataset inline, the same as a file (8.5 rules), a truncated report; records requests."""
    rows = _rows()
    table_file = tmp_path / "ventas.json"
    table_file.write_text(json.dumps(rows))
    calls: list[tuple[str, str | None]] = []

    async def resolver(ref: str, call_id: str | None) -> dict:
        calls.append((ref, call_id))
        if ref == "ventas_inline":
            return {"format": "inline", "row_count": len(rows), "headers": HEADERS, "table": rows}
        if ref == "ventas_file":
            return {"format": "file", "row_count": len(rows), "headers": HEADERS, "table_uri": table_file.as_uri()}
        if ref == "report_sample":
            raise TableTruncated("Report 'report_sample' keeps only a sample. Pass its source dataset 'ventas_inline'.")
        raise TableNotFound(f"No dataset or report named {ref!r} in this conversation.")

    return resolver, rows, calls


def _web_series(rows: list[dict]) -> pd.Series:
    web = [r for r in rows if r["canal"] == "web"]
    return pd.Series([r["pedidos"] for r in web], index=pd.DatetimeIndex([r["fecha"] for r in web], freq="D"))


async def test_forecast_with_inline_and_file_tables_gives_statsmodels_numbers(host, tmp_path):
    resolver, rows, calls = host
    direct = ExponentialSmoothing(_web_series(rows), trend="add", seasonal="add", seasonal_periods=7,
                                  initialization_method="estimated").fit().forecast(14).to_numpy()
    args = {"time_column": "fecha", "value_column": "pedidos", "horizon": 14, "method": "holt_winters",
            "group_by": "canal"}
    async with AcpClient.stdio(SERVER, resolver=resolver, env={"ACP_TMP_DIR": str(tmp_path / "t")}) as client:
        assert client.server_capability["resource_id"]["format"] == "none"
        results = {}
        for ref in ("ventas_inline", "ventas_file"):
            res = await client.call_tool("forecast", {"table_ref": ref, **args}, meta={"call_id": f"call-{ref}"})
            assert not res.is_error, res.text
            results[ref] = res
    assert calls == [("ventas_inline", "call-ventas_inline"), ("ventas_file", "call-ventas_file")]
    for res in results.values():
        (table,) = res.tables()
        assert len(table.rows) == 28  # 2 series x 14 days; the model saw at most row_limit
        web = [r["forecast"] for r in table.rows if r["canal"] == "web"]
        np.testing.assert_allclose(web, direct, rtol=1e-9)
        assert res.system_info["resource_id"] is None
        assert res.model_response["dates"] == ["2026-09-29", "2026-10-12"]
        headers = {h["name"]: h["type"] for h in res.system_data["headers"]}
        assert headers == {"fecha": "date", "canal": "string", "forecast": "number", "lower": "number", "upper": "number"}
    assert results["ventas_inline"].tables()[0].rows == results["ventas_file"].tables()[0].rows


async def test_host_errors_and_missing_capability(host):
    resolver, _, calls = host
    args = {"time_column": "fecha", "value_column": "pedidos", "horizon": 7}
    async with AcpClient.stdio(SERVER, resolver=resolver) as client:
        missing = await client.call_tool("forecast", {"table_ref": "ds_nope", **args})
        assert missing.is_error and missing.error["code"] == -32021
        assert missing.error["message"] == "No dataset or report named 'ds_nope' in this conversation."
        sample = await client.call_tool("forecast", {"table_ref": "report_sample", **args})
        assert sample.error["name"] == "ACP_TABLE_TRUNCATED" and "ventas_inline" in sample.error["message"]
        bad = await client.call_tool("forecast", {"table_ref": "ventas_inline", **args, "value_column": "canal"})
        assert bad.error["name"] == "ACP_INVALID_ARGUMENTS"
        assert bad.error["message"] == "value_column: column 'canal' is not numeric. Numeric columns of 'ventas_inline': pedidos."
    seen = len(calls)
    no_tables = {"version": "1.0", "stores_system_data": True, "multi_table": True, "host_tables": False}
    async with AcpClient.stdio(SERVER, resolver=resolver, capability=no_tables) as client:
        res = await client.call_tool("forecast", {"table_ref": "ventas_inline", **args})
        assert res.error["name"] == "ACP_HOST_TABLES_UNSUPPORTED"
    assert len(calls) == seen  # 8.8: no acp/read_table without host_tables


async def test_lean_start_then_forecast_and_a_png_under_acp_tmp_dir(host, tmp_path):
    """One spied server: nothing heavy at start-up, statsmodels on the first forecast, matplotlib on the first plot."""
    resolver, _, _ = host
    log, out = tmp_path / "imports.log", tmp_path / "artifacts"
    log.touch()
    command = [sys.executable, "-c", SPIED_SERVER, str(log)]
    async with AcpClient.stdio(command, resolver=resolver, env={"ACP_TMP_DIR": str(out)}) as client:
        assert {"forecast", "plot"} <= {t["name"] for t in await client.list_tools()}
        # Initialized and listed: no statsmodels, matplotlib, pandas or scipy yet.
        assert log.read_text().split() == []
        res = await client.call_tool("forecast", {"table_ref": "ventas_inline", "time_column": "fecha",
                                                  "value_column": "pedidos", "horizon": 7, "method": "theta"})
        assert not res.is_error, res.text
        after_forecast = set(log.read_text().split())
        assert {"statsmodels", "pandas", "scipy"} <= after_forecast and "matplotlib" not in after_forecast
        res = await client.call_tool("plot", {"table_ref": "ventas_file", "x": "fecha", "y": "pedidos",
                                              "group_by": "canal", "width": 720, "height": 360})
        assert not res.is_error, res.text
        assert "matplotlib" in log.read_text().split()
    path = Path(res.model_response["screenshot_path"])
    assert path.is_absolute() and path.parent == out.resolve()
    with Image.open(path) as image:
        assert image.format == "PNG" and image.size == (720, 360)
    assert "iVBOR" not in res.text  # 8.10: no image bytes in model_response
