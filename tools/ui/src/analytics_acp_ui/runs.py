"""Queries run from the page (issue 37.2) go through the bridge's own call path, not a copy of it.

The page holds one ``analytics_acp_bridge`` Bridge (built by the bridge's Factory on first use, over the same
sources.json, acps/ and acp-data/): ``Bridge.run`` forwards the call with the source's limits, the ACP's cost
preflight (9.2), progress and cancel, saves the datasets and records the call in the activity (``via: page``).
A changed sources.json is applied with the bridge's own reload before the next run. Runs live in the page's
task group; a run's page polls its state (no client framework).
"""

from __future__ import annotations

import logging
import math
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from analytics_acp_bridge.paths import Paths
from analytics_acp_bridge.sources.redact import Redactor

log = logging.getLogger("analytics_acp_ui")
KEEP_RUNS = 50  # finished runs remembered for their pages


@dataclass
class Run:
    """One query run from the page: what it asked and, once it ends, what it gave."""

    id: str
    source: str
    tool: str  # the published name, ``<source>__<tool>``
    arguments: dict[str, Any]
    limits: dict[str, Any] | None = None
    status: str = "running"  # running | ok | error | cancelled
    progress: str | None = None
    datasets: list[dict[str, Any]] = field(default_factory=list)
    text: str | None = None  # what a run without a dataset answered (scrubbed)
    error: dict[str, Any] | None = None  # the typed error (12.1), scrubbed
    scope: anyio.CancelScope | None = None

    @property
    def estimate(self) -> float | None:
        """A paid call refused by the cost limit (9.2): the ACP's estimate in USD, else None."""
        data = (self.error or {}).get("data")
        if (self.error or {}).get("name") != "ACP_COST_LIMIT_EXCEEDED" or not isinstance(data, dict):
            return None
        value = data.get("estimate_usd")
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    @property
    def raise_to(self) -> float | None:
        """The one-run limit the page offers for a refused paid call: the estimate rounded up to the cent."""
        estimate = self.estimate
        return None if estimate is None else math.ceil(estimate * 100) / 100


def _stamp(path: Path) -> Any:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class Runner:
    """The page's bridge and its runs."""

    def __init__(self, paths: Paths, page_redactor: Redactor):
        self.paths = paths
        self.page_redactor = page_redactor  # the page's log scrubber learns the bridge's secrets
        self.runs: dict[str, Run] = {}
        self._bridge: Any = None
        self._stamp: Any = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._lock = anyio.Lock()

    def bind(self, tg: anyio.abc.TaskGroup) -> None:
        """The page's task group (the lifespan's): the bridge's servers and the runs live in it."""
        self._tg = tg

    async def bridge(self) -> Any:
        """The page's Bridge, started on first use and reloaded when sources.json changed since."""
        from analytics_acp_bridge.factory import Factory

        assert self._tg is not None, "bridge() before bind()"
        async with self._lock:
            stamp = _stamp(self.paths.sources)
            if self._bridge is None:
                self._bridge = Factory(self.paths).bridge()
                self._stamp = stamp
                await self._bridge.start(self._tg, probe=False)
            elif stamp != self._stamp:
                self._stamp = stamp
                await self._bridge.reload()
            await self._bridge.wait_ready()
            self.page_redactor.add(set(self._bridge.secrets.log_redactor.secrets))
            return self._bridge

    @property
    def scrub(self) -> Redactor:
        """Every literal credential value the page's bridge knows (what the activity record masks)."""
        return self._bridge.secrets.log_redactor if self._bridge is not None else self.page_redactor

    def start(self, source: str, tool: str, arguments: dict[str, Any], limits: dict[str, Any] | None = None) -> Run:
        """Start a run in the background; its page follows it."""
        assert self._tg is not None, "start() before bind()"
        run = Run(id=uuid.uuid4().hex[:12], source=source, tool=tool, arguments=arguments, limits=limits)
        self.runs[run.id] = run
        for old in [r for r in self.runs.values() if r.status != "running"][:-KEEP_RUNS]:
            self.runs.pop(old.id, None)
        self._tg.start_soon(self._run, run)
        return run

    async def _run(self, run: Run) -> None:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            share = f"{done:g}" + (f" of {total:g}" if total else "")
            run.progress = f"{message} ({share})" if message else share

        with anyio.CancelScope() as scope:
            run.scope = scope
            try:
                bridge = await self.bridge()
                answer = await bridge.run(run.tool, run.arguments, progress, via="page", limits=run.limits)
            except Exception as exc:  # the page's own failure (the bridge answers typed errors itself)
                log.error("a run from the page failed: %s", self.scrub.text(repr(exc)))
                run.status, run.error = "error", {"name": "ACP_UPSTREAM_ERROR", "message": "The page could not run it; "
                                                  "see its log (stderr of analytics-acp ui)."}
                return
        if scope.cancelled_caught:
            run.status = "cancelled"
            return
        scrub = self.scrub
        run.datasets = scrub.value(answer.produced or answer.datasets)
        if answer.is_error:
            run.status, run.error = "error", scrub.value(answer.error or {"name": "ACP_UPSTREAM_ERROR", "message": ""})
        else:
            run.status = "ok"
            texts = [b.get("text") or "" for b in answer.blocks if b.get("type") == "text"]
            run.text = scrub.text("\n".join(texts))[:20_000]

    def cancel(self, run_id: str) -> bool:
        """Cancel a running run (the bridge cancels the call at its ACP server; no dataset is left)."""
        run = self.runs.get(run_id)
        if run is None or run.status != "running" or run.scope is None:
            return False
        run.scope.cancel()
        return True

    async def aclose(self) -> None:
        """Stop the bridge's servers (the page is ending)."""
        for run in self.runs.values():
            if run.scope is not None and run.status == "running":
                run.scope.cancel()
        if self._bridge is not None:
            with anyio.CancelScope(shield=True):
                await self._bridge.aclose()
