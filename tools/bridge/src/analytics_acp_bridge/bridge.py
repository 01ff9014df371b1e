"""The bridge as an ACP host (16.5): it wires a fleet of sources, the tool catalog built from it, the store and
the call path, and swaps fleet and catalog when sources.json changes (issue 34.3).

The parts are built by factory.py, which does all the I/O; nothing here reads files or starts processes on
construction.
"""

from __future__ import annotations

import json
import logging
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
import anyio.abc
from analytics_acp.argument_limits import check_arguments_size
from analytics_acp.errors import AcpError, InvalidArguments, UpstreamError, error_from_payload
from analytics_acp.host.client import ProgressFn
from analytics_acp.signals import CallSignals

from .calls.catalog import Catalog
from .calls.exposure import SEPARATOR
from .calls.forward import Answer, Forwarder, text_block
from .calls.results import error_note
from .fleet.fleet import Fleet, FleetInputs
from .fleet.process import START_TIMEOUT_S
from .paths import Paths
from .query.cache import TableCache
from .serving import own_tools
from .serving.report import refusal, sources_report
from .serving.skillpub import SkillCatalog
from .sources.redact import Redactor, Secrets
from .store.activity import ActivityLog
from .store.datasets import DatasetStore
from .view import apps
from .view.pages import DatasetView

__all__ = ["INLINE_MAX_BYTES", "Bridge", "Paths"]

log = logging.getLogger("analytics_acp_bridge")
# Tables past this travel as file:// JSON (DESIGN.md: the SDK's stdio reader is slow on huge lines).
INLINE_MAX_BYTES = 256 * 1024


class FleetParts(Protocol):
    """What a reload needs from the factory (factory.py): sources.json read again, and a fleet planned from it."""

    def read(self) -> FleetInputs:
        """sources.json and the launchable ACPs as they are now (I/O)."""
        ...

    def plan(self, inputs: FleetInputs, previous: Fleet | None = None) -> Fleet:
        """The fleet for ``inputs``, taking over what ``previous`` can keep."""
        ...


