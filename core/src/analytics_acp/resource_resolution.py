"""The resource of a call (6): injected or defaulted, then normalized by the connector's hook."""

from __future__ import annotations

from typing import Any

import anyio

from .context import CallContext
from .declarations import ResourceRef
from .errors import InvalidArguments, ResourceRequired
from .plugins import LoadedConnector


def resolve_resource(loaded: LoadedConnector, value: Any, ctx: CallContext, default: str | None) -> ResourceRef:
    """``value`` (or ``default``) normalized by ``normalize_resource_id``; sets ctx.resource_id/level.

    Raises ACP_RESOURCE_REQUIRED when neither is given (6.1) and ACP_INVALID_ARGUMENTS for a
    non-string id.
    """
    rid = value if value not in (None, "") else default
    if rid in (None, ""):
        raise ResourceRequired(
            f"Missing resource_id ({loaded.info.resource_id.format}). "
            "Call autocontext without arguments to list the available resources."
        )
    if not isinstance(rid, str):
        raise InvalidArguments("resource_id must be a string.")
    normalized = loaded.hook.normalize_resource_id(resource_id=rid, ctx=ctx)
    ref = ResourceRef(id=normalized) if isinstance(normalized, str) else normalized
    assert isinstance(ref, ResourceRef)  # the core's fallback always answers
    ctx.resource_id, ctx.resource_level = ref.id, ref.level
    return ref


async def resolve_resource_off_loop(loaded: LoadedConnector, value: Any, ctx: CallContext, default: str | None) -> ResourceRef:
    """``resolve_resource`` in a worker thread: a connector may ask its source to normalize (a catalog
    lookup, a properties listing), and one event loop serves every HTTP session."""
    return await anyio.to_thread.run_sync(resolve_resource, loaded, value, ctx, default)
