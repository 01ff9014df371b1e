"""plot: a PNG of the requested size under ACP_TMP_DIR, returned as screenshot_path (8.10)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from analytics_acp.declarations import Info
from analytics_acp.errors import HostTablesUnsupported, InvalidArguments
from analytics_acp_prediction.arguments import ForecastArguments, PlotArguments
from analytics_acp_prediction.forecast_tool import run as forecast
from analytics_acp_prediction.plot_tool import run as plot
from PIL import Image


def _png(path: str) -> Image.Image:
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = Image.open(path)
    image.verify()  # a truncated or corrupt file fails here
    return Image.open(path)


@pytest.mark.parametrize(("width", "height"), [(1000, 600), (640, 480), (1234, 567), (333, 222)])
async def test_chart_is_a_valid_png_of_the_requested_size(make_ctx, sales_table, width, height):
    ctx = make_ctx({sales_table.ref: sales_table}, tool="plot")
    info = await plot(PlotArguments.parse({"table_ref": sales_table.ref, "x": "fecha", "y": "pedidos", "width": width, "height": height}), ctx)
    assert isinstance(info, Info)
    path = info.data["screenshot_path"]
    assert os.path.isabs(path) and Path(path).parent == ctx.tmp_dir.resolve()
    image = _png(path)
    assert image.format == "PNG" and image.size == (width, height)
    assert info.data["width"] == width and info.data["height"] == height
    assert info.data["bytes"] == Path(path).stat().st_size
    assert info.data["points"] == 90 and info.data["series"] == ["pedidos"]
    # Written atomically: no temp file is left beside the chart; the image bytes are not in the response.
    assert [p.name for p in Path(path).parent.iterdir()] == [Path(path).name]
    assert not any(isinstance(v, bytes) for v in info.data.values())


async def test_default_dir_is_acp_tmp_dir_and_default_size(make_ctx, sales_table, monkeypatch, tmp_path):
    ctx = make_ctx({sales_table.ref: sales_table}, tool="plot")
    ctx.tmp_dir = None
    monkeypatch.setenv("ACP_TMP_DIR", str(tmp_path / "from-env"))
    info = await plot(PlotArguments.parse({"table_ref": sales_table.ref, "x": "fecha", "y": ["pedidos"]}), ctx)
    assert Path(info.data["screenshot_path"]).parent == (tmp_path / "from-env").resolve()
    assert _png(info.data["screenshot_path"]).size == (1000, 600)
    package = Path(__file__).resolve().parents[1]
    assert package not in Path(info.data["screenshot_path"]).parents


async def test_forecast_with_band_and_history_overlay(make_ctx, sales_table):
    ctx = make_ctx({sales_table.ref: sales_table})
    result = await forecast(ForecastArguments.parse({"table_ref": sales_table.ref, "time_column": "fecha", "value_column": "pedidos",
                             "horizon": 14, "method": "ets"}), ctx)
    from analytics_acp.context import HostTable

    ctx.table_reader.tables["fc"] = HostTable("fc", [h.to_json() for h in result.headers], result.rows)
    band = await plot(PlotArguments.parse({"table_ref": "fc", "x": "fecha", "y": "forecast", "lower": "lower", "upper": "upper",
                       "title": "Forecast"}), ctx)
    assert band.data["title"] == "Forecast" and _png(band.data["screenshot_path"]).size == (1000, 600)
    both = await plot(PlotArguments.parse({"table_ref": sales_table.ref, "x": "fecha", "y": "pedidos", "forecast_ref": "fc",
                       "width": 800, "height": 400}), ctx)
    assert both.data["series"] == ["pedidos", "forecast"]
    assert ctx.table_reader.requests[-2:] == [sales_table.ref, "fc"]
    assert _png(both.data["screenshot_path"]).size == (800, 400)


async def test_bar_scatter_labels_and_groups(make_ctx, tabledata):
    from analytics_acp.context import HostTable

    table = HostTable("cats", [{"name": "canal", "type": "string"}, {"name": "a", "type": "number"},
                               {"name": "b", "type": "integer"}, {"name": "g", "type": "string"}],
                      [{"canal": c, "a": i * 1.5, "b": i, "g": "x" if i % 2 else "y"} for i, c in enumerate("pqrstu")])
    ctx = make_ctx({"cats": table}, tool="plot")
    bar = await plot(PlotArguments.parse({"table_ref": "cats", "x": "canal", "y": ["a", "b"], "kind": "bar"}), ctx)
    assert bar.data["series"] == ["a", "b"] and _png(bar.data["screenshot_path"]).size == (1000, 600)
    scatter = await plot(PlotArguments.parse({"table_ref": "cats", "x": "b", "y": "a", "kind": "scatter", "group_by": "g"}), ctx)
    assert scatter.data["series"] == ["a (x)", "a (y)"]


async def test_plot_errors_list_usable_columns(make_ctx, sales_table):
    ctx = make_ctx({sales_table.ref: sales_table}, tool="plot")
    ref = sales_table.ref
    with pytest.raises(InvalidArguments, match=r"y: column 'fecha' is not numeric. Numeric columns of .*: pedidos\."):
        await plot(PlotArguments.parse({"table_ref": ref, "x": "fecha", "y": ["pedidos", "fecha"]}), ctx)
    with pytest.raises(InvalidArguments, match=r"x: column 'day' is not in table .* Columns: fecha, pedidos\."):
        await plot(PlotArguments.parse({"table_ref": ref, "x": "day", "y": "pedidos"}), ctx)
    with pytest.raises(InvalidArguments, match="^lower and upper go together"):  # the model's cross-field rule
        PlotArguments.parse({"table_ref": ref, "x": "fecha", "y": "pedidos", "lower": "pedidos"})
    with pytest.raises(InvalidArguments, match=r"^Invalid width: must be at least 200\."):
        PlotArguments.parse({"table_ref": ref, "x": "fecha", "y": "pedidos", "width": 10})
    with pytest.raises(InvalidArguments, match=r"^Invalid y: must name at least one column"):
        PlotArguments.parse({"table_ref": ref, "x": "fecha", "y": []})
    with pytest.raises(InvalidArguments, match=r"^Invalid y: must be of type string or array\."):
        PlotArguments.parse({"table_ref": ref, "x": "fecha", "y": 3})
    with pytest.raises(InvalidArguments, match="has no 'forecast' column"):
        await plot(PlotArguments.parse({"table_ref": ref, "x": "fecha", "y": "pedidos", "forecast_ref": ref}), ctx)
    no_host = make_ctx({ref: sales_table}, host_tables=False, tool="plot")
    with pytest.raises(HostTablesUnsupported):
        await plot(PlotArguments.parse({"table_ref": ref, "x": "fecha", "y": "pedidos"}), no_host)
