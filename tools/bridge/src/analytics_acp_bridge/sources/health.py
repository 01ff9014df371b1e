"""Source health: each source's status, typed error and fix while the bridge runs (issues 23.1, 26.5, 34.1).

A source is ``starting`` until its ACP server has started and its first call (the autocontext probe) has
answered, then ``ok`` or ``error``. Errors come in two kinds:

- set-up errors, found by the validator (validate.py): the source publishes no tools and calls to them say
  which source and why;
- call errors found by the probe (an upstream that is down, credentials the upstream rejects): the source
  keeps its tools, since the failure belongs to each call and may pass.

Messages name fields and variables, never values (the bridge's redactor scrubs every text anyway).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analytics_acp.errors import UpstreamError

from .entries import Source, SourcesFile
from .validate import ERROR, OK, STARTING, Finding, Verdict

CREDENTIAL_NAMES = ("ACP_CREDENTIALS_MISSING", "ACP_CREDENTIALS_INVALID")


@dataclass
class Health:
    """What is known about one source now."""

    status: str = STARTING
    error: dict[str, Any] | None = None  # 12.1 payload {code, name, message}
    fix: str | None = None  # what the user changes (sources.json, environment, network)
    setup: bool = False  # a set-up error: the source publishes no tools

    def line(self) -> str:
        """``NAME: message`` of the error ('' when there is none)."""
        return f"{self.error['name']}: {self.error['message']}" if self.error else ""


class SourceHealth:
    """Health of every source of one sources.json, keyed by the Source objects themselves."""

    def __init__(self, sources: SourcesFile):
        self.file = sources
        self.path = sources.path
        self._by_source: dict[int, Health] = {id(s): Health() for s in sources.sources}

    def of(self, source: Source) -> Health:
        """The health of ``source``."""
        return self._by_source.setdefault(id(source), Health())

    def keep(self, source: Source, health: Health) -> None:
        """A source carried over unchanged from the previous set-up keeps its health (a reload, issue 34.3)."""
        self._by_source[id(source)] = health

    def setup_error(self, source: Source, finding: Finding) -> None:
        """A set-up error: the source publishes no tools. The first one found is the one to fix first."""
        health = self.of(source)
        if health.setup:
            return
        health.status, health.error, health.setup = ERROR, finding.error.payload(), True
        health.fix = finding.fix

    def started(self, source: Source) -> None:
        """Its server is up and nothing is left to probe: ok (a set-up error stays)."""
        health = self.of(source)
        if health.status == STARTING:
            health.status = OK

    def probe_failed(self, source: Source, payload: dict[str, Any]) -> None:
        """Its first call failed: status error, tools kept (the failure belongs to each call)."""
        health = self.of(source)
        if health.setup:
            return
        health.status, health.error = ERROR, {k: payload[k] for k in ("code", "name", "message") if k in payload}
        if payload.get("name") in CREDENTIAL_NAMES:
            health.fix = f"Edit \"credentials\" of source «{source.id}» in {self.path}."
        elif payload.get("name") == UpstreamError.name:
            health.fix = (f"Check the network, the proxy (HTTPS_PROXY) and the config of source «{source.id}» in {self.path} "
                          "(an api_endpoint or host). Its tools stay published: calls work once the upstream answers.")
        else:
            health.fix = None

    def publishes_tools(self, source: Source) -> bool:
        """False for a set-up error (23.1: a source that cannot work offers no tools)."""
        return not self.of(source).setup

    def counts(self) -> dict[str, int]:
        """Sources per status."""
        out = {OK: 0, STARTING: 0, ERROR: 0}
        for source in self.file.sources:
            out[self.of(source).status] += 1
        return out

    def overall(self) -> dict[str, Any]:
        """Top-level status: ``ok`` only when every source is; ``degraded`` with the counts; ``error`` for the file."""
        if self.file.problem is not None:
            return {"status": ERROR}
        counts = self.counts()
        if counts[OK] == len(self.file.sources):
            return {"status": OK}
        return {"status": "degraded", "counts": counts}

    def settled(self) -> bool:
        """No source is still starting."""
        return all(self.of(s).status != STARTING for s in self.file.sources)

    def verdict(self, source: Source) -> Verdict:
        """The source's verdict now (validate.Verdict)."""
        health = self.of(source)
        return Verdict(source=source.id, acp=source.acp, status=health.status, error=health.error, fix=health.fix,
                       warnings=list(source.warnings))
