"""Ctrl-C, SIGTERM and the end of stdin end a server promptly, busy or idle (issues 15.2, 26.5).

A tool runs in a worker thread, so the event loop's own cancellation (and uvicorn's graceful
shutdown, which waits for running requests) would wait for it: a call blocked on a silent upstream
would keep the process alive. Instead the signal runs the connector's shutdown (which cancels
queries in flight at the database), removes the private temp folder, and exits; a timer bounds it
all. When stdin ends (the client is gone) calls still running get a short grace to answer, then
the same stop runs.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable

STOP_BOUND_S = 10.0  # the longest a stop may take before the process exits regardless
EOF_GRACE_S = 1.0  # calls still running when stdin ends may answer within this, then the process exits


def _stop_and_exit(stop: Callable[[], None], code: int) -> None:
    bound = threading.Timer(STOP_BOUND_S, os._exit, args=(code,))
    bound.daemon = True
    bound.start()
    try:
        stop()
    finally:
        from . import dirs

        dirs.remove_private_tmp()  # os._exit skips atexit
        os._exit(code)


def install_stop_handlers(stop: Callable[[], None]) -> None:
    """On SIGINT/SIGTERM: run ``stop`` (bounded), remove this process's private temp dir, exit 128+signal."""

    def handler(signum: int, _frame: object) -> None:
        _stop_and_exit(stop, 128 + signum)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, handler)


def exit_after_eof(stop: Callable[[], None], grace: float = EOF_GRACE_S) -> Callable[[], None]:
    """An ``on_eof`` callback: once stdin has ended, exit 0 within ``grace`` (+ the bounded ``stop``).

    A server with nothing running returns on its own before the timer fires (its normal exit path);
    one whose call waits on a silent upstream, or whose interpreter would join a busy worker thread
    at exit, is ended by the timer (daemon: it never keeps the process alive itself).
    """
    armed: list[threading.Timer] = []

    def on_eof() -> None:
        if armed:
            return
        timer = threading.Timer(grace, _stop_and_exit, args=(stop, 0))
        timer.daemon = True
        armed.append(timer)
        timer.start()

    return on_eof
