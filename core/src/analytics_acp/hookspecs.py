"""Every extension point of analytics-acp, in one module (pluggy project ``analytics_acp``).

A connector is a plugin module whose ``plugin.py`` implements some of these with
``@hookimpl``. Each served connector gets its own plugin manager (the connector
plugin plus any extension plugins), so hooks never mix two connectors.
Implementations may accept fewer arguments than the spec; call hooks by keyword.

Two kinds of hook (issue 38.4): ``CONNECTOR_HOOKS`` are the connector's own behaviour (its declaration,
resources, normalization, cost, identity, lifecycle); most are ``firstresult``, so an extension that
implemented one would silently answer in the connector's place: the core refuses such an extension at
load. ``EXTENSION_HOOKS`` are what extension plugins (entry-point group ``analytics_acp.plugins``) add.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from .arguments import ToolArguments
    from .context import CallContext
    from .declarations import BlockSpec, ConnectorInfo, CostEstimate, Resource, ResourceRef, ToolSpec

hookspec = pluggy.HookspecMarker("analytics_acp")
hookimpl = pluggy.HookimplMarker("analytics_acp")

CONNECTOR_HOOKS = frozenset({
    "connector_declaration", "list_resources", "normalize_resource_id", "credentials_resource",
    "estimate_cost", "credential_identity", "connector_ready", "connector_shutdown",
})
EXTENSION_HOOKS = frozenset({"register_tools", "register_blocks", "around_tool_call"})


@hookspec(firstresult=True)
def connector_declaration() -> ConnectorInfo | None:
    """Return the connector's ``ConnectorInfo`` (identity, defaults, schemas, resource_id, cost, catalog)."""


@hookspec
def register_tools(register: Callable[[ToolSpec], None], info: ConnectorInfo) -> None:
    """Call ``register(ToolSpec)`` once per tool to publish (a connector's own are ``ConnectorInfo.tools``); an
    extension's tool declares its argument model like a connector's (a hand-written input_schema is a load error)."""


@hookspec
def register_blocks(register: Callable[[BlockSpec], None], info: ConnectorInfo) -> None:
    """Call ``register(BlockSpec)`` once per autocontext block (7.1; a connector's own are ``ConnectorInfo.blocks``)."""


@hookspec(firstresult=True)
def list_resources(ctx: CallContext) -> list[Resource] | None:
    """Return every resource the credentials can see, in the source's order (6.3), as ``Resource`` items."""


@hookspec(firstresult=True)
def normalize_resource_id(resource_id: str, ctx: CallContext) -> str | ResourceRef | None:
    """Return the normalized id (str) or a ``ResourceRef`` with its level; raise InvalidArguments if malformed."""


@hookspec(firstresult=True)
def credentials_resource(credentials: dict[str, Any] | None, config: dict[str, Any]) -> str | None:
    """Return the resource id the credentials themselves name (a database in the connection settings,
    a single file), or None; the core uses it when no default_resource_id is configured (6)."""


@hookspec(firstresult=True)
def estimate_cost(tool: ToolSpec, arguments: ToolArguments, ctx: CallContext) -> CostEstimate | float | None:
    """Return a ``CostEstimate`` (or USD float) for a paid tool call before it runs (9.2); ``arguments`` is the
    tool's parsed argument model (read its attributes: a dict-style read raises a TypeError naming the change)."""


@hookspec(firstresult=True)
def credential_identity(credentials: dict[str, Any] | None) -> str | None:
    """Return a stable, non-secret identity string for credentials (e.g. a client_email); the core hashes it."""


@hookspec(firstresult=True)
def around_tool_call(tool: ToolSpec, arguments: ToolArguments, ctx: CallContext) -> Any:
    """Wrap every tool call (``arguments``: the parsed argument model). Implement with ``@hookimpl(wrapper=True)``: ``inner = yield`` is the awaitable
    that runs the tool; return an awaitable (e.g. a coroutine that awaits ``inner``) for timing, audit, budgets."""


@hookspec
def connector_ready() -> None:
    """Called once, in a background thread, after the server answered the first request that follows
    initialize (tools/list, as a rule): warm-up work the first call would otherwise pay for (importing heavy
    client libraries) while the model is still reading the tools. Start-up itself stays lean, and the
    hand-shake's answers never wait on it; a failure here is logged and changes nothing."""


@hookspec
def connector_shutdown() -> None:
    """Release what the connector holds (browsers, pools) when the server stops."""
