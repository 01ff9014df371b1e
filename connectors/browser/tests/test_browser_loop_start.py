"""The browser's private loop starts within a bound (brief: every wait is bounded): a thread that never runs
gives a typed answer, not a call that hangs forever."""

from __future__ import annotations

import threading

import pytest
from analytics_acp.errors import UpstreamError
from analytics_acp_browser import sessions


def test_a_loop_thread_that_never_runs_is_a_typed_error(monkeypatch):
    monkeypatch.setattr(sessions, "LOOP_START_S", 0.2)
    monkeypatch.setattr(threading.Thread, "start", lambda self: None)  # the thread never runs
    with pytest.raises(UpstreamError, match="did not start within 0.2 s"):
        sessions.BrowserThread().loop()


def test_the_loop_starts_and_runs_work():
    thread = sessions.BrowserThread()

    async def answer() -> int:
        return 42

    try:
        assert thread.run_sync(answer, timeout=30) == 42 and thread.started
    finally:
        thread.stop()
