"""Progress and cancellation of a sample extraction (MCP notifications/progress and notifications/cancelled,
issue 28.4): any ACP server is held to them, so a host can show progress and stop runaway work.

Every message gives the time it measured (issue 34.4: a failure said "within 60 s" after 5.5 s), and says
which step failed: no answer in time, or an answer that is an error (then its name and message).
"""

from __future__ import annotations

import time
from typing import Any

import anyio

from .run import Run

CANCEL_AFTER_S = 0.05  # the request is written, the work has started: then the client gives up on it
BOUND_S = 60.0


def _failure(result: Any) -> str:
    error = result.error or {}
    return f"{error.get('name', 'an error')}: {str(error.get('message') or result.text)[:160]}"


async def _timed(call: Any) -> tuple[Any, float]:
    """(the call's answer or None when it did not come within BOUND_S, the seconds it took)."""
    started = time.monotonic()
    answer = None
    with anyio.move_on_after(BOUND_S):
        answer = await call()
    return answer, time.monotonic() - started


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

    result, took = await _timed(lambda: client.call_tool(sample.tool, args, meta=meta, on_progress=on_progress))
    values = [p for p, _, _ in seen]
    if result is None:
        f.fail("calls.progress", f"{sample.tool}: no answer within {took:.1f} s ({len(values)} progress notification(s))")
    elif result.is_error:
        f.fail("calls.progress", f"{sample.tool} failed in {took:.1f} s, so its progress says nothing: {_failure(result)}")
    else:
        f.check("calls.progress", bool(values) and values == sorted(set(values)),
                f"{sample.tool}: {len(values)} progress notification(s) in {took:.1f} s, last {seen[-1] if seen else None}",
                f"{sample.tool}: progress {seen[:5]} in {took:.1f} s; expected at least one, increasing")

    async def doomed() -> None:
        await client.call_tool(sample.tool, args, meta=meta)

    async with anyio.create_task_group() as tg:
        tg.start_soon(doomed)
        await anyio.sleep(CANCEL_AFTER_S)
        tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled for the request it wrote
    pong, ping_s = await _timed(lambda: client.raw_request("ping"))
    if pong is None:
        f.fail("calls.cancel", f"{sample.tool}: after a cancelled call the server did not answer ping within {ping_s:.1f} s")
        return
    again, call_s = await _timed(lambda: client.call_tool(sample.tool, args, meta=meta))
    if again is None:
        f.fail("calls.cancel", f"{sample.tool}: after a cancelled call ping answered in {ping_s:.1f} s, but the same call "
                               f"had no answer within {call_s:.1f} s")
    elif again.is_error:
        f.fail("calls.cancel", f"{sample.tool}: after a cancelled call ping answered in {ping_s:.1f} s, but the same call "
                               f"failed in {call_s:.1f} s: {_failure(again)}")
    else:
        f.ok("calls.cancel", f"{sample.tool}: cancelled, then ping answered in {ping_s:.1f} s and the same call in "
                             f"{call_s:.1f} s")
