"""From a tool's output to the three-part result (8): build the table, then fill system_info.

``finish_output`` runs in the tool's worker thread (invoke.py) so a row generator is consumed
where it was created; ``respond`` runs on the event loop afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .context import CallContext
from .declarations import Extraction, Info, MultiExtraction, ToolSpec, settled
from .effective import echoable_arguments
from .envelope import CallRecord, success
from .errors import UpstreamError
from .first_call import attach_on_first_call
from .http_files import map_files
from .results import BuildSettings, Built, build_extraction, build_multitable
from .runtime_state import RuntimeState


def finish_output(tool: ToolSpec, settings: BuildSettings, raw: Any) -> tuple[Any, Built | None]:
    """The tool's output and its Built table (extractions), or an Info and None (info tools)."""
    if isinstance(raw, MultiExtraction):
        return raw, build_multitable(raw, settings)
    if isinstance(raw, Extraction):
        return raw, build_extraction(raw, settings)
    if tool.kind == "extraction":
        raise UpstreamError(f"{tool.name} returned no table; the connector must return an Extraction.")
    return raw if isinstance(raw, Info) else Info(data=raw), None


async def respond(state: RuntimeState, outcome: tuple[Any, Built | None], ctx: CallContext, record: CallRecord,
                  file_url: Callable[[Path], str] | None) -> dict[str, Any]:
    """The CallToolResult of a finished call: messages, warnings, counts, on_first_call, system_data."""
    out, built = outcome
    record.warnings.extend(getattr(out, "warnings", []) or [])
    if out.arguments:
        record.arguments.update(echoable_arguments(out.arguments, state.declared_arguments(record.tool)))
    record.title = out.title
    record.source = settled(out.source)  # after the rows: a streamed extraction's last facts
    if ctx.resource_id:
        state.recent.record(ctx.credential_identity, ctx.resource_id)
    if built is None:  # info tool
        record.warnings.extend(ctx.warnings)
        return success(record, out.data)
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
    await attach_on_first_call(state, ctx, record, model_response)
    system_data = built.system_data
    if file_url is not None and system_data is not None:
        system_data = map_files(system_data, file_url)
    return success(record, model_response, system_data)
