"""One ``<source>__<tool>`` call (16.5): forwarded to its ACP server, its table read early, its result delivered.

The forwarder owns what lives exactly as long as a forwarded call: the count of calls in flight per
ACP server (``InFlight``: the early CSV reads only a lone call's table file, another call's file would
be ambiguous), the early CSV reader started a short while into the call (early.py), and the files
served to the call by ``acp/read_table`` (8.8), removed when it ends.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from analytics_acp.call_cap import BUSY_CODE, BUSY_NAME
from analytics_acp.errors import AcpError, UpstreamError, error_from_payload
from analytics_acp.host import ProtocolError, ToolResult
from analytics_acp.host.client import ProgressFn
from analytics_acp.tablefile import uri_path

from ..fleet.process import AcpProcess, ServerUnavailable
from ..query import preload
from ..query.cache import TableCache
from ..sources.entries import LIMIT_FIELDS, Source
from ..sources.redact import Redactor
from ..store.datasets import DatasetStore
from . import early as early_csv
from .exposure import Route, forward_arguments
from .results import StoredTable, error_note, extraction_note, handle_artifacts, store_extraction

log = logging.getLogger("analytics_acp_bridge")


@dataclass
class Answer:
    """What a tool call gives the client: MCP content blocks, isError, and the datasets it saved or read
    (``StoredTable.shown`` entries: what the dataset view shows for an MCP Apps client)."""

    blocks: list[dict[str, Any]]
    is_error: bool = False
    datasets: list[dict[str, Any]] = field(default_factory=list)
    # For the activity record (store/activity.py): the datasets the call saved (not those it only read), the
    # rows it extracted, the cost estimate its ACP gave (9.2) and the typed error (12.1).
    produced: list[dict[str, Any]] = field(default_factory=list)
    rows: int | None = None
    cost_usd: float | None = None
    error: dict[str, Any] | None = None


class InFlight:
    """Calls in flight per ACP server, counted by one context manager (entered for the call, left at its end)."""

    def __init__(self) -> None:
        self._count: dict[str, int] = {}

    @contextlib.contextmanager
    def call(self, key: str) -> Iterator[bool]:
        """Count one call on ``key`` while the block runs; yields True when no other call is in flight there."""
        busy = self._count.get(key, 0)
        self._count[key] = busy + 1
        try:
            yield busy == 0
        finally:
            self._count[key] -= 1
            if not self._count[key]:
                del self._count[key]

    def count(self, key: str) -> int:
        """Calls in flight on ``key`` now."""
        return self._count.get(key, 0)


@dataclass
class _Due:
    """One call's early reader, to start at ``at`` unless the call has ended (``ended``) by then."""

    at: float
    early: early_csv.EarlyCsv
    ended: bool = False


class EarlyStarter:
    """Starts each call's early reader START_AFTER_S into the call, from one long-lived task (anyio only).

    One task for every call instead of a timer task group per call (measured: ~60 us a call); calls
    that answer sooner never start a reader. All delays are equal, so the queue is in deadline order.
    """

    def __init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[_Due](math.inf)

    @contextlib.contextmanager
    def during_call(self, early: early_csv.EarlyCsv | None) -> Iterator[None]:
        """Start ``early`` if the block is still running START_AFTER_S from now."""
        if early is None:
            yield
            return
        due = _Due(anyio.current_time() + early_csv.START_AFTER_S, early)
        self._send.send_nowait(due)
        try:
            yield
        finally:
            due.ended = True

    async def run(self) -> None:
        """The starting task (in the bridge's task group, until it ends)."""
        async with self._receive:
            async for due in self._receive:
                await anyio.sleep_until(due.at)
                if not due.ended:
                    due.early.start()


