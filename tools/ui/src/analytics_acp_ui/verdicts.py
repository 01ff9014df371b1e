"""The validator's verdict on each source: the bridge's own check, so the page and ``bridge --check`` always agree.

The page writes no validator of its own (issue 35.2): ``analytics_acp_bridge.sources.check.check`` runs the
bridge's validator over the file, or over a sources.json object the page has not saved yet (``data``: a
candidate checked as if it were that file, in memory; references and relative paths resolve from its folder).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from analytics_acp_bridge.paths import Paths


@dataclass
class Verdict:
    """One source's verdict as the page shows it: ``ok``, or ``error`` with the typed problem and what to change."""

    status: str
    problem: str | None = None
    fix: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class Report:
    """The check of a whole sources.json (or of a candidate)."""

    sources: dict[str, Verdict]
    file_error: str | None = None
    online: bool = False


def _words(error: dict[str, Any] | None) -> str | None:
    return f"{error['name']}: {error['message']}" if error else None


async def check(paths: Paths, *, online: bool = False, data: dict[str, Any] | None = None) -> Report:
    """The bridge's check of ``paths.sources`` (or of ``data`` as if it were that file), offline or online."""
    from analytics_acp_bridge.sources.check import check as bridge_check

    report = await bridge_check(paths, online=online, data=data)
    out = Report(sources={}, file_error=_words(report.file_error), online=online)
    for verdict in report.verdicts:
        out.sources[verdict.source] = Verdict(status=verdict.status, problem=_words(verdict.error), fix=verdict.fix,
                                              warnings=list(verdict.warnings))
    return out
