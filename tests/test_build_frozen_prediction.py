"""The frozen `prediction` build: only its dependencies, the checklist, real forecasts and plots (statsmodels,
scipy and matplotlib frozen inside).

Split per connector so pytest-xdist (--dist loadfile) freezes the connectors on different workers;
the build itself is shared (root conftest.py ``frozen_build``). Slow: marked ``build``.
"""

from pathlib import Path

import anyio
import pytest
from analytics_acp.host import AcpClient
from analytics_acp_build.check import Target, failed, run_check
from build_support import internal_packages

pytestmark = [pytest.mark.build, pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def prediction(frozen_build):
    result = frozen_build("prediction")
    assert result.ok, result.error
    return result


def test_prediction_build_carries_only_its_dependencies(prediction):
    inside = internal_packages(prediction.folder)
    assert {"statsmodels", "matplotlib", "numpy", "pandas", "analytics_acp_prediction"} <= inside
    assert not inside & {"sqlalchemy", "googleapiclient", "playwright", "analytics_acp_databases", "tkinter", "pytest"}


def test_prediction_frozen_passes_the_checklist(prediction):
    items = run_check(Target(folder=prediction.folder), timeout=180)
    assert not failed(items), [(i.item, i.evidence) for i in failed(items)]


def test_prediction_frozen_forecasts_and_plots_host_tables(prediction, tmp_path):
    # statsmodels, scipy and matplotlib load on first use: only real calls prove the freeze carried them.
    headers = [{"name": "fecha", "type": "date"}, {"name": "pedidos", "type": "number"}]
    rows = [{"fecha": f"2026-{7 + d // 31:02d}-{d % 31 + 1:02d}", "pedidos": 100 + d + 10 * (d % 7)} for d in range(62)]

    async def resolver(ref, call_id):
        return {"format": "inline", "row_count": len(rows), "headers": headers, "table": rows}

    out = tmp_path / "artifacts"

    async def run():
        async with AcpClient.stdio([str(prediction.folder / "prediction-server")], resolver=resolver,
                                   env={"ACP_TMP_DIR": str(out), "ACP_CACHE_DIR": str(tmp_path / "c")},
                                   cwd=str(prediction.folder)) as client:
            forecast = await client.call_tool("forecast", {"table_ref": "ventas", "time_column": "fecha",
                                                           "value_column": "pedidos", "horizon": 7, "method": "holt_winters"})
            plot = await client.call_tool("plot", {"table_ref": "ventas", "x": "fecha", "y": "pedidos",
                                                   "width": 640, "height": 320})
            return forecast, plot

    forecast, plot = anyio.run(run)
    assert not forecast.is_error, forecast.text
    assert not plot.is_error, plot.text
    (table,) = forecast.tables()
    assert forecast.model_response["dates"] == ["2026-09-01", "2026-09-07"] and len(table.rows) == 7
    assert all(r["lower"] <= r["forecast"] <= r["upper"] and 140 < r["forecast"] < 260 for r in table.rows)
    png = Path(plot.model_response["screenshot_path"])
    assert png.parent == out.resolve() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