class Forwarder:
    """Forwards published source tools to their ACP servers and delivers the results (datasets, artifacts)."""

    def __init__(self, store: DatasetStore, query_cache: TableCache, *, sources_path: Path, read_dir: Path,
                 inline_max_bytes: int, session_id: Callable[[str], str], redactor: Redactor | None = None):
        self.store = store
        self.redactor = redactor  # the datasets' meta is scrubbed as the client's texts are (meta.json is a project file)
        self.query_cache = query_cache
        self.sources_path = sources_path
        self.read_dir = read_dir
        self.inline_max_bytes = inline_max_bytes
        self.session_id = session_id
        self.in_flight = InFlight()
        self.early_starter = EarlyStarter()  # its run() lives in the bridge's task group
        self._read_files: dict[str, list[Path]] = {}

    async def resolve(self, ref: str, call_id: str | None) -> dict[str, Any]:
        """acp/read_table (8.8) for a forwarded call; a file answer is removed when that call ends."""
        wire = await anyio.to_thread.run_sync(self.store.table_wire, ref, self.read_dir, self.inline_max_bytes)
        if wire.get("format") == "file" and call_id:
            self._read_files.setdefault(call_id, []).append(uri_path(wire["table_uri"]))
        return wire

    async def forward(self, source: Source, proc: AcpProcess, route: Route, arguments: dict[str, Any],
                      progress: ProgressFn | None = None, limits: dict[str, Any] | None = None) -> Answer:
        """Call ``route`` on ``proc`` for ``source``; the client's answer (its texts not yet scrubbed).

        ``limits``: 5.1 limits for this call only, over the source's (a higher ``cost_limit_usd`` the person
        confirmed on the page). Cancelling the calling task cancels the call at its server; its early CSV is
        dropped (no dataset)."""
        call_id = uuid.uuid4().hex
        meta = {
            **source.meta(),
            **{k: v for k, v in (limits or {}).items() if k in LIMIT_FIELDS},
            "session_id": self.session_id(source.id),
            "conversation_id": self.session_id(source.id),
            "call_id": call_id,
            "inline_max_bytes": self.inline_max_bytes,
        }
        call = partial(proc.call, route.tool, forward_arguments(route, arguments), meta, on_progress=progress)
        early: early_csv.EarlyCsv | None = None
        try:
            with self.in_flight.call(source.acp) as alone:
                early = self._early_reader(proc) if alone else None
                try:
                    with self.early_starter.during_call(early):
                        result = await call()
                except ServerUnavailable as exc:
                    raise UpstreamError(str(exc)) from None
                except ProtocolError as exc:
                    payload = _protocol_payload(exc)
                    return Answer([text_block({"error": payload})], True, error=payload)
                finally:
                    for path in self._read_files.pop(call_id, []):
                        path.unlink(missing_ok=True)
            answer = await self.deliver(source, proc, route, result, early)
            if route.table_args and not answer.is_error:
                answer.datasets += await anyio.to_thread.run_sync(self._read, route, arguments)
            return answer
        finally:
            if early is not None:  # also when the call failed or was cancelled: its partial CSV goes
                early.cancel()

    def _early_reader(self, proc: AcpProcess) -> early_csv.EarlyCsv | None:
        """A reader of this call's table file while the server writes it (early.py), or None."""
        if not early_csv.supported() or proc.launch.url:  # an HTTP server's files are not ours to read
            return None
        return early_csv.EarlyCsv(proc.tmp_dir, self.store.dir, self.store.writing)

    def _read(self, route: Route, arguments: dict[str, Any]) -> list[dict[str, Any]]:
        """The datasets the call named in its table_ref arguments (8.8), as the dataset view lists them."""
        out = []
        for name in route.table_args:
            try:
                dataset = self.store.resolve(str(arguments[name]))
            except (KeyError, AcpError):
                continue
            entry = {"id": dataset.id, "name": None, "title": dataset.meta.get("title"), "rows": dataset.row_count}
            if entry not in out:
                out.append(entry)
        return out

    async def deliver(self, source: Source, proc: AcpProcess, route: Route, result: ToolResult,
                      early: early_csv.EarlyCsv | None = None) -> Answer:
        """The client's blocks for a result: its text, the dataset note (11.3, 16.6) and its artifacts (8.10)."""
        plain = proc.plain_mcp_reason is not None  # 4.3: a plain MCP server's _meta.acp is not ACP; ignore it
        if result.is_error:
            payload = None if plain else result.error
            if payload is None:
                parsed = _parse(result.text)
                payload = parsed.get("error") if isinstance(parsed, dict) else None
            blocks: list[dict[str, Any]] = [{"type": "text", "text": result.text or json.dumps({"error": payload})}]
            note = error_note(payload or {}, source.id, self.sources_path)
            if note:
                blocks.append({"type": "text", "text": note})
            data = payload.get("data") if isinstance(payload, dict) else None
            cost = data.get("estimate_usd") if isinstance(data, dict) else None  # 9.2: the refused call's estimate
            return Answer(blocks, True, error=payload if isinstance(payload, dict) else None,
                          cost_usd=cost if isinstance(cost, int | float) else None)
        model_response = _parse(result.text)
        blocks = [{"type": "text", "text": result.text}]
        extra = [b for b in result.content[1:] if isinstance(b, dict)]
        system_data = None if plain else result.system_data
        stored: list[StoredTable] = []
        if system_data and isinstance(model_response, dict):
            saved, stored = await self._store(source, proc, route, result, model_response, system_data, early)
            blocks.append(saved)
        if isinstance(model_response, dict):
            artifacts = await anyio.to_thread.run_sync(handle_artifacts, model_response, self.store)
            if artifacts.changed:
                blocks[0] = text_block(model_response)  # artifact paths now point into acp-data/files (8.10)
            blocks[1:1] = artifacts.blocks
            if artifacts.notes:
                blocks.append({"type": "text", "text": " ".join(artifacts.notes)})
        shown = [table.shown() for table in stored]
        info = (None if plain else result.system_info) or {}
        rows = sum(int(t.get("rows") or 0) for t in shown) if shown else info.get("total_rows")
        cost = info.get("cost_estimate_usd")
        return Answer(blocks + extra, False, shown, produced=list(shown), rows=rows if isinstance(rows, int) else None,
                      cost_usd=cost if isinstance(cost, int | float) and not isinstance(cost, bool) else None)

    async def _store(self, source: Source, proc: AcpProcess, route: Route, result: ToolResult,
                     model_response: dict[str, Any], system_data: dict[str, Any],
                     early: early_csv.EarlyCsv | None) -> tuple[dict[str, Any], list[StoredTable]]:
        """Save the result's tables as datasets; the note that says where they are (or why they are not), and them."""
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
                    scrub=self.redactor.value if self.redactor is not None else None,
                )
            )
        except OSError as exc:  # a full disk or a read-only project must not hide the answer itself
            log.error("cannot store %s result: %s", route.public, exc.strerror or type(exc).__name__)
            return {"type": "text", "text": (
                f"The bridge could not save this extraction in acp-data ({exc.strerror or type(exc).__name__}); "
                "only the rows above are available. Tell the user to check the project folder.")}, []
        return {"type": "text", "text": extraction_note(stored, empty, system_data.get("format") == "tables")}, stored


def _protocol_payload(exc: ProtocolError) -> dict[str, Any]:
    if -32049 <= exc.code <= -32010:  # an ACP error sent as a JSON-RPC error
        return error_from_payload({"code": exc.code, "message": exc.message, "data": exc.data}).payload()
    if exc.code == BUSY_CODE:  # the bridge's own words (fleet/process.py CallPlaces): the server's ask the bridge
        return {"code": exc.code, "name": BUSY_NAME, "message": exc.message}  # itself, not the model
    return {"code": exc.code, "name": "MCP_ERROR", "message": exc.message}


def _parse(text: str) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def text_block(value: Any) -> dict[str, Any]:
    """An MCP text block holding ``value`` as JSON."""
    return {"type": "text", "text": json.dumps(value, ensure_ascii=False, default=str)}
