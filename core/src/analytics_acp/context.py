"""``CallContext``: what a tool or block sees of the effective configuration (5.3).

The runtime builds one per tools/call from ``_meta.acp`` > ``acp/configure`` > defaults.
Credentials live here only for the duration of the call; nothing here is ever echoed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, overload

from . import access
from .errors import CredentialsMissing, HostTablesUnsupported, ResourceRequired
from .signals import CallSignals
from .state import CallSlot, CallState, ConnectorSlot, ConnectorState

T = TypeVar("T")


@dataclass
class ClientInfo:
    """The client's ``experimental.acp`` capability (4.1); ``acp=False`` for a plain MCP client."""

    acp: bool = False
    version: str | None = None
    stores_system_data: bool = False
    multi_table: bool = False
    host_tables: bool = False
    autocontext_delivery: str | None = None


def credentials_missing_message(client: ClientInfo) -> str:
    """ACP_CREDENTIALS_MISSING's text. For a plain MCP client it tells the host author why (2.2, 4.3):
    without ``capabilities.experimental.acp`` in initialize the server ignores ``_meta.acp``."""
    if client.acp:
        return "This source needs credentials and none were configured. Ask the user to add them in the source settings."
    declared = (f"declared ACP {client.version}, a major version this server does not speak (4.3)" if client.version
                else "did not declare capabilities.experimental.acp in initialize")
    return (
        f"This source needs credentials, and the MCP client {declared}, so it is a plain MCP client (2.2) and "
        "the server ignores _meta.acp, credentials included. The host must declare "
        '"capabilities": {"experimental": {"acp": {"version": "1.0"}}} in initialize and then send the '
        "credentials in _meta.acp or acp/configure."
    )


@dataclass
class HostTable:
    """A table read from the host with ``acp/read_table`` (8.8): typed headers and all rows."""

    ref: str
    headers: list[dict[str, Any]]
    rows: list[dict[str, Any]]

    @property
    def columns(self) -> list[str]:
        """Column names in header order (falls back to the first row's keys)."""
        if self.headers:
            return [h["name"] for h in self.headers]
        return list(self.rows[0].keys()) if self.rows else []

    def header_type(self, column: str) -> str | None:
        """Declared type of a column, if the host sent one."""
        for h in self.headers:
            if h.get("name") == column:
                return h.get("type")
        return None


class ReadTable(Protocol):
    """How a call reaches the host's ``acp/read_table`` (8.8): the transport's sender (which also takes the
    call's ``call_id``), the same with the call_id bound (``CallContext.table_reader``), or the kit's FakeHost."""

    def __call__(self, ref: str, call_id: str | None = None) -> Awaitable[HostTable]: ...


ANONYMOUS_IDENTITY = hashlib.sha256(b"anonymous").hexdigest()[:16]


