"""Start a server exactly as its acp.json says (13.2, 13.3) and run the quick probe on it.

The quick probe is what install (13.1.1 step 3) and the build's verification need: the server
starts, announces ``capabilities.experimental.acp`` and answers tools/list (the build also
requires the reserved tools autocontext/autocontext_data, 7.2/7.3).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from .manifest import PYTHON_COMMANDS, ManifestError, transport_problems

RESERVED_TOOLS = ("autocontext", "autocontext_data")
Progress = Callable[[str], None]  # receives one human line


@dataclass
class Launch:
    """How to reach one server: a stdio command (with cwd) or an HTTP URL (+ token)."""

    command: list[str] | None = None
    cwd: Path | None = None
    url: str | None = None
    token: str | None = None
    env: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """Human form for logs and evidence."""
        return self.url or " ".join(self.command or [])


def resolve_command(command: str, folder: Path) -> str:
    """13.2: a command inside the folder runs from there; ``python`` is this interpreter; else PATH."""
    if command in PYTHON_COMMANDS:
        return sys.executable
    local = Path(folder) / command
    if ("/" in command or "\\" in command) and not Path(command).is_absolute():
        return str(local.resolve())
    if local.is_file():
        return str(local.resolve())
    return shutil.which(command) or command


def stdio_launch(folder: Path, manifest: dict[str, Any], *, http_args: bool = False) -> Launch:
    """The process acp.json describes; ``http_args`` uses ``http.args`` instead of ``transport.args``."""
    transport = manifest.get("transport")
    problems = transport_problems(transport)
    if problems:
        raise ManifestError("acp.json: " + "; ".join(problems) + " (13.2).")
    assert isinstance(transport, dict)  # transport_problems accepted it
    if transport["type"] == "http":
        headers = transport.get("headers") or {}
        auth = str(headers.get("Authorization", ""))
        token = auth[7:].strip() if auth.lower().startswith("bearer ") else None
        return Launch(url=transport["url"], token=token)
    args = list(transport.get("args") or [])
    if http_args:
        http = manifest.get("http")
        if not isinstance(http, dict) or not isinstance(http.get("args"), list):
            raise ManifestError("acp.json has no http.args to start the server in HTTP mode (13.2).")
        args = list(http["args"])
    folder = Path(folder).resolve()
    return Launch(command=[resolve_command(transport["command"], folder), *map(str, args)], cwd=folder)


def free_port() -> int:
    """A free loopback TCP port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def with_port(args: list[str], port: int) -> list[str]:
    """``args`` with the value after ``--port`` replaced (or ``--port N`` appended)."""
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--port" and i + 1 < len(out):
            out[i + 1] = str(port)
            return out
        if arg.startswith("--port="):
            out[i] = f"--port={port}"
            return out
    return [*out, "--port", str(port)]


@asynccontextmanager
async def spawn_http(launch: Launch, *, env: dict[str, str] | None = None, timeout: float = 60.0) -> AsyncIterator[Launch]:
    """Start a local HTTP-mode server on a free port with a fresh ACP_HTTP_TOKEN; yield its URL launch."""
    port = free_port()
    token = secrets.token_urlsafe(16)
    command = with_port(launch.command or [], port)
    proc_env = {**os.environ, **(env or {}), "ACP_PORT": str(port), "ACP_HTTP_TOKEN": token}
    with tempfile.TemporaryFile() as errlog:
        proc = subprocess.Popen(command, cwd=launch.cwd, env=proc_env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=errlog)
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    errlog.seek(0)
                    tail = errlog.read().decode("utf-8", "replace")[-800:]
                    raise ServerFailed(f"The HTTP server exited with status {proc.returncode}. {tail}".strip())
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise ServerFailed(f"The HTTP server did not listen on port {port} within {timeout:.0f} s.") from None
                    await anyio.sleep(0.1)
            yield Launch(url=f"http://127.0.0.1:{port}/mcp", token=token)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class ServerFailed(RuntimeError):
    """The server did not start, did not announce ACP or did not answer tools/list."""


@dataclass
class ProbeResult:
    """What the quick probe saw."""

    capability: dict[str, Any] | None
    server_info: dict[str, Any]
    tools: list[str]
    plain_mcp_reason: str | None = None
    autocontext_data_error: str | None = None


def _flatten(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_flatten(e) for e in exc.exceptions)
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text


