"""Stopping an idle server and the private temp folder (issue 15.2, README "Stopping"; 8.5, 13.3).

Without ACP_TMP_DIR a server writes its table files into a private 0700 folder of its own; that
folder (the user's data) is removed when the process ends: on Ctrl-C / SIGTERM, idle, and on a
normal end of the session (stdin closed). Real processes, real signals; every wait is bounded.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from core_helpers import CREDS, env, serve_command

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "clientInfo": {"name": "t", "version": "1"},
    "capabilities": {"experimental": {"acp": {"version": "1.0"}}}}}


def _serve(tmp_path: Path) -> subprocess.Popen:
    own = env(TMPDIR=str(tmp_path))
    own.pop("ACP_TMP_DIR", None)  # the private folder is what is under test
    return subprocess.Popen(serve_command(), env=own, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)


def _send(proc: subprocess.Popen, message: dict) -> None:
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()


def _start(proc: subprocess.Popen) -> None:
    _send(proc, INIT)
    assert json.loads(proc.stdout.readline())["id"] == 1
    _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})


def _extract_to_file(proc: subprocess.Popen) -> Path:
    """One extract whose table goes to a file (inline_max_bytes 0); the file's path."""
    _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "extract", "arguments": {"n": 50, "resource_id": "acc1"},
        "_meta": {"acp": {"credentials": CREDS, "inline_max_bytes": 0, "autocontext_delivered": True}}}})
    answer = json.loads(proc.stdout.readline())
    system_data = answer["result"]["_meta"]["acp"]["system_data"]
    assert system_data["format"] == "file"
    path = Path(unquote(urlparse(system_data["table_uri"]).path))
    assert path.is_file()
    return path


def _private_folders(tmp_path: Path) -> list[Path]:
    return sorted(tmp_path.glob("analytics-acp-*"))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_idle_server_stops_on_the_signal_and_removes_its_private_folder(tmp_path, signum):
    proc = _serve(tmp_path)
    try:
        _start(proc)
        table = _extract_to_file(proc)
        assert table.parent in _private_folders(tmp_path)  # written into the private folder
        proc.send_signal(signum)  # idle: the call has answered
        assert proc.wait(timeout=30) == 128 + signum
        assert _private_folders(tmp_path) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_idle_server_before_any_call_stops_on_sigint(tmp_path):
    proc = _serve(tmp_path)
    try:
        _start(proc)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 128 + signal.SIGINT
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_end_of_session_removes_the_private_folder(tmp_path):
    proc = _serve(tmp_path)
    try:
        _start(proc)
        table = _extract_to_file(proc)
        assert json.loads(table.read_text())[0]["n"] == 0  # readable while the session lasts (8.5)
        proc.stdin.close()  # the host ends the session
        assert proc.wait(timeout=30) == 0
        assert _private_folders(tmp_path) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_idle_bridge_stops_on_sigint(tmp_path, monkeypatch):
    project = tmp_path / "p"
    project.mkdir()
    (project / "sources.json").write_text(json.dumps({"sources": []}))
    proc = subprocess.Popen([sys.executable, "-m", "analytics_acp_bridge", "--project", str(project)], cwd=project,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=env(TMPDIR=str(tmp_path)))
    try:
        _send(proc, {**INIT, "params": {**INIT["params"], "capabilities": {}}})
        assert json.loads(proc.stdout.readline())["id"] == 1
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert json.loads(proc.stdout.readline())["id"] == 2  # up and idle
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 128 + signal.SIGINT
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
