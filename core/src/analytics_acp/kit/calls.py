"""Progress and cancellation of a sample extraction (MCP notifications/progress and notifications/cancelled,
issue 28.4): any ACP server is held to them, so a host can show progress and stop runaway work."""

from __future__ import annotations

from typing import Any

import anyio

from .run import Run

CANCEL_AFTER_S = 0.05  # the request is written, the work has started: then the client gives up on it
BOUND_S = 60.0


async def progress_and_cancel(run: Run, client: Any) -> None:
    """calls.progress on the first read-only extraction sample; calls.cancel on the same call, cancelled."""
    f = run.findings
    samples = [s for s in run.extraction_samples()
               if ((run.tools.get(s.tool) or {}).get("annotations") or {}).get("readOnlyHint") is not False]
    if not samples:
        f.not_applicable("calls.progress", "no extraction sample call")
        f.not_applicable("calls.cancel", "no extraction sample call")
        return
    sample = samples[0]
    args = run.with_resource(sample.tool, sample.arguments)
    meta = run.meta(**{"autocontext_delivered": True, **sample.meta})
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.move_on_after(BOUND_S):
        result = await client.call_tool(sample.tool, args, meta=meta, on_progress=on_progress)
        values = [p for p, _, _ in seen]
        f.check("calls.progress", not result.is_error and bool(values) and values == sorted(set(values)),
                f"{sample.tool}: {len(values)} progress notification(s), last {seen[-1] if seen else None}",
                f"{sample.tool}: progress {seen[:5]} (error: {result.is_error}); expected at least one, increasing")

    async def doomed() -> None:
        await client.call_tool(sample.tool, args, meta=meta)

    async with anyio.create_task_group() as tg:
        tg.start_soon(doomed)
        await anyio.sleep(CANCEL_AFTER_S)
        tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled for the request it wrote
    answered = False
    with anyio.move_on_after(BOUND_S):
        await client.raw_request("ping")
        again = await client.call_tool(sample.tool, args, meta=meta)
        answered = not again.is_error
    f.check("calls.cancel", answered, f"{sample.tool}: cancelled, then ping and the same call answered",
            f"{sample.tool}: after a cancelled call the server did not answer ping and the call within {BOUND_S:.0f} s")
