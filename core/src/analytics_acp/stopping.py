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
EOF_GRACE_S = 1.0  # calls still running when stdin ends may answer within this, then the process exits (call_cap)


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


class EofExit:
    """``on_eof`` callback: once stdin has ended, the process exits 0 within ``grace`` (+ the bounded ``stop``).

    A server with nothing running returns on its own before the timer fires (its normal exit path,
    after which ``served()`` is called: ``stop`` has run, the timer would only exit). One whose call
    waits on a silent upstream, or whose interpreter would join a busy worker thread at exit, is
    ended by the timer (a daemon thread: it never keeps the process alive itself).
    """

    def __init__(self, stop: Callable[[], None], grace: float = EOF_GRACE_S):
        self.stop, self.grace = stop, grace
        self._timer: threading.Timer | None = None
        self._served = False

    def __call__(self) -> None:
        if self._timer is None:
            self._timer = threading.Timer(self.grace, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def served(self) -> None:
        """The serve loop returned and ran the connector's shutdown: the timer must not run it again."""
        self._served = True

    def _fire(self) -> None:
        _stop_and_exit((lambda: None) if self._served else self.stop, 0)
