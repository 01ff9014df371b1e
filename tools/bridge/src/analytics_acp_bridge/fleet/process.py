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
from analytics_acp.call_cap import BUSY_CODE, BUSY_NAME, CapSettingError, CapSettings, settings_from_env
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


RETRY_PAUSE_S = 0.1  # after a SERVER_BUSY refusal, before the call waits for a place again


class CallPlaces:
    """The bridge's own bound on its calls in progress at one ACP server (issue 38.6).

    An ACP server runs at most ACP_MAX_CALLS_IN_PROGRESS calls per connection (core call_cap.py); while it waits for
    the bridge's answer to one of its acp/read_table requests it holds as many more and refuses the rest (-32051
    SERVER_BUSY: nothing ran), and over HTTP it refuses what waits too long. A refusal that reached the model would
    ask it to do what only the bridge can. So the bridge, that connection's only client, keeps its calls one below
    the server's cap (the place left for tools/list and set-up checks): the cap its environment gives the ACP
    processes it starts, or the lower one a refusal states (an ACP set up elsewhere); a refused call waits here for
    a place and runs. The wait is bounded by ACP_BUSY_WAIT_S (default 30 s), then the model reads why.
    """

    def __init__(self, settings: CapSettings):
        self.wait_s = settings.busy_wait_s
        self._limiter = anyio.CapacityLimiter(max(1, settings.max_calls - 1))

    @property
    def limit(self) -> int:
        """Calls this bridge runs at once on the server."""
        return int(self._limiter.total_tokens)

    async def run(self, acp_id: str, call: Callable[[], Awaitable[ToolResult]]) -> ToolResult:
        """``call()`` once it has a place; again after a SERVER_BUSY refusal, until ``wait_s`` has passed."""
        deadline = anyio.current_time() + self.wait_s
        while True:
            place = object()
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())) as waiting:
                await self._limiter.acquire_on_behalf_of(place)
            if waiting.cancelled_caught:
                raise self._busy(acp_id)
            try:
                return await call()
            except ProtocolError as exc:
                if exc.code != BUSY_CODE:
                    raise
                self._follow(exc.data)  # nothing ran: the call waits for a place again
            finally:
                self._limiter.release_on_behalf_of(place)
            if anyio.current_time() + RETRY_PAUSE_S >= deadline:
                raise self._busy(acp_id)
            await anyio.sleep(RETRY_PAUSE_S)

    def _follow(self, data: Any) -> None:
        """A refusal states the server's cap: stay one below it from now on."""
        stated = data.get("max_calls_in_progress") if isinstance(data, dict) else None
        if isinstance(stated, int) and not isinstance(stated, bool) and max(1, stated - 1) < self.limit:
            log.warning("an ACP server refused a call at its cap of %d calls in progress: the bridge now runs at most "
                        "%d at once there", stated, max(1, stated - 1))
            self._limiter.total_tokens = max(1, stated - 1)

    def _busy(self, acp_id: str) -> ProtocolError:
        return ProtocolError(BUSY_CODE, (
            f"The {acp_id} ACP server is busy: none of the bridge's {self.limit} call(s) in progress there finished "
            f"within {self.wait_s:g} s, so this call did not run. Retry it in a moment, or make fewer calls at once."),
            {"name": BUSY_NAME, "max_calls_in_progress": self.limit})


def _cap_settings() -> CapSettings:
    """The calls cap the bridge's environment gives the ACP servers it starts (the defaults when it is unusable:
    the bridge's own stdio says so when it starts)."""
    try:
        return settings_from_env()
    except CapSettingError:
        return CapSettings()


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
        self.places = CallPlaces(_cap_settings())  # below the server's cap on calls in progress
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
                return await self.places.run(self.launch.id, lambda: client.call_tool(
                    name, arguments, meta=None if client.plain_mcp_reason else meta, on_progress=on_progress))
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
