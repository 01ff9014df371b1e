"""Ctrl-C and SIGTERM end a server promptly, busy or idle (issue 15.2), over stdio or HTTP.

A tool runs in a worker thread, so the event loop's own cancellation (and uvicorn's graceful
shutdown, which waits for running requests) would wait for it. Instead the signal runs the
connector's shutdown (which cancels queries in flight at the database), removes the private temp
folder, and exits; a timer bounds it all.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable

STOP_BOUND_S = 10.0  # the longest a stop may take before the process exits regardless


def install_stop_handlers(stop: Callable[[], None]) -> None:
    """On SIGINT/SIGTERM: run ``stop`` (bounded), remove this process's private temp dir, exit 128+signal."""

    def handler(signum: int, _frame: object) -> None:
        code = 128 + signum
        threading.Timer(STOP_BOUND_S, os._exit, args=(code,)).start()
        try:
            stop()
        finally:
            from . import dirs

            dirs.remove_private_tmp()  # os._exit skips atexit
            os._exit(code)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, handler)