class Bridge:
    """One bridge run: the running fleet and catalog, the acp-data store and the forwarder of calls."""

    def __init__(self, paths: Paths, *, fleet: Fleet, forwarder: Forwarder, view: DatasetView, skills: SkillCatalog,
                 secrets: Secrets, parts: FleetParts, cleanup: Callable[[], None], activity: ActivityLog | None = None):
        self.paths = paths
        self.fleet = fleet
        self.catalog = Catalog()
        self.forwarder = forwarder  # the call path, with the acp-data store and the query cache it feeds
        self.view = view  # the dataset view's reads (issue 36), over the same store and tables
        self.skills = skills  # the skills published as resources (13.4)
        self.secrets = secrets
        # Every call it runs, scrubbed of every credential value (issue 37.1); None records nothing.
        self.activity = activity
        self._parts = parts  # sources.json read again and planned as a fleet over the running one (factory.py)
        self._cleanup = cleanup  # the run's temp folder and stderr pipe (factory.py)
        self.refused: dict[str, Any] | None = None  # the last saved sources.json that was not applied, and why
        self.on_tools_changed: Callable[[], Awaitable[None]] | None = None  # set by the server: list_changed
        self.ready = anyio.Event()  # first fleet started and checked, catalog built
        self._settled = anyio.Event()  # no reload in progress
        self._settled.set()
        self._tg: anyio.abc.TaskGroup | None = None

    @property
    def store(self) -> DatasetStore:
        """acp-data (16.6)."""
        return self.forwarder.store

    @property
    def query_cache(self) -> TableCache:
        """acp_query's tables kept between calls."""
        return self.forwarder.query_cache

    @property
    def redactor(self) -> Redactor:
        """Scrubs what the client receives."""
        return self.secrets.redactor

    @property
    def tools(self) -> list[dict[str, Any]]:
        """tools/list: the bridge's own tools, then every source's."""
        return [dict(t) for t in own_tools.TOOLS] + self.catalog.tools

    @property
    def viewed(self) -> set[str]:
        """The tools whose results the dataset view shows (MCP Apps clients): acp_query and the catalog's."""
        return {"acp_query", *self.catalog.viewed()}

    # ----- start, reload, stop -----
    async def start(self, tg: anyio.abc.TaskGroup, *, probe: bool = True) -> None:
        """Start the sources in the background (issue 26.5): the fleet's servers concurrently, its checks, the
        catalog (``ready``), then with ``probe`` the fleet's probes."""
        self._tg = tg
        tg.start_soon(self.forwarder.early_starter.run)
        tg.start_soon(self._start_first, tg, probe)

    async def _start_first(self, tg: anyio.abc.TaskGroup, probe: bool) -> None:
        try:
            await self.fleet.start(tg)
            self.catalog = Catalog.build(self.fleet, self.redactor)
        finally:
            self.ready.set()
        self.fleet.log_problems()
        if probe:
            tg.start_soon(self.fleet.probe)

    async def wait_ready(self) -> bool:
        """Wait (bounded by the servers' start bound) until the first tool list is built (tools/list: during a
        reload it answers the running list at once; the client is told when it changes)."""
        with anyio.move_on_after(START_TIMEOUT_S + 5):
            await self.ready.wait()
        return self.ready.is_set()

    async def wait_settled(self) -> bool:
        """As ``wait_ready``, and no reload under way (a call to a tool the reload may add)."""
        with anyio.move_on_after(START_TIMEOUT_S + 5):
            await self.ready.wait()
            await self._settled.wait()
        return self.ready.is_set() and self._settled.is_set()

    async def reload(self) -> bool:
        """sources.json changed (issue 34.3): check the new set-up with the validator, then apply it or keep the
        running one. Returns True when the catalog changed (the client was told: tools/list_changed).

        The new fleet takes over unchanged sources and running servers, starts the servers it needs and checks
        every other source. The edit is not applied when the file cannot be used, or when a source that works
        now would stop working (its new entry fails a check): the running sources stay, and ``acp_sources``
        (``reload``) and the log say why. Otherwise the fleets swap; servers no longer needed are stopped once
        their calls in flight have answered (a call keeps the source and server it started with).
        """
        assert self._tg is not None, "reload() before start()"
        await self.ready.wait()
        self._settled = anyio.Event()
        try:
            running = self.fleet
            inputs = await anyio.to_thread.run_sync(self._parts.read)
            candidate = self._parts.plan(inputs, running)
            await candidate.start(self._tg)
            refused = refusal(candidate, running)
            if refused is not None:
                for proc in candidate.processes.values():
                    if proc not in running.processes.values():
                        await proc.aclose()
                self.refused = refused
                log.warning("%s", _one_line(self.secrets.log_redactor.text(refused["error"]["message"])))
                return False
            catalog, previous = Catalog.build(candidate, self.redactor), self.catalog
            self.fleet, self.catalog, self.refused = candidate, catalog, None
            for proc in running.processes.values():
                if proc not in candidate.processes.values():
                    self._tg.start_soon(proc.aclose_when_idle)
        finally:
            self._settled.set()
        candidate.log_problems()
        log.info("sources.json reloaded: %d sources, %d source tools", len(candidate.sources.sources), len(catalog.tools))
        self._tg.start_soon(candidate.probe)
        changed = not catalog.same_tools(previous)
        if changed and self.on_tools_changed is not None:
            await self.on_tools_changed()
        return changed

    def stop_now(self) -> None:
        """Stop by signal (Ctrl-C, SIGTERM; issue 15.2), synchronously: the ACP servers get SIGTERM (each
        cancels its queries at the database), a dataset being written is dropped, temp files removed."""
        from analytics_acp.host.stdio import stop_live_servers

        stop_live_servers()
        self.store.remove_unfinished()
        if self.activity is not None:
            self.activity.flush(bound_s=0.5)  # a signal stop ends within a second (issue 15.2)
        self._cleanup()

    async def aclose(self) -> None:
        """Stop every server and remove the bridge's temp folder."""
        await self.fleet.aclose()
        self.query_cache.clear()
        if self.activity is not None:
            await anyio.to_thread.run_sync(self.activity.close)
        self._cleanup()

    # ----- calls -----
    async def call(self, name: str, arguments: dict[str, Any] | None,
                   progress: ProgressFn | None = None) -> tuple[list[dict[str, Any]], bool]:
        """Run a published tool; returns MCP content blocks and isError (every text scrubbed of secrets)."""
        answer = await self.run(name, arguments, progress)
        return answer.blocks, answer.is_error

    async def run(self, name: str, arguments: dict[str, Any] | None, progress: ProgressFn | None = None,
                  with_apps: bool = False, *, via: str = "mcp", limits: dict[str, Any] | None = None) -> Answer:
        """Run a published tool: the client's blocks, isError and the datasets the call saved or read (every
        text scrubbed of secrets). ``with_apps``: the client negotiated MCP Apps, so the app-only tools exist for it.

        ``progress`` relays a forwarded call's progress to the client; cancelling the calling task
        cancels the forwarded call at its ACP server and leaves no dataset. The call is recorded in the
        activity (``via``: who asked, ``mcp`` or ``page``), cancelled ones included; the view's app-only reads
        are not. ``limits``: 5.1 limits for this call only, over the source's (the page's confirmed higher
        ``cost_limit_usd``; the model never reaches this)."""
        if self.activity is None or (with_apps and name in apps.APP_NAMES):
            return await self._run(name, arguments or {}, progress, with_apps, limits)
        started, answer = time.monotonic(), None
        try:
            answer = await self._run(name, arguments or {}, progress, with_apps, limits)
            return answer
        finally:
            self._record(name, arguments or {}, answer, time.monotonic() - started, via, limits)

    def _record(self, name: str, arguments: dict[str, Any], answer: Answer | None, seconds: float, via: str,
                limits: dict[str, Any] | None) -> None:
        # Runs in the call's `finally`: a fault in the record must never replace the call's answer.
        assert self.activity is not None
        try:
            self.activity.add(self._entry(name, arguments, answer, seconds, via, limits))
        except Exception as exc:  # noqa: BLE001 - logged with its type only (the message could hold a secret)
            log.warning("activity: the call to %s was not recorded (%s)", name, type(exc).__name__)

    def _entry(self, name: str, arguments: dict[str, Any], answer: Answer | None, seconds: float, via: str,
               limits: dict[str, Any] | None) -> dict[str, Any]:
        """The activity entry of one call (scrubbed by the record itself); ``answer`` None: cancelled."""
        assert self.activity is not None
        route = self.catalog.routes.get(name)
        source = self.fleet.sources.get(route.source) if route is not None else None
        entry = self.activity.entry(
            via=via, source=route.source if route else None, acp=source.acp if source else None, tool=name,
            acp_tool=route.tool if route else name, arguments=arguments, duration_ms=int(seconds * 1000))
        if limits:
            entry["limits"] = limits
        if answer is None:
            entry["outcome"] = "cancelled"
            return entry
        entry["outcome"] = "error" if answer.is_error else "ok"
        entry["rows"] = answer.rows
        entry["datasets"] = [{"id": d["id"], "rows": d.get("rows")} for d in answer.produced]
        if answer.cost_usd is not None:
            entry["cost_usd"] = answer.cost_usd
        if answer.is_error:
            entry["error"] = _error_of(answer)
        return entry

    async def _run(self, name: str, arguments: dict[str, Any], progress: ProgressFn | None, with_apps: bool,
                   limits: dict[str, Any] | None) -> Answer:
        try:
            check_arguments_size(name, arguments)  # the servers' rule, for the bridge's own tools too (15.3)
            if with_apps and name in apps.APP_NAMES:
                answer = Answer([text_block(self.redactor.value(await apps.call(self.view, name, arguments)))])
            elif name in own_tools.NAMES:
                answer = await self._own(name, arguments, progress)
            else:
                if name not in self.catalog.routes:
                    await self.wait_settled()  # a source starting or reloading: its tools exist once its server is up
                if name not in self.catalog.routes:
                    raise self._unknown_tool(name)
                answer = await self._forward(name, arguments, progress, limits)
        except AcpError as exc:
            answer = Answer([text_block({"error": exc.payload()})], True, error=exc.payload())
            source = self.fleet.sources.get(name.split(SEPARATOR, 1)[0]) if SEPARATOR in name else None
            note = error_note(exc.payload(), source.id, self.paths.sources) if source is not None else None
            if note:
                answer.blocks.append({"type": "text", "text": note})
        except Exception:
            # Logged scrubbed: an exception text may quote a value the bridge holds.
            log.error("bridge tool %s failed: %s", name, self.redactor.text(traceback.format_exc()))
            err = UpstreamError(f"The bridge failed while running {name}. See the bridge log.")
            answer = Answer([text_block({"error": err.payload()})], True, error=err.payload())
        answer.blocks = [self._scrub(b) for b in answer.blocks]
        answer.datasets = self.redactor.value(answer.datasets)
        return answer

    async def _forward(self, name: str, arguments: dict[str, Any], progress: ProgressFn | None = None,
                       limits: dict[str, Any] | None = None) -> Answer:
        # One fleet for the whole call: a reload meanwhile does not change the source or server it uses.
        fleet, route = self.fleet, self.catalog.routes[name]
        source = fleet.sources.get(route.source)
        assert source is not None  # routes only exist for sources that publish tools
        return await self.forwarder.forward(source, fleet.processes[source.acp], route, arguments, progress, limits)

    def _unknown_tool(self, name: str) -> AcpError:
        """A tool of a source that cannot work says which source and why (not just 'unknown')."""
        prefix = name.split(SEPARATOR, 1)[0] if SEPARATOR in name else None
        source = self.fleet.sources.get(prefix) if prefix else None
        fix = f"Ask the user to fix it in {self.paths.sources}: the bridge applies the saved file, no restart needed."
        if source is not None:
            health = self.fleet.health.of(source)
            if health.setup and health.error is not None:  # 23.1: a set-up error is the user's to fix, not a retry
                kind = type(error_from_payload(health.error))
                return kind(f"Tool {name!r} is not available: source «{source.id}» is not set up: {health.error['message']} "
                            f"Tell the user: {health.fix or fix}")
            problem = health.line() or "its ACP server is not running"
            return UpstreamError(f"Tool {name!r} is not available: source «{source.id}» cannot work: {problem} {fix}")
        if prefix and self.fleet.sources.error:
            return UpstreamError(f"Tool {name!r} is not available: sources.json could not be used: "
                                 f"{self.fleet.sources.error} {fix}")
        return InvalidArguments(f"Unknown tool {name!r}. Call acp_sources to see the sources and their tools.")

    def _scrub(self, block: dict[str, Any]) -> dict[str, Any]:
        if block.get("type") == "text":
            return {**block, "text": self.redactor.text(block["text"])}
        return block

    async def _own(self, name: str, arguments: dict[str, Any], progress: ProgressFn | None = None) -> Answer:
        if name == "acp_sources":  # answers at once: a source still starting says so (issue 26.5)
            return Answer([text_block(sources_report(self.fleet, self.catalog, self.store.dir, self.refused))])
        if name == "acp_datasets":
            result = await anyio.to_thread.run_sync(own_tools.datasets, self.store, arguments.get("filter"))
            return Answer([text_block(result)])
        # acp_query reports its load and stops on cancel: SQLite interrupted, nothing cached or saved (issue 28.3).
        signals = CallSignals(progress)
        async with signals.running():
            response, note = await signals.in_thread(
                own_tools.query, self.store, arguments.get("sql"), arguments.get("save_as"), self.query_cache, signals
            )
        blocks = [text_block(response), {"type": "text", "text": note}] if note else [text_block(response)]
        saved = response.get("dataset")
        title = arguments.get("save_as") or "acp_query"
        shown = [{"id": saved, "name": None, "title": title, "rows": response["total_rows"]}] if saved else []
        return Answer(blocks, False, shown, produced=list(shown), rows=response["total_rows"])


def _error_of(answer: Answer) -> dict[str, Any]:
    """The typed error of a failed call (12.1): the one the call path kept, else read from its first block."""
    payload: Any = answer.error
    text = str(answer.blocks[0].get("text") or "") if answer.blocks else ""
    if payload is None:
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        payload = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(payload, dict):  # a plain MCP server's error text (4.3)
        payload = {"name": "MCP_ERROR", "message": text}
    out = {k: payload.get(k) for k in ("code", "name", "message") if k in payload}
    if isinstance(out.get("message"), str):
        out["message"] = out["message"][:2000]  # a record line stays a line
    return out


def _one_line(text: str) -> str:
    return " ".join(str(text).split())
