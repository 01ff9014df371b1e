"""The bridge as an ACP host (16.5): sources, their servers, the published tools and each call."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import traceback
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from analytics_acp.argument_limits import check_arguments_size
from analytics_acp.errors import AcpError, CredentialsInvalid, InvalidArguments, UpstreamError
from analytics_acp.host import ProtocolError
from analytics_acp.host.client import ProgressFn
from analytics_acp.signals import CallSignals

from .calls.exposure import Route, rewrite_tool
from .calls.forward import Answer, Forwarder, text_block
from .calls.results import error_note
from .fleet.discovery import AcpLaunch, discover
from .fleet.process import START_TIMEOUT_S, AcpProcess, ServerUnavailable
from .query.cache import TableCache
from .serving import own_tools
from .serving.skillpub import SkillCatalog
from .sources.entries import Source, SourcesFile, load_sources
from .sources.health import SourceHealth
from .sources.redact import Redactor, ScrubbedStderr
from .store.datasets import DatasetStore
from .view import apps
from .view.pages import DatasetView

log = logging.getLogger("analytics_acp_bridge")
# Tables past this travel as file:// JSON (DESIGN.md: the SDK's stdio reader is slow on huge lines).
INLINE_MAX_BYTES = 256 * 1024
# The start-up probe of each source (autocontext without resource: the call that connects first).
# It runs in the background: no answer of the bridge waits for it (issue 26.5).
PROBE_TIMEOUT_S = float(os.environ.get("ACP_BRIDGE_PROBE_TIMEOUT", "30"))


@dataclass
class Paths:
    """Where the bridge works (16.2)."""

    project: Path
    sources: Path
    root: Path


class Bridge:
    """State of one bridge run: one session id per source, one server per ACP, one acp-data folder."""

    def __init__(self, paths: Paths, *, inline_max_bytes: int = INLINE_MAX_BYTES):
        self.paths = paths
        self.inline_max_bytes = inline_max_bytes
        self.run_id = uuid.uuid4().hex
        self.sources: SourcesFile = load_sources(paths.sources, paths.project)
        self.launches: dict[str, AcpLaunch] = discover(paths.root)
        self.store = DatasetStore(paths.project)
        self.query_cache = TableCache()  # acp_query tables kept until their CSV changes (bench case 5)
        self.view = DatasetView(self.store, self.query_cache)  # the dataset view's reads (issue 36), same tables
        self.skills = SkillCatalog(paths.project, paths.root, lambda: discover(paths.root))
        self.redactor = Redactor(self.sources.secrets)
        # Logs are scrubbed of every literal credential too, whatever the ACP's schema says: a log
        # line is never worth a leak, while descriptions must keep non-secret values (paths) intact.
        self.log_redactor = Redactor(self.sources.secrets)
        for source in self.sources.sources:
            self.log_redactor.add(source.secret_values(None))
        self.stderr: ScrubbedStderr | None = None
        self.tmp = Path(tempfile.mkdtemp(prefix="analytics-acp-bridge-"))
        self.processes: dict[str, AcpProcess] = {}
        self.routes: dict[str, Route] = {}
        self.tools: list[dict[str, Any]] = []
        self.viewed: set[str] = {"acp_query"}  # tools whose results the dataset view shows (MCP Apps clients)
        self.forwarder = Forwarder(self.store, self.query_cache, sources_path=paths.sources, read_dir=self.tmp / "read",
                                   inline_max_bytes=inline_max_bytes, session_id=self.session_id)
        self.health = SourceHealth(self.sources, paths.sources)
        self.health.check_installed(list(self.launches))
        self.ready = anyio.Event()  # servers started, setup checked, tool list built
        self.probed = anyio.Event()  # every start-up probe answered (or gave up)

    # ----- start-up -----

    def session_id(self, source_id: str) -> str:
        """16.5: ``bridge-<uuid>:<source>``, one per source and bridge start."""
        return f"bridge-{self.run_id}:{source_id}"

    async def start(self, tg: anyio.abc.TaskGroup, *, probe: bool = True) -> None:
        """Start the sources in the background (issue 26.5): one server per ACP used by a healthy source,
        concurrently; then the setup check, the tool list (``ready``) and, with ``probe``, the probes."""
        wanted = {s.acp for s in self.sources.sources if self.health.publishes_tools(s)}
        if wanted and self.stderr is None:
            self.stderr = ScrubbedStderr(self.log_redactor)
        for acp_id in sorted(wanted):
            launch = self.launches[acp_id]
            errlog = self.stderr.file if self.stderr is not None else None
            proc = AcpProcess(launch, self.forwarder.resolve, self.tmp / f"acp-{acp_id}", _cache_dir(launch), errlog)
            proc.bind(tg)
            self.processes[acp_id] = proc
        tg.start_soon(self.forwarder.early_starter.run)
        tg.start_soon(self._start_sources, tg, probe)

    async def wait_ready(self) -> bool:
        """Wait (bounded by the servers' start bound) until the tool list is built; False if it is not."""
        with anyio.move_on_after(START_TIMEOUT_S + 5):
            await self.ready.wait()
        return self.ready.is_set()

    async def _start_sources(self, tg: anyio.abc.TaskGroup, probe: bool) -> None:
        async def boot(proc: AcpProcess) -> None:
            try:
                await proc.ensure()
            except ServerUnavailable:
                pass  # proc.error holds it; log_problems writes one line per source that uses it

        try:
            async with anyio.create_task_group() as boot_tg:
                for proc in self.processes.values():
                    boot_tg.start_soon(boot, proc)
            self._check_setup()
            self._collect_secrets()
            self._build_tools()
        finally:
            self.ready.set()
        self.log_problems()
        if probe:
            tg.start_soon(self._probe_sources)
        else:
            self.probed.set()

    def _check_setup(self) -> None:
        """Offline, per source: its server started, and its credentials/config match the ACP's setup schemas (5.5)."""
        for source in self.sources.sources:
            proc = self.processes.get(source.acp)
            if proc is None or not self.health.publishes_tools(source):
                continue
            if proc.client is None:
                self.health.server_error(source, proc.error or f"The {source.acp} ACP server is not running.")
            else:
                self.health.check_schemas(source, proc.capability)

    # ----- diagnostics (what desktop clients keep as the server log) -----
    def source_problem(self, source: Source) -> str | None:
        """Why a source cannot work (``NAME: message``), or None while it is ok or starting."""
        return self.health.of(source).line() or None

    def log_problems(self) -> None:
        """One stderr line for sources.json and one per source that has a problem at start-up."""
        if self.sources.error:
            log.warning("%s", _one_line(f"sources.json: {self.sources.error}"))
        for source in self.sources.sources:
            problem = self.source_problem(source)
            if problem:
                log.warning("%s", _one_line(self.log_redactor.text(f"source {source.id!r} ({source.acp}): {problem}")))
            elif source.warnings:
                log.warning("%s", _one_line(f"source {source.id!r} ({source.acp}): {' '.join(source.warnings)}"))

    async def _probe_sources(self) -> None:
        """Call autocontext (no resource) once per healthy source, as the model's first call would:
        wrong credentials, a missing file or an unreachable server show in acp_sources and the log."""
        async def probe(source: Source) -> None:
            proc = self.processes[source.acp]
            meta = {**source.meta(), "session_id": self.session_id(source.id), "conversation_id": self.session_id(source.id)}
            payload: dict[str, Any] | None = None
            with anyio.move_on_after(PROBE_TIMEOUT_S) as scope:
                try:
                    result = await proc.call("autocontext", {}, meta)
                except (ServerUnavailable, ProtocolError) as exc:
                    payload = UpstreamError(str(exc)).payload()
                else:
                    if result.is_error:
                        payload = result.error or UpstreamError(result.text or "autocontext failed").payload()
            if scope.cancelled_caught:
                payload = UpstreamError(f"The first call (autocontext) did not answer within {PROBE_TIMEOUT_S:g} s.").payload()
            if payload is None:
                self.health.started(source)
            else:
                self.health.probe_failed(source, payload)
                log.warning("%s", _one_line(self.log_redactor.text(
                    f"source {source.id!r} ({source.acp}): {self.health.of(source).line()}")))

        try:
            async with anyio.create_task_group() as tg:
                for source in self.sources.sources:
                    proc = self.processes.get(source.acp)
                    if not self.health.publishes_tools(source) or proc is None or proc.client is None:
                        continue
                    if proc.plain_mcp_reason is None and any(t.get("name") == "autocontext" for t in proc.tools):
                        tg.start_soon(probe, source)
                    else:
                        self.health.started(source)  # a plain MCP server (4.3) has no autocontext to probe
        finally:
            self.probed.set()

    def _collect_secrets(self) -> None:
        """Literal credential values the ACP marks writeOnly (5.5) join the env/file ones as secrets."""
        for source in self.sources.sources:
            proc = self.processes.get(source.acp)
            schema = proc.capability.get("credentials_schema") if proc is not None and proc.client is not None else None
            self.redactor.add(source.secret_values(schema if isinstance(schema, dict) else None))
        self.log_redactor.add(set(self.redactor.secrets))

    def _build_tools(self) -> None:
        tools = [dict(t) for t in own_tools.TOOLS]
        routes: dict[str, Route] = {}
        for source in self.sources.sources:
            proc = self.processes.get(source.acp)
            if not self.health.publishes_tools(source) or proc is None or proc.client is None:
                continue
            extraction = set(proc.capability.get("extraction_tools") or [])
            acp_name = _acp_name(proc)
            for tool in proc.tools:
                wire, route = rewrite_tool(tool, source.id, source.label, acp_name, tool["name"] in extraction)
                wire["description"] = self.redactor.text(wire["description"])
                routes[route.public] = route
                tools.append(wire)
        self.routes, self.tools = routes, tools
        self.viewed = {"acp_query", *(r.public for r in routes.values() if r.datasets_shown)}

    def stop_now(self) -> None:
        """Stop by signal (Ctrl-C, SIGTERM; issue 15.2), synchronously: the ACP servers get SIGTERM (each
        cancels its queries at the database), a dataset being written is dropped, temp files removed."""
        from analytics_acp.host.stdio import stop_live_servers

        stop_live_servers()
        self.store.remove_unfinished()
        shutil.rmtree(self.tmp, ignore_errors=True)

    async def aclose(self) -> None:
        """Stop every server and remove the bridge's temp folder."""
        for proc in self.processes.values():
            await proc.aclose()
        self.query_cache.clear()
        if self.stderr is not None:
            self.stderr.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # ----- calls -----
    async def call(self, name: str, arguments: dict[str, Any] | None,
                   progress: ProgressFn | None = None) -> tuple[list[dict[str, Any]], bool]:
        """Run a published tool; returns MCP content blocks and isError (every text scrubbed of secrets)."""
        answer = await self.run(name, arguments, progress)
        return answer.blocks, answer.is_error

    async def run(self, name: str, arguments: dict[str, Any] | None, progress: ProgressFn | None = None,
                  with_apps: bool = False) -> Answer:
        """Run a published tool: the client's blocks, isError and the datasets the call saved or read (every
        text scrubbed of secrets). ``with_apps``: the client negotiated MCP Apps, so the app-only tools exist for it.

        ``progress`` relays a forwarded call's progress to the client; cancelling the calling task
        cancels the forwarded call at its ACP server and leaves no dataset."""
        arguments = arguments or {}
        try:
            check_arguments_size(name, arguments)  # the servers' rule, for the bridge's own tools too (15.3)
            if with_apps and name in apps.APP_NAMES:
                answer = Answer([text_block(self.redactor.value(await apps.call(self.view, name, arguments)))])
            elif name in own_tools.NAMES:
                answer = await self._own(name, arguments, progress)
            else:
                if name not in self.routes:
                    await self.wait_ready()  # a source still starting: its tools exist once its server is up
                if name not in self.routes:
                    raise self._unknown_tool(name)
                answer = await self._forward(self.routes[name], arguments, progress)
        except AcpError as exc:
            answer = Answer([text_block({"error": exc.payload()})], True)
            source = self.sources.get(name.split("__", 1)[0]) if "__" in name else None
            note = error_note(exc.payload(), source.id, self.paths.sources) if source is not None else None
            if note:
                answer.blocks.append({"type": "text", "text": note})
        except Exception:
            # Logged scrubbed: an exception text may quote a value the bridge holds.
            log.error("bridge tool %s failed: %s", name, self.redactor.text(traceback.format_exc()))
            err = UpstreamError(f"The bridge failed while running {name}. See the bridge log.")
            answer = Answer([text_block({"error": err.payload()})], True)
        return Answer([self._scrub(b) for b in answer.blocks], answer.is_error, self.redactor.value(answer.datasets))

    def _unknown_tool(self, name: str) -> AcpError:
        """A tool of a source that could not start says which source and why (not just 'unknown')."""
        prefix = name.split("__", 1)[0] if "__" in name else None
        source = self.sources.get(prefix) if prefix else None
        fix = f"Ask the user to fix it in {self.paths.sources} and restart the bridge from the MCP client."
        if source is not None:
            health = self.health.of(source)
            if health.setup and health.error is not None:  # 23.1: a setup error is the user's to fix, not a retry
                kind = CredentialsInvalid if health.error["name"] == CredentialsInvalid.name else UpstreamError
                return kind(f"Tool {name!r} is not available: source «{source.id}» is not set up: {health.error['message']} "
                            f"{health.fix or fix}")
            problem = self.source_problem(source) or "its ACP server is not running"
            return UpstreamError(f"Tool {name!r} is not available: source «{source.id}» cannot work: {problem} {fix}")
        if prefix and self.sources.error:
            return UpstreamError(f"Tool {name!r} is not available: sources.json could not be used: {self.sources.error} {fix}")
        return InvalidArguments(f"Unknown tool {name!r}. Call acp_sources to see the sources and their tools.")

    def _scrub(self, block: dict[str, Any]) -> dict[str, Any]:
        if block.get("type") == "text":
            return {**block, "text": self.redactor.text(block["text"])}
        return block

    async def _own(self, name: str, arguments: dict[str, Any], progress: ProgressFn | None = None) -> Answer:
        if name == "acp_sources":  # answers at once: a source still starting says so (issue 26.5)
            return Answer([text_block(self.sources_report())])
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
        return Answer(blocks, False, [{"id": saved, "name": None, "title": title, "rows": response["total_rows"]}] if saved else [])

    def sources_report(self) -> dict[str, Any]:
        """acp_sources: status, credentials yes/no, limits and tools of each source; never a secret value."""
        used = {s.acp for s in self.sources.sources}
        out_sources = []
        for source in self.sources.sources:
            proc = self.processes.get(source.acp)
            health = self.health.of(source)
            entry: dict[str, Any] = {
                "id": source.id,
                "acp": source.acp,
                "label": source.label,
                "status": health.status,
                "has_credentials": bool(source.credentials),
                "config_keys": sorted((source.config or {}).keys()),
                "default_resource_id": source.default_resource_id,
                "limits": source.limits,
                "tools": sorted(r.public for r in self.routes.values() if r.source == source.id),
            }
            if health.error:
                entry["error"] = health.error
                if health.fix:
                    entry["fix"] = health.fix
            warnings = list(source.warnings)
            if proc is not None and proc.client is not None:
                reason = proc.plain_mcp_reason
                entry["protocol"] = "mcp" if reason else "acp"
                if reason:
                    # 4.3: the source works, without double delivery, limits or autocontext.
                    entry["protocol_reason"] = f"The {source.acp} server {reason}"
                    if source.credentials or source.config:
                        warnings.append(
                            "Its credentials, config, limits and default resource in sources.json are never sent "
                            "to it (only ACP 1.x servers receive them); its tools get the model's arguments only."
                        )
            if warnings:
                entry["warnings"] = warnings
            out_sources.append(entry)
        report: dict[str, Any] = {
            "sources_file": str(self.paths.sources),
            **self.health.overall(),
            "sources": out_sources,
            "installed_without_source": sorted(a for a in self.launches if a not in used),
            "acps": [launch.public() for launch in self.launches.values()],
            "acp_data": str(self.store.dir),
        }
        if self.sources.error:
            report["error"] = self.sources.error
        return report

    async def _forward(self, route: Route, arguments: dict[str, Any], progress: ProgressFn | None = None) -> Answer:
        source = self.sources.get(route.source)
        assert source is not None  # routes only exist for healthy sources
        return await self.forwarder.forward(source, self.processes[source.acp], route, arguments, progress)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _cache_dir(launch: AcpLaunch) -> Path | None:
    """13.1: an ACP folder gets its own cache, apart from the installed connector of the same id."""
    base = os.environ.get("ACP_CACHE_DIR")
    if launch.origin != "folder" or not base:
        return None  # installed connectors share the environment's ACP_CACHE_DIR (inherited)
    return Path(base) / "bridge-acps" / launch.id


def _acp_name(proc: AcpProcess) -> str:
    info = proc.server_info
    if proc.launch.origin == "folder" and proc.launch.name != proc.launch.id:
        return proc.launch.name
    return str(info.get("title") or info.get("name") or proc.launch.name)
