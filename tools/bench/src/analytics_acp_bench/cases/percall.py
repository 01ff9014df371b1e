"""Case 1: per-call overhead of an extraction of 1,000 rows (25 shown) over stdio, ACP vs bare SDK."""

from __future__ import annotations

import os
import sys
import time
from contextlib import AsyncExitStack

from anyio.from_thread import start_blocking_portal

from ..runner import Case

BARE = [sys.executable, "-m", "analytics_acp_bench.fixtures.bare_server"]
OURS = [sys.executable, "-m", "analytics_acp", "serve", "analytics_acp_bench.fixtures.rows_connector"]


class _Sessions:
    """Both servers stay up for the whole case; each round times K calls on each."""

    def __init__(self, rows: int, calls: int):
        self.rows, self.calls = rows, calls
        self.portal_cm = None

    def setup(self) -> None:
        self.portal_cm = start_blocking_portal()
        self.portal = self.portal_cm.__enter__()
        self.stack = self.portal.call(AsyncExitStack)
        self.portal.call(self.stack.__aenter__)
        self.ours = self.portal.call(self._open_ours)
        self.bare = self.portal.call(self._open_bare)

    async def _open_ours(self):
        from analytics_acp.host import AcpClient

        return await self.stack.enter_async_context(AcpClient.stdio(OURS, errlog=open(os.devnull, "w")))

    async def _open_bare(self):
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=BARE[0], args=BARE[1:], env=dict(os.environ))
        read, write = await self.stack.enter_async_context(stdio_client(params, errlog=open(os.devnull, "w")))
        session = await self.stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        return session

    async def _ours_calls(self) -> float:
        start = time.perf_counter()
        for _ in range(self.calls):
            res = await self.ours.call_tool("rows", {"n": self.rows}, meta={"row_limit": 25})
            assert res.model_response["returned_rows"] == min(25, self.rows)
        return (time.perf_counter() - start) / self.calls

    async def _bare_calls(self) -> float:
        start = time.perf_counter()
        for _ in range(self.calls):
            res = await self.bare.call_tool("rows", {"n": self.rows})
            assert res.content
        return (time.perf_counter() - start) / self.calls

    def ours_fn(self) -> float:
        return self.portal.call(self._ours_calls)

    def bare_fn(self) -> float:
        return self.portal.call(self._bare_calls)

    def teardown(self) -> None:
        try:
            self.portal.call(self.stack.__aexit__, None, None, None)
        finally:
            self.portal_cm.__exit__(None, None, None)


def cases(quick: bool) -> list[Case]:
    """The per-call case (tiny with quick)."""
    s = _Sessions(rows=50 if quick else 1000, calls=2 if quick else 20)
    return [Case(
        key="per_call", title="1. per-call overhead (1,000 rows, 25 shown, stdio)", target="<= 1.15", target_value=1.15,
        ours=s.ours_fn, baseline=s.bare_fn, setup=s.setup, teardown=s.teardown,
        ours_label="ACP extraction", baseline_label="bare mcp SDK tool (rows as text)",
    )]
