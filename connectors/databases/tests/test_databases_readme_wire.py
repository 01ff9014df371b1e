"""The core README's raw initialize + tools/call pair (issue 15.6) works as printed against
`analytics-acp serve databases`, and the same call without the capability gets the explanation."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from analytics_acp.kit.wire import INITIALIZED, StdioWire
from analytics_acp_databases.example_db import create_example_db

README = Path(__file__).resolve().parents[3] / "core" / "README.md"  # the protocol internals moved there (issue 34.5)


def _pair() -> list[dict]:
    block = README.read_text(encoding="utf-8").split("### On the wire")[1].split("```json")[1].split("```")[0]
    return [json.loads(m) for m in re.split(r"\n(?=\{)", block.strip())]


def _exchange(messages: list[dict]) -> list[dict]:
    with StdioWire([sys.executable, "-m", "analytics_acp", "serve", "databases"], stderr=None, bound_s=60) as wire:
        wire.send(messages[0])
        answers = [wire.next()]
        wire.send(INITIALIZED, messages[1])
        answers.append(wire.next())
    return answers


def test_readme_pair_as_printed(tmp_path):
    initialize, call = _pair()
    call["params"]["_meta"]["acp"]["credentials"]["path"] = str(create_example_db(tmp_path / "ventas.sqlite", days=3))
    init_answer, call_answer = _exchange([initialize, call])
    assert init_answer["result"]["capabilities"]["experimental"]["acp"]["version"] == "1.0"
    assert json.loads(call_answer["result"]["content"][0]["text"])["rows"] == [{"x": 1}]

    del initialize["params"]["capabilities"]["experimental"]  # a plain MCP client (2.2)
    _, plain = _exchange([initialize, call])
    error = json.loads(plain["result"]["content"][0]["text"])["error"]
    assert error["name"] == "ACP_CREDENTIALS_MISSING" and "did not declare capabilities.experimental.acp" in error["message"]
