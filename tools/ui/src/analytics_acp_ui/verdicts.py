"""The validator's verdict on each source: the bridge's own check, so the page and ``bridge --check`` always agree.

The page writes no validator of its own (issue 35.2). A candidate that is not saved yet (the form being
saved, one source being tested) is checked as a sources.json of its own next to the real one, so
relative paths and ``{"file"}`` references resolve from the same folder; it is removed right after,
and its name never appears in what the page shows.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analytics_acp.secret_store import write_atomic
from analytics_acp_bridge.bridge import Paths


@dataclass
class Verdict:
    """One source's verdict: ``ok``, or ``error`` with the problem in plain words and what to change."""

    status: str
    problem: str | None = None
    fix: str | None = None


@dataclass
class Report:
    """The check of a whole sources.json."""

    sources: dict[str, Verdict]
    file_error: str | None = None
    online: bool = False


@contextlib.contextmanager
def candidate(paths: Paths, data: dict[str, Any]) -> Iterator[Paths]:
    """``data`` as a private sources.json beside the real one, for the length of the block."""
    folder = paths.sources.parent
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f".sources.page-{secrets.token_hex(6)}.json"
    write_atomic(path, json.dumps(data), 0o600)
    try:
        yield Paths(project=paths.project, sources=path, root=paths.root)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _parse(lines: list[str], shown: Path, real: Path) -> Report:
    report = Report(sources={})
    for line in lines:
        line = line.replace(str(shown), str(real))
        status, _, rest = line.partition(" ")
        rest = rest.strip()
        if rest.startswith("sources.json:"):
            report.file_error = rest.removeprefix("sources.json:").strip()
            continue
        head, _, problem = rest.partition(": ")
        source_id = head.split(" (", 1)[0]
        problem, _, fix = problem.partition(" Fix: ")
        report.sources[source_id] = Verdict(status=status.strip(), problem=problem or None, fix=fix or None)
    return report


async def check(paths: Paths, *, online: bool = False, data: dict[str, Any] | None = None) -> Report:
    """The bridge's check of ``paths.sources`` (or of ``data`` as if it were that file), offline or online."""
    from analytics_acp_bridge.sources.check import check as bridge_check

    if data is None:
        lines, _ = await bridge_check(paths, online=online)
        report = _parse(lines, paths.sources, paths.sources)
    else:
        with candidate(paths, data) as temp:
            lines, _ = await bridge_check(temp, online=online)
        report = _parse(lines, temp.sources, paths.sources)
    report.online = online
    return report
