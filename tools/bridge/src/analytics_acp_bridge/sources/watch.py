"""sources.json watched while the bridge runs (issue 34.3).

Its stat (modification time, size, inode) is polled every ``ACP_BRIDGE_WATCH_S`` seconds (default 1; ``0``
turns watching off): one ``stat`` a second costs nothing, needs no new dependency or thread, and works where
file notifications do not (network folders, editors that replace the file). A change waits one short beat
until the stamp holds still (an editor may still be writing), then ``on_change`` runs; a change made while it
runs is seen by the next poll.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

log = logging.getLogger("analytics_acp_bridge")
WATCH_S = float(os.environ.get("ACP_BRIDGE_WATCH_S", "1"))
SETTLE_S = 0.1  # a changed stamp must hold this long before the file is read
SETTLE_TRIES = 20  # ...at most this many times (2 s): a file rewritten without pause is read anyway

Stamp = tuple[int, int, int, int] | None


def stamp(path: Path) -> Stamp:
    """What identifies this version of the file (None while it does not exist)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev)


async def watch(path: Path, on_change: Callable[[], Awaitable[Any]], *, since: Stamp,
                interval: float = WATCH_S) -> None:
    """Call ``on_change`` after each change of ``path`` from ``since`` (its stamp when it was last read).
    Runs until cancelled; an exception in ``on_change`` is logged and watching goes on."""
    if interval <= 0:
        return
    last = since
    while True:
        await anyio.sleep(interval)
        now = stamp(path)
        if now == last:
            continue
        for _ in range(SETTLE_TRIES):
            await anyio.sleep(SETTLE_S)
            settled = stamp(path)
            if settled == now:
                break
            now = settled
        last = now
        try:
            await on_change()
        except Exception:  # the running set-up must survive a reload that failed in an unexpected way
            log.exception("reloading %s failed; the running sources are kept", path)
