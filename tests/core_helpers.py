"""Shared helpers of the core runtime tests: serve tests/core_fixtures/mini_connector.py."""

import os
import sys
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from analytics_acp.host import AcpClient

FIXTURES = Path(__file__).parent / "core_fixtures"
MINI = "mini_connector"
CREDS = {"type": "api_key", "api_key": "sk-test-SECRET-123456"}


def env(**extra):
    """Environment for a served fixture connector (inherits the netguard and ACP dirs)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(FIXTURES), e.get("PYTHONPATH", "")])
    e.update(extra)
    return e


def serve_command(*args):
    return [sys.executable, "-m", "analytics_acp", "serve", MINI, *args]


@asynccontextmanager
async def mini_client(**kwargs):
    async with AcpClient.stdio(serve_command(), env=env(), **kwargs) as client:
        yield client


def free_port():
    """A free loopback TCP port."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def http_mini(stderr=None, **extra_env):
    """Serve the mini connector over Streamable HTTP; yields its /mcp URL (stderr to ``stderr``, a file)."""
    import socket
    import subprocess
    import time

    port = free_port()
    proc = subprocess.Popen(serve_command("--http"), env=env(ACP_PORT=str(port), **extra_env),
                            stderr=stderr if stderr is not None else subprocess.DEVNULL)
    try:
        for _ in range(600):  # polls the port while the server imports (no fixed wait)
            if proc.poll() is not None:
                raise RuntimeError(f"the HTTP server exited with status {proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.05)
        else:
            raise TimeoutError("the HTTP server did not listen")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
