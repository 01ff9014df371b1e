"""A ready ``CallContext`` for connector unit tests: call a tool's ``run`` directly, no server.

The tool gets its arguments as the core hands them over, parsed by its model:
``run(ForecastArguments.parse({"table_ref": "sales", "horizon": 7}), make_ctx("prediction", "forecast", ...))``
(``parse`` refuses what the core would, with the same ACP_INVALID_ARGUMENTS message).
``make_ctx("prediction", "forecast", tables={"sales": HostTable(...)})`` gives a context whose
``read_table`` is answered by a ``FakeHost`` (8.8): unknown refs fail with ACP_TABLE_NOT_FOUND
like a host, and ``ctx.table_reader.requests`` lists what the tool asked for. ``make_ctx(...,
signals=RecordingSignals(cancel_after=2))`` records the tool's progress and cancels the call once it
reported that far, as a client's notifications/cancelled would (issue 28).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..context import CallContext, ClientInfo, HostTable
from ..errors import TableNotFound
from ..signals import CallSignals


class FakeHost:
    """Answers ``acp/read_table`` from a dict of ``HostTable`` and records every ref asked for.

    The dict is kept, not copied: a test may add tables after building the context.
    """

    def __init__(self, tables: dict[str, HostTable] | None = None):
        self.tables: dict[str, HostTable] = tables if tables is not None else {}
        self.requests: list[str] = []

    async def __call__(self, ref: str, call_id: str | None = None) -> HostTable:
        self.requests.append(ref)
        if ref not in self.tables:
            raise TableNotFound(f"No dataset or report named {ref!r} in this conversation. Use acp_datasets to list ids.")
        return self.tables[ref]


class RecordingSignals(CallSignals):
    """The core's call signals with every ``ctx.progress`` recorded in ``seen`` (done, total, message);
    with ``cancel_after`` the call is cancelled once progress reaches it (no client, no event loop needed)."""

    def __init__(self, cancel_after: float | None = None) -> None:
        super().__init__()
        self.seen: list[tuple[float, float | None, str | None]] = []
        self.cancel_after = cancel_after

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Record, and cancel at ``cancel_after``."""
        self.seen.append((done, total, message))
        if self.cancel_after is not None and done >= self.cancel_after:
            self.cancel()


def make_ctx(
    connector_id: str = "test",
    tool: str = "test",
    *,
    tables: dict[str, HostTable] | FakeHost | None = None,
    host_tables: bool | None = None,
    credentials: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    resource_id: str | None = None,
    tmp_dir: Path | None = None,
    **fields: Any,
) -> CallContext:
    """A ``CallContext`` as the runtime would build it for an ACP client, for calling ``run(Model.parse({...}), ctx)``.

    ``tables`` (a dict or a ``FakeHost``) serves ``ctx.read_table``; the client declares
    ``host_tables`` when tables are given (pass ``host_tables=False`` to test a host without
    them). Any other ``CallContext`` field (``row_limit``, ``session_id``, ``client`` …) goes
    through ``fields``; pass ``connector_state=`` one ``ConnectorState`` to several contexts to share what the
    connector keeps between calls (clients, engines) as a server does, and ``close()`` it as its stop would.
    """
    host = tables if isinstance(tables, FakeHost) else FakeHost(tables) if tables is not None else None
    if host_tables is None:
        host_tables = host is not None
    fields.setdefault("client", ClientInfo(acp=True, host_tables=host_tables))
    return CallContext(
        connector_id=connector_id,
        tool=tool,
        credentials=credentials,
        config=dict(config or {}),
        resource_id=resource_id,
        tmp_dir=tmp_dir,
        table_reader=host,
        **fields,
    )
