"""The validator's verdict on each source: the bridge's own check, so the page and ``bridge --check`` always agree.

The page writes no validator of its own (issue 35.2): ``analytics_acp_bridge.sources.check.check`` runs the
bridge's validator over the file, or over a sources.json object the page has not saved yet (``data``: a
candidate checked as if it were that file, in memory; references and relative paths resolve from its folder).

Offline, the check runs through the ACP servers the page keeps running (the bridge's ``running`` hook): the same
validate-only calls ``bridge --check`` makes, without starting a process per check (each start took seconds, and a
page load after every change paid one per ACP). An online test starts its own servers, as ``--check --online``
does, for the one source tested.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import anyio
from analytics_acp_bridge.fleet.discovery import discover
from analytics_acp_bridge.fleet.process import ServerUnavailable
from analytics_acp_bridge.paths import Paths

from . import sourcesfile
from .catalog import Servers


@dataclass
class Verdict:
    """One source's verdict as the page shows it: ``ok``, or ``error`` with the typed problem and what to change."""

    status: str
    problem: str | None = None
    fix: str | None = None
    warnings: list[str] = field(default_factory=list)
    online: bool = False


@dataclass
class Report:
    """The check of a whole sources.json (or of a candidate)."""

    sources: dict[str, Verdict]
    file_error: str | None = None
    online: bool = False


def _words(error: dict[str, Any] | None) -> str | None:
    return f"{error['name']}: {error['message']}" if error else None


async def _warm(paths: Paths, servers: Servers, data: dict[str, Any] | None) -> None:
    """Start (or keep) the page's server of every installed ACP the sources use, concurrently; one that does not
    start is left to the check, which starts its own and reports why."""
    if data is None:
        try:
            data = sourcesfile.read_raw(paths.sources)
        except sourcesfile.SourcesFileError:
            return
    launches = discover(paths.root)
    used = sorted({str(e.get("acp")) for e in sourcesfile.entries(data)} & set(launches))

    async def start(acp_id: str) -> None:
        try:
            await servers.process(launches[acp_id])
        except ServerUnavailable:
            pass

    async with anyio.create_task_group() as tg:
        for acp_id in used:
            tg.start_soon(start, acp_id)


async def check(paths: Paths, servers: Servers, *, online: bool = False, data: dict[str, Any] | None = None,
                only: Collection[str] | None = None) -> Report:
    """The bridge's check of the sources file (or of ``data`` as if it were that file), offline through the page's
    ``servers`` or online with its own; ``only`` names the sources to check and report."""
    from analytics_acp_bridge.sources.check import check as bridge_check

    if online:
        report = await bridge_check(paths, online=True, data=data, only=only)
    else:
        await _warm(paths, servers, data)
        report = await bridge_check(paths, data=data, only=only, running=servers.running)
    out = Report(sources={}, file_error=_words(report.file_error), online=online)
    for verdict in report.verdicts:
        out.sources[verdict.source] = Verdict(status=verdict.status, problem=_words(verdict.error), fix=verdict.fix,
                                              warnings=list(verdict.warnings), online=online)
    return out
