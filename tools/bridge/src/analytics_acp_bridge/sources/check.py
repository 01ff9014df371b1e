"""``bridge --check`` and the set-up page's verdicts: the validator (validate.py) run over a whole sources.json.

Offline by default: the file is read, references and paths resolved, each source's ACP server started locally
(no network) and every source checked as the running bridge checks it at start and on reload (the same fleet
code). With ``online`` each healthy source also makes its first call (autocontext without resource) within a
bound. The API for other tools (``analytics-acp ui``)::

    report = await check(paths, online=False, data=None)   # data: a sources.json object checked as if saved there
    report.ok, report.file_error, [v.as_dict() for v in report.verdicts], report.lines()

``only`` checks some sources of the file (read whole) and reports theirs; ``running`` lends servers the caller
keeps running (offline only), so a check makes the same calls without starting a process for each.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, TextIO

import anyio

from ..factory import Factory
from ..fleet.discovery import AcpLaunch
from ..fleet.process import AcpProcess
from ..paths import Paths
from .validate import ERROR, OK, STARTING, Report, Verdict

__all__ = ["OK", "ONLINE_BOUND_S", "Report", "Running", "Verdict", "check", "run_check"]

Running = Callable[[AcpLaunch], "AcpProcess | None"]  # a running server its owner lends to a check
ONLINE_BOUND_S = 60.0  # the whole online check; a source still waiting then is reported as not answering


async def check(paths: Paths, *, online: bool = False, data: Any = None, bound_s: float = ONLINE_BOUND_S,
                only: Collection[str] | None = None, running: Running | None = None) -> Report:
    """The verdict on every source of ``paths.sources`` (or of ``data``, a sources.json object checked as if it
    were that file: references and relative paths resolve from its folder). Never raises for a bad set-up;
    writes nothing in the project. Secret values never appear in the report.

    ``only``: the ids of the sources to check and report (the others are neither checked nor reported).
    ``running(launch)``: a server of that launch the caller has running and keeps (None: the check starts its
    own). Offline only: the offline checks are the ACP's validate-only calls, which keep nothing, while an online
    check starts its own servers, as ``--check --online`` does, so no answer comes from a server's memory (7.4)."""
    if online and running is not None:
        raise ValueError("an online check starts its own servers: no running ones are lent to it")
    factory = Factory(paths)
    fleet = factory.check_fleet(data)
    if only is not None:
        fleet.narrow(set(only))
    if running is not None:
        fleet.lend(running)
    try:
        async with anyio.create_task_group() as tg:
            try:
                await fleet.start(tg)
                if online:
                    with anyio.move_on_after(bound_s):
                        await fleet.probe()
            finally:
                await fleet.aclose()
                tg.cancel_scope.cancel()
    finally:
        factory.close()
    scrub = factory.secrets.redactor.value
    verdicts = []
    for source in fleet.sources.sources:
        if only is not None and source.id not in only:
            continue
        verdict = fleet.health.verdict(source)
        if verdict.status == STARTING:  # offline: started and checked is ready; online: no answer in time
            verdict.status = ERROR if online else OK
            if online:
                verdict.error = {"code": -32018, "name": "ACP_UPSTREAM_ERROR",
                                 "message": f"No answer to its first call within {bound_s:g} s."}
        verdicts.append(Verdict(**scrub(vars(verdict))))
    problem = fleet.sources.problem
    return Report(paths.sources, online, verdicts, problem.payload() if problem is not None else None)


def run_check(paths: Paths, *, online: bool, out: TextIO) -> int:
    """Print the check and return the exit code (0: every source ok; 1: an error)."""
    report = anyio.run(lambda: check(paths, online=online))
    print(f"sources: {paths.sources}{' (online)' if online else ' (offline)'}", file=out)
    for line in report.lines() or ["(no sources)"]:
        print(line, file=out)
    print("ok: every source is set up" if report.ok else
          f"error: fix the sources above in {paths.sources} (a running bridge applies the saved file)", file=out)
    return 0 if report.ok else 1

