"""Stopping an idle server and the private temp folder (issue 15.2, README "Stopping"; 8.5, 13.3).

Without ACP_TMP_DIR a server writes its table files into a private 0700 folder of its own; that
folder (the user's data) is removed when the process ends: on Ctrl-C / SIGTERM, idle, and on a
normal end of the session (stdin closed). Real processes, real signals; every wait is bounded.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from analytics_acp.kit.wire import StdioWire, tool_call
from core_helpers import CREDS, env, serve_command


def _serve(tmp_path: Path) -> StdioWire:
    own = env(TMPDIR=str(tmp_path))
    own.pop("ACP_TMP_DIR", None)  # the private folder is what is under test
    return StdioWire(serve_command(), env=own)


def _extract_to_file(wire: StdioWire) -> Path:
    """One extract whose table goes to a file (inline_max_bytes 0); the file's path."""
    wire.send(tool_call(2, "extract", {"n": 50, "resource_id": "acc1"},
                        {"acp": {"credentials": CREDS, "inline_max_bytes": 0, "autocontext_delivered": True}}))
    answer = wire.answer(2)
    system_data = answer["result"]["_meta"]["acp"]["system_data"]
    assert system_data["format"] == "file"
    path = Path(unquote(urlparse(system_data["table_uri"]).path))
    assert path.is_file()
    return path


def _private_folders(tmp_path: Path) -> list[Path]:
    return sorted(tmp_path.glob("analytics-acp-*"))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_idle_server_stops_on_the_signal_and_removes_its_private_folder(tmp_path, signum):
    wire = _serve(tmp_path)
    proc = wire.proc
    try:
        wire.initialize()
        table = _extract_to_file(wire)
        assert table.parent in _private_folders(tmp_path)  # written into the private folder
        proc.send_signal(signum)  # idle: the call has answered
        assert proc.wait(timeout=30) == 128 + signum
        assert _private_folders(tmp_path) == []
    finally:
        wire.kill()


def test_idle_server_before_any_call_stops_on_sigint(tmp_path):
    wire = _serve(tmp_path)
    proc = wire.proc
    try:
        wire.initialize()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 128 + signal.SIGINT
    finally:
        wire.kill()


def test_end_of_session_removes_the_private_folder(tmp_path):
    wire = _serve(tmp_path)
    proc = wire.proc
    try:
        wire.initialize()
        table = _extract_to_file(wire)
        assert json.loads(table.read_text())[0]["n"] == 0  # readable while the session lasts (8.5)
        proc.stdin.close()  # the host ends the session
        assert proc.wait(timeout=30) == 0
        assert _private_folders(tmp_path) == []
    finally:
        wire.kill()


def test_idle_bridge_stops_on_sigint(tmp_path, monkeypatch):
    project = tmp_path / "p"
    project.mkdir()
    (project / "sources.json").write_text(json.dumps({"sources": []}))
    wire = StdioWire([sys.executable, "-m", "analytics_acp_bridge", "--project", str(project)], cwd=str(project),
                     env=env(TMPDIR=str(tmp_path)))
    proc = wire.proc
    try:
        wire.initialize(plain=True)
        wire.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert wire.next()["id"] == 2  # up and idle
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 128 + signal.SIGINT
    finally:
        wire.kill()
