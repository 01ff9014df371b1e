"""The bridge as an ACP host (16.5): sources, their servers, the published tools and each call."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import tempfile
import traceback
import uuid
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from analytics_acp.argument_limits import check_arguments_size
from analytics_acp.errors import AcpError, CredentialsInvalid, InvalidArguments, UpstreamError, error_from_payload
from analytics_acp.host import ProtocolError, ToolResult
from analytics_acp.tablefile import uri_path

from . import early as early_csv
from . import own_tools, preload
from .discovery import AcpLaunch, discover
from .exposure import Route, forward_arguments, rewrite_tool
from .health import SourceHealth
from .querycache import TableCache
from .redact import Redactor, ScrubbedStderr
from .results import error_note, extraction_note, handle_artifacts, store_extraction
from .servers import START_TIMEOUT_S, AcpProcess, ServerUnavailable
from .sources import Source, SourcesFile, load_sources
from .store import DatasetStore

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
        self._read_files: dict[str, list[Path]] = {}
        self._in_flight: dict[str, int] = {}  # calls in flight per ACP server (early.py reads only lone calls)
        self.health = SourceHealth(self.sources, paths.sources)
        self.ready = anyio.Event()  # servers started, setup checked, tool list built
        self.probed = anyio.Event()  # every start-up probe answered (or gave up)
        self._check_sources()

    # ----- start-up -----
    def _check_sources(self) -> None:
        for source in self.sources.sources:
            if self.health.publishes_tools(source) and source.acp not in self.launches:
                self.health.unknown_acp(source, list(self.launches))

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
            proc = AcpProcess(launch, self._resolve, self.tmp / f"acp-{acp_id}", _cache_dir(launch), errlog)
            proc.bind(tg)
            self.processes[acp_id] = proc
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

    def stop_now(self) -> None:
        """Stop by signal (Ctrl-C, SIGTERM; issue 15.2), synchronously: the ACP servers get SIGTERM (each
        cancels its queries at the database), a dataset being written is dropped, temp files removed."""
        from analytics_acp.host.stdio import stop_live_servers

        stop_live_servers()
        for tmp_csv in list(self.store.writing):
            with contextlib.suppress(OSError):
                os.unlink(tmp_csv)
        shutil.rmtree(self.tmp, ignore_errors=True)

    async def aclose(self) -> None:
        """Stop every server and remove the bridge's temp folder."""
        for proc in self.processes.values():
            await proc.aclose()
        self.query_cache.clear()
        if self.stderr is not None:
            self.stderr.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # ----- acp/read_table (8.8) -----
    async def _resolve(self, ref: str, call_id: str | None) -> dict[str, Any]:
        wire = await anyio.to_thread.run_sync(self.store.table_wire, ref, self.tmp / "read", self.inline_max_bytes)
        if wire.get("format") == "file" and call_id:
            self._read_files.setdefault(call_id, []).append(uri_path(wire["table_uri"]))
        return wire

    # ----- calls -----
    async def call(self, name: str, arguments: dict[str, Any] | None) -> tuple[list[dict[str, Any]], bool]:
        """Run a published tool; returns MCP content blocks and isError (every text scrubbed of secrets)."""
        arguments = arguments or {}
        try:
            check_arguments_size(name, arguments)  # the servers' rule, for the bridge's own tools too (15.3)
            if name not in own_tools.NAMES and name not in self.routes:
                await self.wait_ready()  # a source still starting: its tools exist once its server is up
            if name in own_tools.NAMES:
                blocks, is_error = await self._own(name, arguments), False
            elif name in self.routes:
                blocks, is_error = await self._forward(self.routes[name], arguments)
            else:
                raise self._unknown_tool(name)
        except AcpError as exc:
            blocks, is_error = [_text({"error": exc.payload()})], True
            source = self.sources.get(name.split("__", 1)[0]) if "__" in name else None
            note = error_note(exc.payload(), source.id, self.paths.sources) if source is not None else None
            if note:
                blocks.append({"type": "text", "text": note})
        except Exception:
            # Logged scrubbed: an exception text may quote a value the bridge holds.
            log.error("bridge tool %s failed: %s", name, self.redactor.text(traceback.format_exc()))
            err = UpstreamError(f"The bridge failed while running {name}. See the bridge log.")
            blocks, is_error = [_text({"error": err.payload()})], True
        return [self._scrub(b) for b in blocks], is_error

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

    async def _own(self, name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
        if name == "acp_sources":  # answers at once: a source still starting says so (issue 26.5)
            return [_text(self.sources_report())]
        if name == "acp_datasets":
            result = await anyio.to_thread.run_sync(own_tools.datasets, self.store, arguments.get("filter"))
            return [_text(result)]
        response, note = await anyio.to_thread.run_sync(
            own_tools.query, self.store, arguments.get("sql"), arguments.get("save_as"), self.query_cache
        )
        return [_text(response), {"type": "text", "text": note}] if note else [_text(response)]

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

    async def _forward(self, route: Route, arguments: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
        source = self.sources.get(route.source)
        assert source is not None  # routes only exist for healthy sources
        args = forward_arguments(route, arguments)
        call_id = uuid.uuid4().hex
        meta = {
            **source.meta(),
            "session_id": self.session_id(source.id),
            "conversation_id": self.session_id(source.id),
            "call_id": call_id,
            "inline_max_bytes": self.inline_max_bytes,
        }
        proc = self.processes[source.acp]
        early, timer = self._early(source.acp, proc)
        try:
            result = await proc.call(route.tool, args, meta)
        except ServerUnavailable as exc:
            raise UpstreamError(str(exc)) from None
        except ProtocolError as exc:
            if -32049 <= exc.code <= -32010:  # an ACP error sent as a JSON-RPC error
                payload = error_from_payload({"code": exc.code, "message": exc.message, "data": exc.data}).payload()
            else:
                payload = {"code": exc.code, "name": "MCP_ERROR", "message": exc.message}
            return [_text({"error": payload})], True
        finally:
            for path in self._read_files.pop(call_id, []):
                path.unlink(missing_ok=True)
            if timer is not None:
                timer.cancel()
            self._in_flight[source.acp] -= 1
        try:
            return await self._deliver(source, proc, route, result, early)
        finally:
            if early is not None:
                early.cancel()

    def _early(self, key: str, proc: AcpProcess) -> tuple[early_csv.EarlyCsv | None, asyncio.TimerHandle | None]:
        """A reader of this call's table file while the server writes it (early.py), started after a
        short while; only when no other call is in flight on that server (its file would be ambiguous)."""
        busy = self._in_flight.get(key, 0)
        self._in_flight[key] = busy + 1
        if busy or not early_csv.supported() or proc.launch.url:  # an HTTP server's files are not ours to read
            return None, None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None, None
        early = early_csv.EarlyCsv(proc.tmp_dir, self.store.dir, self.store.writing)
        return early, loop.call_later(early_csv.START_AFTER_S, early.start)

    async def _deliver(
        self, source: Source, proc: AcpProcess, route: Route, result: ToolResult, early: early_csv.EarlyCsv | None = None
    ) -> tuple[list[dict[str, Any]], bool]:
        plain = proc.plain_mcp_reason is not None  # 4.3: a plain MCP server's _meta.acp is not ACP; ignore it
        if result.is_error:
            payload = None if plain else result.error
            if payload is None:
                parsed = _parse(result.text)
                payload = parsed.get("error") if isinstance(parsed, dict) else None
            blocks: list[dict[str, Any]] = [{"type": "text", "text": result.text or json.dumps({"error": payload})}]
            note = error_note(payload or {}, source.id, self.paths.sources)
            if note:
                blocks.append({"type": "text", "text": note})
            return blocks, True
        model_response = _parse(result.text)
        blocks = [{"type": "text", "text": result.text}]
        extra = [b for b in result.content[1:] if isinstance(b, dict)]
        system_data = None if plain else result.system_data
        if system_data and isinstance(model_response, dict):
            try:
                stored, empty = await anyio.to_thread.run_sync(
                    lambda: store_extraction(
                        self.store,
                        source=source.id,
                        acp_id=source.acp,
                        tool=route.tool,
                        model_response=model_response,
                        system_info=result.system_info or {},
                        system_data=system_data,
                        owned_dir=proc.tmp_dir,
                        http_token=proc.launch.token,
                        preload=partial(preload.start, self.query_cache),
                        early=early,
                    )
                )
            except OSError as exc:  # a full disk or a read-only project must not hide the answer itself
                log.error("cannot store %s result: %s", route.public, exc.strerror or type(exc).__name__)
                blocks.append({"type": "text", "text": (
                    f"The bridge could not save this extraction in acp-data ({exc.strerror or type(exc).__name__}); "
                    "only the rows above are available. Tell the user to check the project folder.")})
            else:
                blocks.append({"type": "text", "text": extraction_note(stored, empty, system_data.get("format") == "tables")})
        if isinstance(model_response, dict):
            before = json.dumps(model_response, sort_keys=True, default=str)
            images, notes = await anyio.to_thread.run_sync(handle_artifacts, model_response, self.store)
            if json.dumps(model_response, sort_keys=True, default=str) != before:
                blocks[0] = _text(model_response)  # artifact paths now point into acp-data/files (8.10)
            blocks[1:1] = images
            if notes:
                blocks.append({"type": "text", "text": " ".join(notes)})
        return blocks + extra, False


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


def _parse(text: str) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def _text(value: Any) -> dict[str, Any]:
    return {"type": "text", "text": json.dumps(value, ensure_ascii=False, default=str)}
