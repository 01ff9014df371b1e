"""One running ACP server per ACP id, shared by every source of that ACP (16.4).

Credentials travel per call in ``_meta.acp`` (5.2), so one process serves several accounts.
A server that dies is noticed on the call that fails (that call gets a clear error) and is
started again on the next call.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.abc
from analytics_acp.host import AcpClient, ProtocolError, ToolResult
from analytics_acp.host.client import ProgressFn
from mcp_types import CONNECTION_CLOSED

from .discovery import AcpLaunch

log = logging.getLogger("analytics_acp_bridge")
Resolver = Callable[[str, "str | None"], Awaitable[dict[str, Any]]]
CAPABILITY = {
    "version": "1.0",
    "stores_system_data": True,
    "multi_table": True,
    "host_tables": True,
    "autocontext_delivery": "on_first_call",
}


# A server that never answers initialize must not hang the bridge (and the MCP client) forever.
START_TIMEOUT_S = float(os.environ.get("ACP_BRIDGE_START_TIMEOUT", "120"))


class ServerUnavailable(Exception):
    """The ACP server could not be started, or stopped during a call."""


class AcpProcess:
    """A lazily started, restartable connection to one ACP server."""

    def __init__(
        self, launch: AcpLaunch, resolver: Resolver, tmp_dir: Path, cache_dir: Path | None, errlog: TextIO | None = None
    ):
        self.launch = launch
        self.errlog = errlog  # where the server's stderr goes (the bridge's scrubbing pipe)
        self.resolver = resolver
        self.tmp_dir = tmp_dir
        self.cache_dir = cache_dir
        self.client: AcpClient | None = None
        self.tools: list[dict[str, Any]] = []
        self.error: str | None = None
        self.starts = 0
        self.calls = 0  # calls in flight: a retired server is stopped once they have answered (aclose_when_idle)
        self._idle = anyio.Event()
        self._idle.set()
        self.retired = False  # no longer used after a reload: never started again
        self._stop: anyio.Event | None = None
        self._lock = anyio.Lock()
        self._tg: anyio.abc.TaskGroup | None = None

    @property
    def capability(self) -> dict[str, Any]:
        """The server's experimental.acp capability ({} for a plain MCP server)."""
        return (self.client.server_capability if self.client else None) or {}

    @property
    def plain_mcp_reason(self) -> str | None:
        """Why the running server is used as plain MCP (4.3: no experimental.acp, or another major), else None."""
        return self.client.plain_mcp_reason if self.client else None

    @property
    def server_info(self) -> dict[str, Any]:
        """serverInfo of the running server."""
        return self.client.server_info if self.client else {}

    def bind(self, tg: anyio.abc.TaskGroup) -> None:
        """The task group that owns the connection tasks (the bridge's lifetime)."""
        self._tg = tg

    def _env(self) -> dict[str, str]:
        # 13.1: runtime data never goes into the server folder; the host says where (13.3).
        env = {"ACP_TMP_DIR": str(self.tmp_dir)}
        if self.cache_dir is not None:
            env["ACP_CACHE_DIR"] = str(self.cache_dir)
        return env

    def _open(self):
        if self.launch.transport == "http":
            return AcpClient.http(self.launch.url or "", token=self.launch.token, capability=CAPABILITY, resolver=self.resolver)
        return AcpClient.stdio(
            self.launch.command,
            env=self._env(),
            cwd=str(self.launch.cwd) if self.launch.cwd else None,
            capability=CAPABILITY,
            resolver=self.resolver,
            errlog=self.errlog or sys.stderr,
        )

    async def _run(self, *, task_status: anyio.abc.TaskStatus = anyio.TASK_STATUS_IGNORED) -> None:
        stop = anyio.Event()
        started = False
        try:
            async with self._open() as client:
                tools = await client.list_tools()
                self.client, self.tools, self.error, self._stop = client, tools, None, stop
                started = True
                task_status.started()
                await stop.wait()
        except Exception as exc:
            if not started:
                raise
            log.warning("ACP server %s ended: %s", self.launch.id, type(exc).__name__)
        finally:
            if self._stop is stop:
                self.client, self._stop = None, None

    async def ensure(self) -> AcpClient:
        """The running client, starting the server if it is not running."""
        async with self._lock:
            if self.client is not None:
                return self.client
            if self.launch.error:
                raise ServerUnavailable(self.launch.error)
            if self.retired:
                raise ServerUnavailable(f"The {self.launch.id} ACP server was stopped: sources.json changed. Retry the call.")
            if self._tg is None:
                raise ServerUnavailable("The bridge is not running.")
            self.tmp_dir.mkdir(parents=True, exist_ok=True)
            try:
                with anyio.fail_after(START_TIMEOUT_S):
                    await self._tg.start(self._run)
            except TimeoutError:
                self.error = f"The {self.launch.id} ACP server did not answer initialize within {START_TIMEOUT_S:g} s."
                raise ServerUnavailable(self.error) from None
            except Exception as exc:
                self.error = _describe_start_failure(self.launch, exc)
                raise ServerUnavailable(self.error) from None
            self.starts += 1
            if self.client is None:
                raise ServerUnavailable(f"The {self.launch.id} server stopped right after starting.")
            return self.client

    async def call(self, name: str, arguments: dict[str, Any], meta: dict[str, Any],
                   on_progress: ProgressFn | None = None) -> ToolResult:
        """tools/call on the server; a dead connection raises ServerUnavailable and is dropped.

        ``on_progress`` receives the server's progress for this call; cancelling the awaiting task
        cancels the call at the server (``notifications/cancelled``, sent by the SDK's dispatcher).

        A server used as plain MCP (4.3) gets the arguments only: ``meta`` carries the source's
        credentials and limits, which only an ACP 1.x server may receive.
        """
        self.calls += 1
        self._idle = anyio.Event() if self.calls == 1 else self._idle
        try:
            client = await self.ensure()
            try:
                return await client.call_tool(name, arguments, meta=None if client.plain_mcp_reason else meta,
                                              on_progress=on_progress)
            except ProtocolError as exc:
                if exc.code != CONNECTION_CLOSED:
                    raise
                failure: Exception = exc
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError) as exc:
                failure = exc
        finally:
            self.calls -= 1
            if not self.calls:
                self._idle.set()
        self.restart_later()
        raise ServerUnavailable(
            f"The {self.launch.id} ACP server stopped during this call ({type(failure).__name__}). "
            "It will be started again on the next call: retry the call."
        )

    def restart_later(self) -> None:
        """Drop the current connection; the next call starts a fresh process."""
        stop = self._stop
        self.client, self._stop = None, None
        if stop is not None:
            stop.set()

    async def aclose(self) -> None:
        """Stop the server."""
        self.restart_later()

    async def aclose_when_idle(self) -> None:
        """Stop the server once the calls in flight on it have answered (or been cancelled by their clients):
        a reload that no longer needs this server lets them finish (issue 34.3)."""
        self.retired = True
        await self._idle.wait()
        await self.aclose()


def _describe_start_failure(launch: AcpLaunch, exc: BaseException) -> str:
    leaf = exc
    while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
        leaf = leaf.exceptions[0]
    what = " ".join(launch.command) if launch.transport == "stdio" else launch.url
    detail = str(leaf) or type(leaf).__name__
    if isinstance(leaf, FileNotFoundError):
        detail = f"command not found: {launch.command[0] if launch.command else '?'}"
    return f"The {launch.id} ACP server did not start ({what}): {detail}"[:600]
