"""Shared helpers of the core runtime tests: serve tests/core_fixtures/mini_connector.py."""

import os
import sys
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from analytics_acp.host import AcpClient

FIXTURES = Path(__file__).parent / "core_fixtures"
MINI = "mini_connector"
CREDS = {"type": "api_key", "api_key": "sk-test-SECRET-123456"}


class InstalledEntryPoints:
    """What ``importlib.metadata.entry_points()`` returns, reduced to ``select(group=)``: patched over
    ``analytics_acp.plugins.entry_points`` to install fake entry points (each with ``name``, ``group``, ``load``)."""

    def __init__(self, *entry_points):
        self.entry_points = entry_points

    def select(self, group):
        return [ep for ep in self.entry_points if ep.group == group]


def env(**extra):
    """Environment for a served fixture connector (inherits the netguard and ACP dirs)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(FIXTURES), e.get("PYTHONPATH", "")])
    e.update(extra)
    return e


def serve_command(*args, module=MINI):
    return [sys.executable, "-m", "analytics_acp", "serve", module, *args]


@asynccontextmanager
async def mini_client(**kwargs):
    async with AcpClient.stdio(serve_command(), env=env(), **kwargs) as client:
        yield client


@asynccontextmanager
async def mini_in_process(**kwargs):
    """The mini connector's ``AcpServer`` served in this process over memory streams, as an ``AcpClient``.

    For tests of what the runtime answers (acp/configure, _meta, results, errors), not of the process or
    its stdio framing: those keep ``mini_client``. One server per connection, like one process per
    ``mini_client``, so nothing (configure state, first-call memory) carries over between connections.
    Saves a Python start (about 1 CPU-s, most of it importing the mcp SDK) per connection.
    """
    import anyio
    from analytics_acp.plugins import load_connector
    from analytics_acp.runtime import ServeState, build_server
    from mcp.server.runner import serve_loop
    from mcp.shared.memory import create_client_server_memory_streams

    if str(FIXTURES) not in sys.path:  # what env() puts on the served process's PYTHONPATH
        sys.path.insert(0, str(FIXTURES))
    acp = build_server(load_connector(MINI))
    try:
        async with create_client_server_memory_streams() as ((client_read, client_write), (server_read, server_write)):
            async with anyio.create_task_group() as tg:
                # ServeState(): no deferred _meta, the path the SDK's own stdio transport serves (runtime._serve_in_place).
                tg.start_soon(lambda: serve_loop(acp.server, server_read, server_write, lifespan_state=ServeState()))
                async with AcpClient._session(client_read, client_write, kwargs.pop("capability", None),
                                              kwargs.pop("resolver", None), None, kwargs.pop("read_timeout", None)) as client:
                    assert not kwargs, f"mini_in_process takes capability, resolver, read_timeout; not {sorted(kwargs)}"
                    yield client
                tg.cancel_scope.cancel()  # the client is gone: nothing more can reach the server
    finally:
        acp.shutdown()


def free_port():
    """A free loopback TCP port."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def http_mini(stderr=None, **extra_env):
    """Serve the mini connector over Streamable HTTP; yields its /mcp URL (stderr to ``stderr``, a file)."""
    with http_mini_process(stderr, **extra_env) as (url, _pid):
        yield url


@contextmanager
def http_mini_process(stderr=None, module=MINI, **extra_env):
    """``http_mini`` that also yields the server's pid (a test that watches its CPU): ``(url, pid)``; ``module``
    serves another fixture connector."""
    import socket
    import subprocess
    import time

    port = free_port()
    proc = subprocess.Popen(serve_command("--http", module=module), env=env(ACP_PORT=str(port), **extra_env),
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
        yield f"http://127.0.0.1:{port}/mcp", proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=10)


HTTP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def open_http_session(http, url, **acp):
    """initialize and notifications/initialized over Streamable HTTP with a plain httpx client (an ACP host with
    ``stores_system_data`` and the capability fields ``acp``); the headers of the session's later requests."""
    from analytics_acp.kit.wire import initialize_request

    init = initialize_request(0, acp={"stores_system_data": True, **acp})
    answer = http.post(url, json=init, headers=HTTP_HEADERS)
    assert answer.status_code == 200
    session = {**HTTP_HEADERS, "Mcp-Session-Id": answer.headers["mcp-session-id"], "Mcp-Protocol-Version": "2025-11-25"}
    assert http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session).status_code == 202
    return session


def sse_messages(lines):
    """The JSON-RPC messages of an SSE response's lines, as they come."""
    import json

    for line in lines:
        if line.startswith("data:"):
            yield json.loads(line[5:])
