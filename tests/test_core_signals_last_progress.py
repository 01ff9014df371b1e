"""The last progress of a call is sent whole before the call returns (issue 28.1: "always one at the end").

Found while testing the TypeScript SDK's onprogress: when the progress sender was in the middle of sending
the last value as the tool returned, the final flush saw nothing new to send and the sender was then
cancelled mid-send, so the last progress could be cut. (The TS SDK's own drop of a last progress read
together with its answer is typescript-sdk#2580, a client race, see tests/test_external_ts_sdk.py.)"""

from __future__ import annotations

import anyio
import anyio.lowlevel
from analytics_acp.signals import CallSignals


async def _run_with_a_slow_send() -> list[tuple[str, float]]:
    log: list[tuple[str, float]] = []

    async def send(progress, total, message):
        log.append(("start", progress))
        for _ in range(5):  # a write that takes a few turns of the event loop (a busy pipe)
            await anyio.lowlevel.checkpoint()
        log.append(("sent", progress))

    signals = CallSignals(send)
    async with signals.running():
        signals.progress(30, 30, "step 30 of 30")
        await anyio.lowlevel.checkpoint()  # the sender picks the last value up and starts writing it
        await anyio.lowlevel.checkpoint()
        assert log == [("start", 30)]
    return log


def test_a_last_progress_in_flight_when_the_tool_returns_is_sent_before_the_call_ends():
    assert anyio.run(_run_with_a_slow_send) == [("start", 30), ("sent", 30)]