async def probe(launch: Launch, *, env: dict[str, str] | None = None, timeout: float = 60.0,
                require_reserved: bool = True, call_autocontext_data: bool = False,
                progress: Progress | None = None, progress_every: float | None = None) -> ProbeResult:
    """Connect as an ACP host, require the ACP capability and tools/list (and the reserved tools).

    ``call_autocontext_data`` also calls it without credentials (7.2: it must answer without them).
    ``progress`` receives one human line when the server starts and, with ``progress_every``, one
    every that many seconds saying what is still awaited (install's feedback on a terminal).
    """
    from analytics_acp.host import AcpClient  # imported before the clock starts (it takes a moment)

    waiting = _Waiting(launch.describe(), timeout)
    if progress is not None:
        progress(f"Starting {waiting.what} and waiting up to {timeout:g} s for it to answer initialize and tools/list.")
    failure: ServerFailed | None = None
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errlog:
        async with anyio.create_task_group() as tg:
            if progress is not None and progress_every:
                tg.start_soon(waiting.tick, progress, progress_every)
            try:
                result = await _connect(AcpClient, launch, env, timeout, call_autocontext_data, errlog, waiting)
            except ServerFailed as exc:
                failure = exc
            finally:
                tg.cancel_scope.cancel()
    if failure is not None:
        raise failure
    if result.capability is None:  # 4.3: absent or another major version; nothing of ACP was sent to it
        raise ServerFailed(f"The server {result.plain_mcp_reason} Install and check need an ACP 1.x server.")
    if require_reserved:
        missing = [t for t in RESERVED_TOOLS if t not in result.tools]
        if missing:
            raise ServerFailed(f"tools/list lacks the reserved tools {', '.join(missing)} (7.2, 7.3).")
    if result.autocontext_data_error:
        raise ServerFailed(f"autocontext_data without credentials answered an error (7.2): {result.autocontext_data_error}")
    return result


class _Waiting:
    """What the probe is waiting for (initialize, then tools/list), for progress lines and the timeout message."""

    def __init__(self, what: str, timeout: float):
        self.what, self.timeout = what, timeout
        self.step = "initialize"
        self.started = time.monotonic()

    async def tick(self, progress: Progress, every: float) -> None:
        while True:
            await anyio.sleep(every)
            elapsed = time.monotonic() - self.started
            progress(f"Still waiting for {self.step}: {elapsed:.0f} s of {self.timeout:g} s.")


async def _connect(client_cls: Any, launch: Launch, env: dict[str, str] | None, timeout: float,
                   call_autocontext_data: bool, errlog: Any, waiting: _Waiting) -> ProbeResult:
    try:
        with anyio.fail_after(timeout):
            if launch.url:
                cm = client_cls.http(launch.url, token=launch.token)
            else:
                cm = client_cls.stdio(launch.command, env={**os.environ, **(env or {})},
                                     cwd=str(launch.cwd) if launch.cwd else None, errlog=errlog)
            async with cm as client:
                waiting.step = "tools/list"
                result = ProbeResult(client.server_capability, client.server_info,
                                     [t["name"] for t in await client.list_tools()],
                                     plain_mcp_reason=client.plain_mcp_reason)
                if call_autocontext_data and result.capability is not None and "autocontext_data" in result.tools:
                    waiting.step = "autocontext_data"
                    answer = await client.call_tool("autocontext_data", {})
                    result.autocontext_data_error = answer.text[:300] if answer.is_error else None
                return result
    except TimeoutError:
        before = " (it answered initialize)" if waiting.step != "initialize" else ""
        raise ServerFailed(
            f"The server ({waiting.what}) did not answer {waiting.step} within {timeout:g} s{before}; "
            f"a slow machine may need a longer --timeout.{_tail(errlog)}"
        ) from None
    except ServerFailed:
        raise
    except BaseException as exc:  # noqa: BLE001 - a broken server can fail in any way
        if isinstance(exc, KeyboardInterrupt | SystemExit | anyio.get_cancelled_exc_class()):
            raise  # a cancelled check (its overall bound, a signal) must stop, not report a broken server
        raise ServerFailed(f"The server failed to start or answer: {_flatten(exc)}.{_tail(errlog)}") from None


def _tail(errlog) -> str:
    try:
        errlog.flush()
        errlog.seek(0)
        text = errlog.read().strip()
    except (OSError, ValueError):
        return ""
    return f" Server stderr: {text[-800:]}" if text else ""


def probe_sync(launch: Launch, **kwargs: Any) -> ProbeResult:
    """:func:`probe` from synchronous code."""
    return anyio.run(lambda: probe(launch, **kwargs))
