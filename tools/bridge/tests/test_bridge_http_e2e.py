"""An acp.json with an http transport (13.2): the bridge connects to a running Streamable HTTP ACP
server with its bearer token, and large tables arrive through the server's one-time URLs (8.5)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server():
    """The fixture connector served over Streamable HTTP with a bearer token."""
    port, token = free_port(), "http-token-1234567"
    script = Path(__file__).resolve().parent / "fixture_acp" / "serve_fixture.py"
    proc = subprocess.Popen([sys.executable, str(script), "--http", "--port", str(port)],
                            env={**os.environ, "ACP_HTTP_TOKEN": token}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(proc.stderr.read().decode())
            time.sleep(0.2)
    yield f"http://127.0.0.1:{port}/mcp", token
    proc.terminate()
    proc.wait(timeout=20)


async def test_bridge_http_transport(tmp_path, http_server, bridge, write_sources):
    url, token = http_server
    root, project = tmp_path / "root", tmp_path / "proj"
    (root / "acps" / "remote").mkdir(parents=True)
    project.mkdir()
    (root / "acps" / "remote" / "acp.json").write_text(json.dumps({
        "acp_version": "1.0", "id": "remote", "name": "Remote fixture", "version": "0.1.0", "description": "HTTP.",
        "transport": {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}},
    }), encoding="utf-8")
    write_sources(root / "sources.json", {"sources": [
        {"id": "rem", "acp": "remote", "label": "Remote", "credentials": {"account": "acct-r", "token": "tok-remote-secret"}},
    ]})
    async with bridge(project, root) as client:
        tools = await client.tools()
        assert tools["rem__numbers"]["description"].startswith("[Remote · Remote fixture]")
        is_error, who, _ = await client.call_json("rem__whoami")
        assert not is_error and who["account"] == "acct-r"
        is_error, response, notes = await client.call_json("rem__numbers", {"count": 40000})
        assert not is_error and response["total_rows"] == 40000
    [csv_file] = (project / "acp-data").glob("rem_numbers_*.csv")
    lines = csv_file.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 40001 and lines[-1] == f"39999,{39999 * 39999}"
    assert f"«{csv_file.stem}»" in notes[0]
    assert "tok-remote-secret" not in "\n".join(client.received)
