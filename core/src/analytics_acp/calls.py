"""One tools/call, from ``_meta.acp`` to the three-part result (5.3, 6, 7, 8, 9, 12).

``ConnectorRuntime`` runs the steps; what lives as long as the server process (the loaded
connector, the autocontext engine and caches, the on_first_call tracker and recent-resource
store) is one ``RuntimeState`` (runtime_state.py) that the step modules receive. Transport code (runtime.py) hands it the session state and the client capability. Each step
has its own module: call_context (effective configuration), reserved_tools (autocontext),
resource_resolution, preflight (9.2), invoke + finishing (result building), first_call (7.5),
http_files (8.5 over HTTP).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio

from . import schemas
from .access import parse_rules
from .argument_limits import check_arguments_size
from .arguments import ToolArguments
from .call_context import build_call_context, validate_config, validate_credentials
from .constants import ACP_INLINE_MAX_BYTES, ACP_TOOL_AUTOCONTEXT, ACP_TOOL_AUTOCONTEXT_DATA
from .context import CallContext, ClientInfo, ReadTable, credentials_missing_message
from .declarations import ToolSpec
from .effective import SessionConfig, echoable_arguments
from .envelope import CallRecord, failure
from .errors import AcpError, CredentialsMissing, InvalidArguments, UpstreamError
from .finishing import finish_output, respond
from .invoke import invoke_tool
from .logs import log_traceback
from .plugins import LoadedConnector
from .preflight import cost_preflight
from .reserved_tools import run_autocontext, run_autocontext_data
from .resource_resolution import resolve_resource, resolve_resource_off_loop
from .results import BuildSettings, catalog_for_tool, resolve_selection
from .runtime_state import RuntimeState
from .setup_check import SetupChecks, credentials_needed, missing_credentials
from .signals import CallSignals, SendProgress
from .toolschemas import parse_tool_arguments, uses_resource

log = logging.getLogger("analytics_acp")


class ConnectorRuntime:
    """Process-wide state of one served connector and the steps of each call."""

    def __init__(self, loaded: LoadedConnector, state: RuntimeState | None = None):
        self.loaded = loaded
        self.info = loaded.info
        self.state = state or RuntimeState.build(loaded)  # a transport may have built it for initialize
        self.setup_checks = SetupChecks(loaded.info.id)  # the connector's check_setup, bounded

    async def configure(self, session: SessionConfig, params: dict[str, Any], *,
                        validate_only: bool = False) -> tuple[SessionConfig, dict[str, Any]]:
        """acp/configure (5.1): the merged session and ``{ok, effective}``; raises before changing anything.

        New credentials or config also pass the connector's own offline check (``ConnectorInfo.check_setup``).
        ``validate_only`` (setup_check.py): ``params`` are checked as the whole set-up of a fresh session
        (credentials the source needs must be there), and ``session`` comes back unchanged.
        """
        new = (SessionConfig() if validate_only else session).merged(
            params, self.info, partial(validate_credentials, self.info), partial(validate_config, self.info)
        )
        if validate_only and not new.credentials and credentials_needed(self.info.credentials_schema):
            raise missing_credentials(self.info.credentials_schema)
        if validate_only or params.get("credentials") is not None or params.get("config") is not None:
            await self._check_setup(new)
        return (session if validate_only else new), {"ok": True, "effective": new.effective(self.info)}

    async def _check_setup(self, session: SessionConfig) -> None:
        """Rule lists of the config (10.6) and the connector's ``check_setup`` (offline, bounded: setup_check.py)."""
        config = validate_config(self.info, session.config)
        for key in self.info.access_rule_keys:
            if key in config:
                parse_rules(config[key], key)
        check = self.info.check_setup
        if check is None:
            return
        secrets = schemas.secret_values(session.credentials, self.info.credentials_schema)
        try:
            await self.setup_checks.run(check, session.credentials, config)
        except AcpError as exc:  # 10.1.4: whatever the check wrote, no credential string leaves
            raise schemas.redact_error(exc, secrets) from None
        except Exception as exc:  # a connector bug: typed, logged without secrets
            text = schemas.redact(f"{type(exc).__name__}: {exc}", secrets)
            log.error("check_setup of %s failed: %s", self.info.id, text)
            raise UpstreamError(f"The {self.info.id} ACP could not check the set-up ({text}).") from None

    def tool_names(self) -> list[str]:
        """Every published tool name, the reserved ones first."""
        return [ACP_TOOL_AUTOCONTEXT, ACP_TOOL_AUTOCONTEXT_DATA, *self.loaded.tools]

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        meta: Any,
        session: SessionConfig,
        client: ClientInfo,
        read_table: ReadTable | None = None,
        file_url: Callable[[Path], str] | None = None,
        send_progress: SendProgress | None = None,
    ) -> dict[str, Any]:
        """Run one tools/call and return the CallToolResult dict. Never raises for tool errors (12.1)."""
        # A top-level null is an argument left out, for every tool and the core's own arguments (resource_id,
        # tables), as ToolArguments.parse reads it: many clients send each optional parameter, null when unset.
        arguments = {k: v for k, v in (arguments or {}).items() if v is not None}
        meta = meta if isinstance(meta, dict) else {}
        d = self.info.defaults
        record = CallRecord(
            connector_id=self.info.id,
            tool=name,
            kind=self._kind(name),
            arguments=echoable_arguments(arguments, self.state.declared_arguments(name)),
            row_limit=d.row_limit,
            cost_limit_usd=d.cost_limit_usd,
        )
        ctx: CallContext | None = None
        try:
            check_arguments_size(name, arguments)
            ctx = build_call_context(self.loaded, name, meta, session, client, read_table, CallSignals(send_progress))
            record.row_limit, record.cost_limit_usd = ctx.row_limit, ctx.cost_limit_usd
            if name == ACP_TOOL_AUTOCONTEXT:
                return await run_autocontext(self.state, arguments, ctx, record)
            if name == ACP_TOOL_AUTOCONTEXT_DATA:
                return await run_autocontext_data(self.state, arguments, ctx, record)
            tool = self.loaded.tools.get(name)
            if tool is None:
                raise InvalidArguments(
                    f"Unknown tool {name!r}. Available tools: {', '.join(self.tool_names())}."
                )
            return await self._run_tool(tool, arguments, ctx, record, file_url)
        except AcpError as exc:
            return failure(record, self._scrubbed(exc, ctx))
        except Exception as exc:  # 12.1 / 14.1 step 13: untyped -> ACP_UPSTREAM_ERROR
            secrets = self._secrets(ctx)
            text = schemas.redact(f"{type(exc).__name__}: {exc}", secrets)
            log.error("tool %s failed: %s", name, text)
            log_traceback(f"tool {name}", exc, secrets)
            return failure(record, UpstreamError(f"The source failed ({text}). Retry later or change the request."))

    def _kind(self, name: str) -> str:
        if name in (ACP_TOOL_AUTOCONTEXT, ACP_TOOL_AUTOCONTEXT_DATA):
            return name
        tool = self.loaded.tools.get(name)
        return tool.kind if tool else "info"

    def _secrets(self, ctx: CallContext | None) -> list[str]:
        return schemas.secret_values(ctx.credentials if ctx else None, self.info.credentials_schema)

    def _scrubbed(self, exc: AcpError, ctx: CallContext | None) -> AcpError:
        # Safety net (10.1.4): whatever a connector put in an error, no credential string leaves.
        return schemas.redact_error(exc, self._secrets(ctx))

    async def _run_tool(self, tool: ToolSpec, args: dict[str, Any], ctx: CallContext, record: CallRecord,
                        file_url: Callable[[Path], str] | None) -> dict[str, Any]:
        # Parsed once (issue 38.1): the tool, its cost estimate and around_tool_call wrappers get the typed object.
        parsed, core_args = parse_tool_arguments(self.state.published_schema(tool), tool, args)
        # Credentials first: without them there is no resource to default to or list (and a plain MCP
        # client learns why its _meta.acp was ignored, 2.2).
        if tool.needs_credentials and credentials_needed(self.info.credentials_schema) and not ctx.credentials:
            raise CredentialsMissing(credentials_missing_message(ctx.client))
        before: Callable[[], None] | None = None
        wrapped = bool(self.loaded.pm.hook.around_tool_call.get_hookimpls())
        if tool.needs_resource and uses_resource(self.info):
            if tool.paid or wrapped:
                # The cost estimate and around_tool_call wrappers see the resolved resource.
                ref = await resolve_resource_off_loop(self.loaded, core_args.get("resource_id"), ctx, ctx.default_resource_id)
                record.resource_id = ref.id
            else:
                def before() -> None:
                    # Nothing reads the resource before the tool itself: it is resolved in the tool's own worker
                    # thread, one thread hop per call instead of two (bench case 4b: a hop costs more than the work).
                    ref = resolve_resource(self.loaded, core_args.get("resource_id"), ctx, ctx.default_resource_id)
                    record.resource_id = ref.id
        selection = None
        catalog = catalog_for_tool(self.info.table_catalog, tool.name)
        if tool.multitable and catalog:
            selection = resolve_selection(core_args.get("tables"), ctx.tables, self.info.defaults.tables, catalog, tool.name)
            record.arguments["tables"] = list(selection)
            record.extra["tables_selected"] = list(selection)
        if tool.paid:
            # An estimate is often a blocking request (BigQuery's dry run): keep it off the event loop.
            await anyio.to_thread.run_sync(cost_preflight, self.loaded, tool, parsed, ctx, record)
        settings = BuildSettings(
            row_limit=ctx.row_limit,
            field_limit=ctx.field_limit,
            sampling=ctx.sampling,
            inline_max_bytes=ctx.inline_max_bytes if ctx.inline_max_bytes is not None else ACP_INLINE_MAX_BYTES,
            tmp_dir=ctx.tmp_dir,
            file_prefix=self.info.id,
            multi_table=ctx.client.multi_table,
            selection=selection,
            catalog=catalog,
        )
        finish = partial(finish_output, tool, settings)

        def innermost(tool: ToolSpec, arguments: ToolArguments, ctx: CallContext) -> Any:
            return invoke_tool(tool, arguments, ctx, finish, before)  # the awaitable that around_tool_call wrappers wrap

        async with ctx.signals.running():  # progress sent while it runs; a cancel interrupts it (signals.py)
            if wrapped:
                outcome = await self.loaded.hook.around_tool_call.call_extra(
                    [innermost], {"tool": tool, "arguments": parsed, "ctx": ctx}
                )
            else:  # no wrapper registered: pluggy's call_extra would build a hook implementation per call
                outcome = await innermost(tool, parsed, ctx)
            if outcome[1] is not None:  # an extraction: the client that asked for progress hears its end
                ctx.signals.settle(outcome[1].total_rows)
        return await respond(self.state, outcome, ctx, record, file_url)
