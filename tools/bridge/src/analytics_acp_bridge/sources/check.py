"""``bridge --check``: sources.json checked before a client starts the bridge (issue 23.2).

Offline by default: the file is read, references resolved, each source's ACP server started locally
(no network) and its credentials/config validated against the setup schemas it declares (5.5). With
``online`` each healthy source also makes its first call (autocontext without resource) within a
bound. One line per source; the exit code is non-zero on any error. Source health comes from the
same registry the running bridge uses (health.py), so both always agree.
"""

from __future__ import annotations

import shutil
from typing import TextIO

import anyio

from ..bridge import Bridge, Paths
from .health import ERROR, STARTING

ONLINE_BOUND_S = 60.0  # the whole online check; a source still waiting then is reported as not answering


async def check(paths: Paths, *, online: bool = False, bound_s: float = ONLINE_BOUND_S) -> tuple[list[str], bool]:
    """(one line per source, every source is ok)."""
    bridge = Bridge(paths)
    try:
        async with anyio.create_task_group() as tg:
            try:
                await bridge.start(tg, probe=online)
                await bridge.wait_ready()
                if online:
                    with anyio.move_on_after(bound_s):
                        await bridge.probed.wait()
            finally:
                await bridge.aclose()
                tg.cancel_scope.cancel()
    finally:
        shutil.rmtree(bridge.tmp, ignore_errors=True)
    lines = [bridge.redactor.text(line) for line in bridge.health.check_lines()]
    statuses = [bridge.health.of(s).status for s in bridge.sources.sources]
    if online:
        lines = [line.replace(f"{STARTING:<6}", f"{ERROR:<6}", 1) + (": no answer to its first call within "
                 f"{bound_s:g} s." if line.startswith(STARTING) else "") for line in lines]
        good = all(status == "ok" for status in statuses)
    else:
        good = ERROR not in statuses  # offline, a source that started and passed its schemas is ready ("starting")
        lines = [line.replace(f"{STARTING:<6}", "ok    ", 1) for line in lines]
    return lines, good and not bridge.sources.error


def run_check(paths: Paths, *, online: bool, out: TextIO) -> int:
    """Print the check and return the exit code (0: every source ok; 1: an error)."""
    lines, good = anyio.run(lambda: check(paths, online=online))
    print(f"sources: {paths.sources}{' (online)' if online else ' (offline)'}", file=out)
    for line in lines or ["(no sources)"]:
        print(line, file=out)
    print("ok: every source is set up" if good else "error: fix the sources above in sources.json", file=out)
    return 0 if good else 1
