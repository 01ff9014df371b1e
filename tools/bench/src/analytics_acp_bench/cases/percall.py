"""Case 1: per-call overhead of an extraction of 1,000 rows (25 shown) over stdio, ACP vs bare SDK.

Two comparisons in the same run (issue 39.2): against the bare SDK tool (rows as one text string,
nothing checked) and against its floor, the bare tool plus the steps the protocol cannot skip
(fixtures/floor_server.py: typed values, the table as objects for the host, a 25-row sample).
"""

from __future__ import annotations

import os
import sys
import time

import orjson

from ..fixtures.stdio import StdioHost, sdk_session
from ..runner import Case

BARE = [sys.executable, "-m", "analytics_acp_bench.fixtures.bare_server"]
FLOOR = [sys.executable, "-m", "analytics_acp_bench.fixtures.floor_server"]
OURS = [sys.executable, "-m", "analytics_acp", "serve", "analytics_acp_bench.fixtures.rows_connector"]


class _Sessions:
    """Both servers stay up for the whole case; each round times K calls on each."""

    def __init__(self, rows: int, calls: int):
        self.rows, self.calls = rows, calls
        self.host: StdioHost | None = None
        self.facts: dict = {}

    def setup(self) -> None:
        self.host = StdioHost()
        self.ours = self.host.open(self._open_ours)
        self.bare = self.host.open(sdk_session(BARE))
        self.floor = self.host.open(sdk_session(FLOOR))
        # one untimed call each: first-call imports belong to cold start (case 4)
        self.host.call(self._ours_calls)
        self.host.call(self._bare_calls)
        self.host.call(self._floor_calls)
        self.host.call(self._sizes)

    async def _sizes(self) -> None:
        """Bytes of each result as JSON (what crosses the pipe, roughly): context for the ratio."""
        ours = await self.ours.call_tool("rows", {"n": self.rows}, meta={"row_limit": 25})
        bare = await self.bare.call_tool("rows", {"n": self.rows})
        self.facts = {"ours_result_bytes": len(orjson.dumps(ours.raw)),
                      "bare_result_bytes": len(bare.model_dump_json(by_alias=True, exclude_none=True))}

    @staticmethod
    async def _open_ours(stack):
        from analytics_acp.host import AcpClient

        errlog = stack.enter_context(open(os.devnull, "w"))
        return await stack.enter_async_context(AcpClient.stdio(OURS, errlog=errlog))

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

    async def _floor_calls(self) -> float:
        start = time.perf_counter()
        for _ in range(self.calls):
            res = await self.floor.call_tool("rows", {"n": self.rows})
            data = orjson.loads(res.content[1].text)  # the host holds the table as objects
            assert len(data["table"]) == data["row_count"] == self.rows
        return (time.perf_counter() - start) / self.calls

    def ours_fn(self) -> float:
        return self.host.call(self._ours_calls)  # type: ignore[union-attr]

    def bare_fn(self) -> float:
        return self.host.call(self._bare_calls)  # type: ignore[union-attr]

    def floor_fn(self) -> float:
        return self.host.call(self._floor_calls)  # type: ignore[union-attr]

    def teardown(self) -> None:
        if self.host is not None:
            self.host.close()


def cases(quick: bool) -> list[Case]:
    """The per-call case and its floor (tiny with quick); both share the sessions the first opens."""
    rows = 50 if quick else 1000
    s = _Sessions(rows=rows, calls=2 if quick else 20)
    return [
        Case(
            key="per_call", title=f"1. per-call overhead ({rows:,} rows, 25 shown, stdio)", target="<= 1.15",
            target_value=1.15, ours=s.ours_fn, baseline=s.bare_fn, setup=s.setup, extra=lambda: dict(s.facts),
            ours_label="ACP extraction", baseline_label="bare mcp SDK tool (rows as text)",
        ),
        Case(
            key="per_call_floor", title=f"1f. per-call overhead over its floor ({rows:,} rows, 25 shown, stdio)",
            target="<= 1.1", target_value=1.1, ours=s.ours_fn, baseline=s.floor_fn, teardown=s.teardown,
            ours_label="ACP extraction",
            baseline_label="floor: bare SDK tool + typed values (8.6) + table as objects for the host (8.5) + sample",
        ),
    ]
