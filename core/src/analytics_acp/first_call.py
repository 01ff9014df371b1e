"""on_first_call (7.5): the first extraction of a (session, resource) carries its autocontext."""

from __future__ import annotations

import logging
from typing import Any

from .context import CallContext
from .declarations import ResourceRef
from .envelope import CallRecord
from .runtime_state import RuntimeState

log = logging.getLogger("analytics_acp")


async def attach_on_first_call(state: RuntimeState, ctx: CallContext, record: CallRecord,
                               model_response: dict[str, Any]) -> None:
    """Add ``autocontext`` to model_response when the 7.5 table says so; never fails the extraction."""
    if "on_first_call" not in state.info.delivery or not ctx.resource_id or not state.loaded.blocks:
        return
    if not state.delivery.should_attach(ctx.autocontext_delivered, ctx.session_id, ctx.resource_id):
        return
    try:
        ref = ResourceRef(ctx.resource_id, ctx.resource_level)
        result = await state.engine.fetch(ref, ctx.autocontext_blocks or None, ctx)
    except Exception as exc:  # 7.5: a failing autocontext never fails the extraction
        log.warning("on_first_call autocontext not attached: %s", type(exc).__name__)
        return
    model_response["autocontext"] = result.blocks
    record.autocontext_attached = True
    if ctx.session_id:
        state.delivery.mark(ctx.session_id, ctx.resource_id)
