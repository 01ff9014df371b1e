"""The README's smallest connector is real code: loaded as a plugin module it publishes its tool, declared
once on its ConnectorInfo (issue 27.6), and a call answers with its row."""

from __future__ import annotations

import re
import types
from pathlib import Path

import anyio
from analytics_acp.calls import ConnectorRuntime
from analytics_acp.context import ClientInfo
from analytics_acp.effective import SessionConfig
from analytics_acp.plugins import load_connector

README = Path(__file__).resolve().parents[1] / "core" / "README.md"


def test_the_smallest_connector_of_the_readme_loads_and_answers():
    text = README.read_text(encoding="utf-8")
    code = re.search(r"The smallest connector, in one module:\n\n```python\n(.*?)```", text, re.S).group(1)
    module = types.ModuleType("readme_hello")
    exec(compile(code, "README.md", "exec"), module.__dict__)
    loaded = load_connector(module, extensions=False)
    assert list(loaded.tools) == ["greet"] and loaded.tool_owner["greet"] == "connector:hello"
    result = anyio.run(lambda: ConnectorRuntime(loaded).call(
        "greet", {"resource_id": "world"}, {}, SessionConfig(), ClientInfo(acp=True, version="1.0", stores_system_data=True)))
    assert result["isError"] is False and '"hello":"world"' in result["content"][0]["text"].replace(" ", "")
