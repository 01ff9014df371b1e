"""The README's raw initialize + tools/call pair (issue 15.6) works as printed against
`analytics-acp serve databases`, and the same call without the capability gets the explanation."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from analytics_acp_databases.example_db import create_example_db

README = Path(__file__).resolve().parents[3] / "README.md"


def _pair() -> list[dict]:
    block = README.read_text(encoding="utf-8").split("### On the wire")[1].split("```json")[1].split("```")[0]
    return [json.loads(m) for m in re.split(r"\n(?=\{)", block.strip())]


def _exchange(messages: list[dict]) -> list[dict]:
    proc = subprocess.Popen([sys.executable, "-m", "analytics_acp", "serve", "databases"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        proc.stdin.write(json.dumps(messages[0]) + "\n")
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline())]
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        proc.stdin.write(json.dumps(messages[1]) + "\n")
        proc.stdin.flush()
        answers.append(json.loads(proc.stdout.readline()))
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
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
