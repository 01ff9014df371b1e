"""The reserved tools every ACP server publishes: ``autocontext`` (7.2) and ``autocontext_data`` (7.3)."""

from __future__ import annotations

from typing import Any

from .context import CallContext
from .envelope import CallRecord, success
from .invoke import call_maybe_async
from .resource_resolution import resolve_resource_off_loop
from .resources import suggest_resources
from .runtime_state import RuntimeState
from .toolschemas import autocontext_schemas, validate_arguments


async def run_autocontext(state: RuntimeState, args: dict[str, Any], ctx: CallContext, record: CallRecord) -> dict[str, Any]:
    """Without resource_id: resource suggestions (6.3); with one: its blocks from the engine (7.2, 7.4)."""
    schema, _ = autocontext_schemas(state.info, state.loaded.blocks)
    request_data = args.get("request_data") or None
    if isinstance(request_data, list) and all(isinstance(i, str) for i in request_data):
        state.engine.check_ids(request_data)  # 7.3: ACP_UNKNOWN_BLOCK listing the valid ids
    validate_arguments(schema, args)
    if not args.get("resource_id"):
        response = suggest_resources(
            await resource_listing(state, ctx),
            default_resource_id=ctx.default_resource_id,
            recent=state.recent.scores(ctx.credential_identity),
            query=args.get("query"),
        )
        record.resource_id = None
        record.messages.append(response["notice"])
        return success(record, response)
    ref = await resolve_resource_off_loop(state.loaded, args["resource_id"], ctx, None)
    record.resource_id = ref.id
    result = await state.engine.fetch(ref, request_data, ctx)
    warning = state.engine.warning_for(result.failed)
    if warning:
        record.warnings.append(warning)
    record.cached = result.cached
    if ctx.session_id:
        state.delivery.mark(ctx.session_id, ref.id)  # 7.5 suggest: the model fetched it itself
    return success(record, result.blocks)


async def run_autocontext_data(state: RuntimeState, args: dict[str, Any], ctx: CallContext,
                               record: CallRecord) -> dict[str, Any]:
    """The block descriptors (7.3), for the resource's level when one is given."""
    _, schema = autocontext_schemas(state.info, state.loaded.blocks)
    validate_arguments(schema, args)
    level = None
    if args.get("resource_id"):
        ref = await resolve_resource_off_loop(state.loaded, args["resource_id"], ctx, None)
        record.resource_id, level = ref.id, ref.level
    return success(record, state.engine.descriptors(level))


async def resource_listing(state: RuntimeState, ctx: CallContext) -> list[Any]:
    """``list_resources`` for this credential identity, cached per identity (6.3)."""
    cached = state.listings.get(ctx.credential_identity)
    if cached is not None:
        return cached
    if not state.loaded.pm.hook.list_resources.get_hookimpls():
        return []
    result = await call_maybe_async(lambda: state.loaded.hook.list_resources(ctx=ctx))
    listing = list(result or [])
    state.listings.set(ctx.credential_identity, listing)
    return listing
