"""One tools/call, from ``_meta.acp`` to the three-part result (5.3, 6, 7, 8, 9, 12).

``ConnectorRuntime`` holds what lives as long as the server process: the loaded connector,
the autocontext engine and caches, the on_first_call tracker and recent-resource store.
Transport code (runtime.py) hands it the session state and the client capability.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio

from . import schemas
from .autocontext import AutocontextEngine
from .cache import TTLCache
from .constants import ACP_INLINE_MAX_BYTES, ACP_TOOL_AUTOCONTEXT, ACP_TOOL_AUTOCONTEXT_DATA
from .context import CallContext, ClientInfo, HostTable
from .declarations import CostEstimate, Extraction, Info, MultiExtraction, ResourceRef, ToolSpec
from .delivery import DeliveryTracker
from .effective import SessionConfig, check_limits, pick
from .envelope import CallRecord, failure, success
from .errors import (
    AcpError,
    CostLimitExceeded,
    CredentialsMissing,
    InvalidArguments,
    ResourceRequired,
    UpstreamError,
)
from .invoke import invoke_tool
from .plugins import LoadedConnector
from .resources import RecentStore, ResourceListCache, suggest_resources
from .results import BuildSettings, Built, build_extraction, build_multitable, resolve_selection
from .toolschemas import uses_resource, validate_arguments

log = logging.getLogger("analytics_acp")

ReadTableFn = Callable[[str, "str | None"], Awaitable[HostTable]]
_private_tmp: Path | None = None


def tmp_dir() -> Path:
    """ACP_TMP_DIR (13.3) or a private 0700 temp dir of this process; never the server folder."""
    global _private_tmp
    env = os.environ.get("ACP_TMP_DIR")
    if env:
        path = Path(env)
        path.mkdir(parents=True, exist_ok=True)
        return path
    if _private_tmp is None:
        _private_tmp = Path(tempfile.mkdtemp(prefix="analytics-acp-"))
    return _private_tmp


def cache_dir() -> Path | None:
    """ACP_CACHE_DIR (13.3) or None: then caches are memory-only."""
    env = os.environ.get("ACP_CACHE_DIR")
    if not env:
        return None
    path = Path(env)
    path.mkdir(parents=True, exist_ok=True)
    return path


def credentials_needed(schema: dict[str, Any]) -> bool:
    """True when the credentials schema asks for something (a oneOf or required fields)."""
    return bool(schema.get("oneOf") or schema.get("required"))


class ConnectorRuntime:
    """Process-wide state of one served connector and the logic of each call."""

    def __init__(self, loaded: LoadedConnector):
        self.loaded = loaded
        self.info = loaded.info
        directory = cache_dir()
        self.cache = TTLCache(directory / "autocontext" if directory else None)
        self.engine = AutocontextEngine(self.info, loaded.blocks, self.cache)
        self.delivery = DeliveryTracker()
        self.recent = RecentStore(directory)
        self.listings = ResourceListCache()

    # --- configuration -------------------------------------------------------------------
    def validate_credentials(self, credentials: dict[str, Any]) -> dict[str, Any]:
        """5.5.3: credentials must match credentials_schema (ACP_CREDENTIALS_INVALID otherwise)."""
        return schemas.validate_credentials(self.info.credentials_schema, credentials)

    def validate_config(self, config: dict[str, Any]) -> dict[str, Any]:
        """5.5.3: config must match config_schema (ACP_INVALID_ARGUMENTS otherwise); defaults filled."""
        if self.info.config_schema is None:
            return dict(config)
        return schemas.validate_config(self.info.config_schema, config)

    def configure(self, session: SessionConfig, params: dict[str, Any]) -> tuple[SessionConfig, dict[str, Any]]:
        """acp/configure (5.1): merged session and ``{ok, effective}``; raises before changing anything."""
        new = session.merged(params, self.info, self.validate_credentials, self.validate_config)
        return new, {"ok": True, "effective": new.effective(self.info)}

    # --- one call --------------------------------------------------------------------------
    def _context(self, tool_name: str, meta: dict[str, Any], session: SessionConfig, client: ClientInfo,
                 read_table: ReadTableFn | None) -> CallContext:
        d = self.info.defaults
        limits = {
            "row_limit": pick(meta, session, "row_limit", d.row_limit),
            "cost_limit_usd": pick(meta, session, "cost_limit_usd", d.cost_limit_usd),
            "field_limit": pick(meta, session, "field_limit", d.effective_field_limit),
        }
        check_limits(limits)
        if meta.get("credentials") is not None:
            if not isinstance(meta["credentials"], dict):
                raise InvalidArguments("_meta.acp.credentials must be an object.")
            credentials = self.validate_credentials(meta["credentials"])
        else:
            credentials = session.credentials
        config = dict(session.config)
        if isinstance(meta.get("config"), dict):
            config.update(meta["config"])  # 5.3: config merges by key
        config = self.validate_config(config)
        tables = meta.get("tables") if meta.get("tables") is not None else session.tables
        if tables is not None:
            from .effective import check_tables

            tables = check_tables(self.info, tables)
        sampling = meta.get("sampling") or "head"
        if sampling not in ("head", "spread"):
            raise InvalidArguments("_meta.acp.sampling must be head or spread.")
        inline = meta.get("inline_max_bytes")
        if inline is not None and (not isinstance(inline, int) or isinstance(inline, bool) or inline < 0):
            raise InvalidArguments("_meta.acp.inline_max_bytes must be a non-negative integer.")
        identity = self.loaded.hook.credential_identity(credentials=credentials)
        call_id = meta.get("call_id")
        return CallContext(
            connector_id=self.info.id,
            tool=tool_name,
            credentials=credentials,
            config=config,
            row_limit=limits["row_limit"],
            cost_limit_usd=limits["cost_limit_usd"],
            field_limit=limits["field_limit"],
            tables=tables,
            default_resource_id=pick(meta, session, "default_resource_id", None),
            session_id=meta.get("session_id"),
            conversation_id=meta.get("conversation_id"),
            call_id=call_id,
            sampling=sampling,
            inline_max_bytes=inline,
            autocontext_delivered=meta.get("autocontext_delivered"),
            autocontext_blocks=meta.get("autocontext_blocks"),
            client=client,
            tmp_dir=tmp_dir(),
            cache_dir=cache_dir(),
            credential_identity=hashlib.sha256(f"{self.info.id}\0{identity}".encode()).hexdigest()[:32],
            table_reader=partial(read_table, call_id=call_id) if read_table is not None else None,
        )

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        meta: Any,
        session: SessionConfig,
        client: ClientInfo,
        read_table: ReadTableFn | None = None,
        file_url: Callable[[Path], str] | None = None,
    ) -> dict[str, Any]:
        """Run one tools/call and return the CallToolResult dict. Never raises for tool errors (12.1)."""
        arguments = dict(arguments or {})
        meta = meta if isinstance(meta, dict) else {}
        d = self.info.defaults
        record = CallRecord(
            connector_id=self.info.id,
            tool=name,
            kind=self._kind(name),
            arguments=dict(arguments),
            row_limit=d.row_limit,
            cost_limit_usd=d.cost_limit_usd,
        )
        ctx: CallContext | None = None
        try:
            ctx = self._context(name, meta, session, client, read_table)
            record.row_limit, record.cost_limit_usd = ctx.row_limit, ctx.cost_limit_usd
            if name == ACP_TOOL_AUTOCONTEXT:
                return await self._autocontext(arguments, ctx, record, session)
            if name == ACP_TOOL_AUTOCONTEXT_DATA:
                return await self._autocontext_data(arguments, ctx, record)
            tool = self.loaded.tools.get(name)
            if tool is None:
                raise InvalidArguments(
                    f"Unknown tool {name!r}. Available tools: {', '.join(self.tool_names())}."
                )
            return await self._run_tool(tool, arguments, ctx, record, session, file_url)
        except AcpError as exc:
            return failure(record, self._scrubbed(exc, ctx))
        except Exception as exc:  # 12.1 / 14.1 step 13: untyped -> ACP_UPSTREAM_ERROR
            secrets = self._secrets(ctx)
            text = schemas.redact(f"{type(exc).__name__}: {exc}", secrets)
            log.error("tool %s failed: %s", name, text)
            return failure(record, UpstreamError(f"The source failed ({text}). Retry later or change the request."))

    def tool_names(self) -> list[str]:
        """Every published tool name, the reserved ones first."""
        return [ACP_TOOL_AUTOCONTEXT, ACP_TOOL_AUTOCONTEXT_DATA, *self.loaded.tools]

    def _kind(self, name: str) -> str:
        if name in (ACP_TOOL_AUTOCONTEXT, ACP_TOOL_AUTOCONTEXT_DATA):
            return name
        tool = self.loaded.tools.get(name)
        return tool.kind if tool else "info"

    def _secrets(self, ctx: CallContext | None) -> list[str]:
        return schemas.secret_values(ctx.credentials if ctx else None, self.info.credentials_schema)

    def _scrubbed(self, exc: AcpError, ctx: CallContext | None) -> AcpError:
        # Safety net (10.1.4): whatever a connector put in a message, no credential string leaves.
        secrets = self._secrets(ctx)
        if secrets:
            exc.message = schemas.redact(exc.message, secrets)
            if exc.data:
                import json

                exc.data = json.loads(schemas.redact(json.dumps(exc.data, default=str), secrets))
        return exc

    # --- resources -----------------------------------------------------------------------
    def _resolve_resource(self, value: Any, ctx: CallContext, default: str | None) -> ResourceRef:
        rid = value if value not in (None, "") else default
        if rid in (None, ""):
            raise ResourceRequired(
                f"Missing resource_id ({self.info.resource_id.format}). "
                "Call autocontext without arguments to list the available resources."
            )
        if not isinstance(rid, str):
            raise InvalidArguments("resource_id must be a string.")
        ref = self.loaded.hook.normalize_resource_id(resource_id=rid, ctx=ctx)
        if isinstance(ref, str):
            ref = ResourceRef(id=ref)
        ctx.resource_id, ctx.resource_level = ref.id, ref.level
        return ref

    async def _autocontext(self, args: dict[str, Any], ctx: CallContext, record: CallRecord, session: SessionConfig) -> dict:
        from .toolschemas import autocontext_schemas

        schema, _ = autocontext_schemas(self.info, self.loaded.blocks)
        request_data = args.get("request_data") or None
        if isinstance(request_data, list) and all(isinstance(i, str) for i in request_data):
            self.engine.check_ids(request_data)  # 7.3: ACP_UNKNOWN_BLOCK listing the valid ids
        validate_arguments(schema, args)
        default = self._meta_default(ctx, session)
        if not args.get("resource_id"):
            listing = await self._listing(ctx)
            response = suggest_resources(
                listing,
                default_resource_id=default,
                recent=self.recent.scores(ctx.credential_identity),
                query=args.get("query"),
            )
            record.resource_id = None
            record.messages.append(response["notice"])
            return success(record, response)
        ref = self._resolve_resource(args["resource_id"], ctx, None)
        record.resource_id = ref.id
        result = await self.engine.fetch(ref, request_data, ctx)
        warning = self.engine.warning_for(result.failed)
        if warning:
            record.warnings.append(warning)
        record.cached = result.cached
        if ctx.session_id:
            self.delivery.mark(ctx.session_id, ref.id)  # 7.5 suggest: the model fetched it itself
        return success(record, result.blocks)

    def _meta_default(self, ctx: CallContext, session: SessionConfig) -> str | None:
        return ctx.default_resource_id

    async def _listing(self, ctx: CallContext) -> list:
        cached = self.listings.get(ctx.credential_identity)
        if cached is not None:
            return cached
        impls = [i for i in self.loaded.pm.hook.list_resources.get_hookimpls()]
        if not impls:
            return []
        result = await anyio.to_thread.run_sync(lambda: self.loaded.hook.list_resources(ctx=ctx))
        if hasattr(result, "__await__"):
            result = await result
        listing = list(result or [])
        self.listings.set(ctx.credential_identity, listing)
        return listing

    async def _autocontext_data(self, args: dict[str, Any], ctx: CallContext, record: CallRecord) -> dict:
        from .toolschemas import autocontext_schemas

        _, schema = autocontext_schemas(self.info, self.loaded.blocks)
        validate_arguments(schema, args)
        level = None
        if args.get("resource_id"):
            ref = self._resolve_resource(args["resource_id"], ctx, None)
            record.resource_id, level = ref.id, ref.level
        return success(record, self.engine.descriptors(level))

    # --- regular tools -------------------------------------------------------------------
    async def _run_tool(self, tool: ToolSpec, args: dict[str, Any], ctx: CallContext, record: CallRecord,
                        session: SessionConfig, file_url: Callable[[Path], str] | None) -> dict:
        from .runtime_tools import published_schema

        validate_arguments(published_schema(self, tool), args)
        if tool.needs_resource and uses_resource(self.info):
            ref = self._resolve_resource(args.pop("resource_id", None), ctx, self._meta_default(ctx, session))
            record.resource_id = ref.id
        if tool.needs_credentials and credentials_needed(self.info.credentials_schema) and not ctx.credentials:
            raise CredentialsMissing(
                "This source needs credentials and none were configured. "
                "Ask the user to add them in the source settings."
            )
        selection = None
        catalog = self._catalog_for(tool)
        if tool.multitable and catalog:
            selection = resolve_selection(args.pop("tables", None), ctx.tables, self.info.defaults.tables, catalog, tool.name)
            record.arguments["tables"] = list(selection)
            record.extra["tables_selected"] = list(selection)
        if tool.paid:
            self._preflight(tool, args, ctx, record)
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
        finish = partial(self._finish, tool, settings)

        def innermost(tool: ToolSpec, arguments: dict[str, Any], ctx: CallContext) -> Any:
            return invoke_tool(tool, arguments, ctx, finish)  # the awaitable wrappers wrap

        outcome = await self.loaded.hook.around_tool_call.call_extra(
            [innermost], {"tool": tool, "arguments": args, "ctx": ctx}
        )
        return await self._respond(tool, outcome, ctx, record, file_url)

    def _catalog_for(self, tool: ToolSpec) -> list:
        return [e for e in self.info.table_catalog if e.tools is None or tool.name in e.tools]

    def _preflight(self, tool: ToolSpec, args: dict[str, Any], ctx: CallContext, record: CallRecord) -> None:
        """9.2: estimate before running; refuse above cost_limit_usd with a message on how to narrow."""
        estimate = self.loaded.hook.estimate_cost(tool=tool, arguments=args, ctx=ctx)
        if estimate is None:
            raise UpstreamError(f"{tool.name} is a paid tool but the connector gave no cost estimate.")
        if not isinstance(estimate, CostEstimate):
            estimate = CostEstimate(usd=float(estimate))
        record.cost_estimate_usd = ctx.cost_estimate_usd = round(float(estimate.usd), 6)
        if estimate.usd > ctx.cost_limit_usd:
            raise CostLimitExceeded(
                f"The query would cost about ${estimate.usd:.2f} and the limit is ${ctx.cost_limit_usd:.2f}. "
                f"Narrow the query ({estimate.hint}) or ask the user to raise the limit.",
                {"estimate_usd": round(float(estimate.usd), 6), "limit_usd": ctx.cost_limit_usd, **estimate.data},
            )

    def _finish(self, tool: ToolSpec, settings: BuildSettings, raw: Any) -> Any:
        """Runs in the worker thread: turn the tool's output into a Built (extractions) or an Info."""
        if isinstance(raw, MultiExtraction):
            return raw, build_multitable(raw, settings)
        if isinstance(raw, Extraction):
            return raw, build_extraction(raw, settings)
        if tool.kind == "extraction":
            raise UpstreamError(f"{tool.name} returned no table; the connector must return an Extraction.")
        return raw if isinstance(raw, Info) else Info(data=raw), None

    async def _respond(self, tool: ToolSpec, outcome: Any, ctx: CallContext, record: CallRecord,
                       file_url: Callable[[Path], str] | None) -> dict:
        out, built = outcome
        record.warnings.extend(getattr(out, "warnings", []) or [])
        if out.arguments:
            record.arguments.update(out.arguments)
        record.title = out.title
        record.source = out.source
        if ctx.resource_id:
            self.recent.record(ctx.credential_identity, ctx.resource_id)
        if built is None:  # info tool
            record.warnings.extend(ctx.warnings)
            return success(record, out.data)
        built: Built
        record.cost_actual_usd = out.cost_actual_usd
        if getattr(out, "cached", None) is not None:
            record.cached = out.cached
        record.messages.extend(built.messages)
        record.warnings.extend(w for w in built.warnings + ctx.warnings if w not in record.warnings)
        record.extra.update(
            {"total_rows": built.total_rows, "returned_rows": built.returned_rows, "truncated": built.truncated}
        )
        record.extra.update(built.info_extra)
        model_response = built.model_response
        if record.warnings:
            model_response["warnings"] = list(record.warnings)
        await self._maybe_attach(ctx, record, model_response)
        system_data = built.system_data
        if file_url is not None and system_data is not None:
            system_data = _map_files(system_data, file_url)
        return success(record, model_response, system_data)

    async def _maybe_attach(self, ctx: CallContext, record: CallRecord, model_response: dict) -> None:
        """on_first_call (7.5): attach autocontext to the first extraction of a (session, resource)."""
        if "on_first_call" not in self.info.delivery or not ctx.resource_id or not self.loaded.blocks:
            return
        if not self.delivery.should_attach(ctx.autocontext_delivered, ctx.session_id, ctx.resource_id):
            return
        try:
            ref = ResourceRef(ctx.resource_id, ctx.resource_level)
            result = await self.engine.fetch(ref, ctx.autocontext_blocks or None, ctx)
        except Exception as exc:  # 7.5: a failing autocontext never fails the extraction
            log.warning("on_first_call autocontext not attached: %s", type(exc).__name__)
            return
        model_response["autocontext"] = result.blocks
        record.autocontext_attached = True
        if ctx.session_id:
            self.delivery.mark(ctx.session_id, ctx.resource_id)


def _map_files(system_data: dict[str, Any], file_url: Callable[[Path], str]) -> dict[str, Any]:
    """Over HTTP, file:// table_uri become one-time URLs served by the same app (8.5)."""
    from urllib.parse import unquote, urlparse

    def fix(part: dict[str, Any]) -> dict[str, Any]:
        uri = part.get("table_uri")
        if isinstance(uri, str) and uri.startswith("file://"):
            part = {**part, "table_uri": file_url(Path(unquote(urlparse(uri).path)))}
        return part

    system_data = fix(system_data)
    if isinstance(system_data.get("tables"), list):
        system_data = {**system_data, "tables": [fix(t) for t in system_data["tables"]]}
    return system_data
