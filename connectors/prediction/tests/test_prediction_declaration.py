"""Declaration: no resource, empty setup, table_ref arguments, lean start-up, skill and icon (6.1, 6.2, 8.8)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import yaml
from analytics_acp import NO_RESOURCE
from analytics_acp.calls import ConnectorRuntime
from analytics_acp.plugins import available_connectors, load_connector

PACKAGE = Path(__file__).resolve().parents[1]


def test_entry_point_and_declaration():
    assert available_connectors()["prediction"] == "analytics_acp_prediction.plugin"
    loaded = load_connector("prediction")
    info = loaded.info
    assert info.id == "prediction" and info.package_dir == PACKAGE
    # 6.1: a server whose tools only read host tables describes resource_id as unused.
    assert info.resource_id is NO_RESOURCE
    assert info.resource_id.to_json()["format"] == "none" and info.resource_id.examples == []
    # The setup (alta) must not ask for anything.
    assert info.credentials_schema == {"type": "object", "properties": {}}
    assert info.config_schema is None
    assert info.cost.model == "free" and info.defaults.cost_limit_usd == 0
    assert set(loaded.tools) == {"forecast", "plot"}
    assert loaded.extraction_tools == ["forecast"]
    assert loaded.tools["plot"].kind == "info"


def _published(loaded):
    """Each tool's inputSchema as the server publishes it (resource_id injected where a tool needs one)."""
    state = ConnectorRuntime(loaded).state
    return {name: state.published_schema(tool) for name, tool in loaded.tools.items()}


def test_tools_need_no_resource_and_mark_table_ref():
    loaded = load_connector("prediction")
    schemas = _published(loaded)
    for tool in loaded.tools.values():
        assert tool.needs_resource is False and tool.needs_credentials is False
        props = schemas[tool.name]["properties"]
        assert "resource_id" not in props  # 6.2, 8.8.2
        assert props["table_ref"]["x-acp-input"] == "table_ref"
        assert "not rows, not SQL" in props["table_ref"]["description"]
        assert "table_ref" in schemas[tool.name]["required"]
    forecast = schemas["forecast"]
    assert forecast["required"] == ["table_ref", "time_column", "value_column", "horizon"]
    assert {"holt_winters", "ets", "sarimax", "arima", "theta", "seasonal_naive", "auto"} <= set(
        forecast["properties"]["method"]["enum"]
    )


def test_published_text_is_english_json():
    loaded = load_connector("prediction")
    schemas = _published(loaded)
    text = json.dumps([loaded.info.description, loaded.info.instructions] +
                      [[t.description, schemas[t.name]] for t in loaded.tools.values()])
    for word in (" los ", " las ", " para ", " tabla", "previsión", " datos "):
        assert word not in text.lower()


def test_server_start_does_not_import_heavy_libraries():
    code = (
        "import sys, json\n"
        "import analytics_acp_prediction.plugin\n"
        "from analytics_acp.plugins import load_connector\n"
        "load_connector('prediction')\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'statsmodels', 'matplotlib', 'pandas', 'scipy', 'numpy', 'PIL'})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_skill_and_icon():
    skills = [p for p in (PACKAGE / "skills").iterdir() if p.is_dir()]
    assert skills
    for folder in skills:
        text = (folder / "SKILL.md").read_text(encoding="utf-8")
        front = yaml.safe_load(text.split("---")[1])
        assert front["name"] == folder.name
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", front["name"])
        assert len(front["description"]) > 40
        assert "table_ref" in text and "backtest" in text
    icon = PACKAGE / load_connector("prediction").info.icon
    assert icon.is_file() and icon.stat().st_size < 256 * 1024
    root = ElementTree.parse(icon).getroot()  # well-formed SVG, not only a file named .svg
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("viewBox")