@dataclass
class CallContext:
    """Effective settings of one call. Tools and blocks receive it as ``ctx``.

    The runtime builds it per call; connector unit tests build one with
    ``analytics_acp.kit.make_ctx``. Everything is a plain constructor argument:
    ``credential_identity`` is the hashed identity that partitions caches (7.4, 10.1.5),
    ``table_reader`` is how ``read_table`` reaches the host (``acp/read_table``, 8.8).
    Tools use the fields and the methods ``require_credentials``, ``require_resource_id``, ``check_access``,
    ``read_table`` / ``read_table_sync``, ``progress`` / ``on_cancel`` / ``cancelled`` (signals.py), ``state``
    (state.py: the connector's state and this call's, by slot) and the property ``state_key``.
    """

    connector_id: str
    tool: str
    credentials: dict[str, Any] | None = None
    config: dict[str, Any] = field(default_factory=dict)
    resource_id: str | None = None
    resource_level: str | None = None
    row_limit: int = 25
    cost_limit_usd: float = 0
    field_limit: int = 20
    default_resource_id: str | None = None
    tables: list[str] | None = None  # catalog selection from _meta/configure (8.7), before arguments
    session_id: str | None = None
    conversation_id: str | None = None
    call_id: str | None = None
    sampling: str = "head"
    inline_max_bytes: int | None = None
    autocontext_delivered: bool | None = None
    autocontext_blocks: list[str] | None = None
    client: ClientInfo = field(default_factory=ClientInfo)
    tmp_dir: Path | None = None
    cache_dir: Path | None = None
    warnings: list[str] = field(default_factory=list)  # tools may append; they reach system_info.warnings
    cost_estimate_usd: float = 0  # set by the cost preflight (9.2) before a paid tool runs
    credential_identity: str = ANONYMOUS_IDENTITY  # a hash, never the secret itself (7.4, 10.1.5)
    table_reader: ReadTable | None = field(default=None, repr=False, compare=False)
    signals: CallSignals = field(default_factory=CallSignals, repr=False, compare=False)
    # The loaded connector's state (made at load, closed at shutdown) and this call's own (state.py).
    connector_state: ConnectorState = field(default_factory=ConnectorState, repr=False, compare=False)
    call_state: CallState = field(default_factory=CallState, repr=False, compare=False)

    @overload
    def state(self, slot: ConnectorSlot[T]) -> T: ...

    @overload
    def state(self, slot: CallSlot[T]) -> T: ...

    def state(self, slot: ConnectorSlot[T] | CallSlot[T]) -> T:
        """The value of a ``ConnectorSlot`` (kept by the connector between calls) or a ``CallSlot`` (this call's),
        made on first use: where a connector keeps clients, caches and per-call budgets instead of module globals."""
        if isinstance(slot, CallSlot):
            return self.call_state.get(slot, self)
        return self.connector_state.get(slot)

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress (rows fetched of ``total``, pages, steps); sent only when the client asked for it."""
        self.signals.progress(done, total, message)

    def on_cancel(self, callback: Callable[[], Any]) -> None:
        """Run ``callback`` when the client cancels this call (e.g. the database connection's ``interrupt``)."""
        self.signals.on_cancel(callback)

    @property
    def cancelled(self) -> bool:
        """True once the client cancelled this call: stop at the next page, batch or step."""
        return self.signals.cancelled

    def require_credentials(self) -> dict[str, Any]:
        """The credentials, or ACP_CREDENTIALS_MISSING (10.3) when the host sent none."""
        if not self.credentials:
            raise CredentialsMissing(credentials_missing_message(self.client))
        return self.credentials

    def require_resource_id(self) -> str:
        """The call's resource_id (set by the core before a ``needs_resource`` tool runs, 6.2), or ACP_RESOURCE_REQUIRED."""
        if not self.resource_id:
            raise ResourceRequired(
                "This tool needs a resource_id. Call autocontext without arguments to list the available resources."
            )
        return self.resource_id

    @property
    def state_key(self) -> str | None:
        """Per-conversation key for server-side state (5.2: conversation_id, falling back to session_id)."""
        return self.conversation_id or self.session_id

    def check_access(self, target: str | None, operation: access.Operation, rules_key: str = "table_rules") -> str:
        """Raise ACP_READ_ONLY_VIOLATION unless ``operation`` ("read"/"add"/"replace") fits 10.6; return the mode."""
        return access.check_access(self.config, target, operation, rules_key)

    async def read_table(self, ref: str) -> HostTable:
        """Ask the host for table ``ref`` with ``acp/read_table`` (8.8).

        Raises ACP_HOST_TABLES_UNSUPPORTED when the client did not declare host_tables,
        and passes the host's -32021/-32022 errors on as typed errors.
        """
        if not self.client.host_tables or self.table_reader is None:
            raise HostTablesUnsupported(
                "This tool reads a host table (table_ref), but the host does not support acp/read_table."
            )
        return await self.table_reader(ref)

    def read_table_sync(self, ref: str) -> HostTable:
        """``read_table`` for sync tools (they run in a worker thread): hops to the event loop."""
        import anyio.from_thread  # here, not at start-up: the package imports this module (cold start, tools/bench)

        return anyio.from_thread.run(self.read_table, ref)
