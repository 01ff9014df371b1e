"""Source health: the one place that decides each source's status, its typed error and its fix (issues 23.1, 26.5).

A source is ``starting`` until its ACP server has started and its first call (the autocontext probe)
has answered, then ``ok`` or ``error``. Errors come in two kinds:

- setup errors (sources.json entry, unresolved ``env``/``file``/``projectPath`` references, unknown ACP,
  credentials or config failing the ACP's setup schemas, a server that cannot start): the source
  publishes no tools and calls to them answer ``ACP_CREDENTIALS_INVALID`` (the server ones
  ``ACP_UPSTREAM_ERROR``) with the 16.5 note that sends the user to sources.json;
- call errors found by the probe (an upstream that is down, credentials the upstream rejects): the
  source keeps its tools, since the failure belongs to each call and may pass.

Messages name fields and variables, never values (the bridge's redactor scrubs every text anyway).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analytics_acp.errors import AcpError, CredentialsInvalid, UpstreamError

from .entries import Source, SourcesFile

STARTING, OK, ERROR = "starting", "ok", "error"
CREDENTIAL_NAMES = ("ACP_CREDENTIALS_MISSING", "ACP_CREDENTIALS_INVALID")


@dataclass
class Health:
    """What is known about one source now."""

    status: str = STARTING
    error: dict[str, Any] | None = None  # 12.1 payload {code, name, message}
    fix: str | None = None  # what the user changes (sources.json, environment, network)
    setup: bool = False  # a setup error: the source publishes no tools

    def line(self) -> str:
        """``NAME: message`` of the error ('' when there is none)."""
        return f"{self.error['name']}: {self.error['message']}" if self.error else ""


class SourceHealth:
    """Health of every source of one sources.json, keyed by the Source objects themselves."""

    def __init__(self, sources: SourcesFile, sources_path: Path):
        self.file = sources
        self.path = sources_path
        self._by_source: dict[int, Health] = {id(s): Health() for s in sources.sources}
        for source in sources.sources:
            if source.error is not None:  # sources.py found it: the entry or a reference
                self.setup_error(source, CredentialsInvalid(source.error))

    def of(self, source: Source) -> Health:
        """The health of ``source``."""
        return self._by_source.setdefault(id(source), Health())

    def _restart(self) -> str:
        return "then restart the bridge from the MCP client."

    def setup_error(self, source: Source, exc: AcpError, fix: str | None = None) -> None:
        """A setup error: the source publishes no tools; ``fix`` defaults to editing its entry in sources.json."""
        health = self.of(source)
        if health.setup:
            return  # the first setup error found is the one to fix first
        health.status, health.error, health.setup = ERROR, exc.payload(), True
        health.fix = fix or f"Edit the entry of source «{source.id}» in {self.path} as the error says, {self._restart()}"

    def unknown_acp(self, source: Source, installed: list[str]) -> None:
        """The source names an ACP that is neither in acps/ nor installed."""
        names = ", ".join(installed) or "none"
        self.setup_error(
            source,
            CredentialsInvalid(f"ACP {source.acp!r} is not installed (not in acps/ nor in this environment). Installed: {names}."),
            f"Set \"acp\" of source «{source.id}» in {self.path} to an installed ACP ({names}) or install it, {self._restart()}",
        )

    def check_installed(self, installed: list[str]) -> None:
        """At start-up: each source that could publish tools names an installed ACP (else a setup error)."""
        for source in self.file.sources:
            if self.publishes_tools(source) and source.acp not in installed:
                self.unknown_acp(source, installed)

    def schema_error(self, source: Source, what: str, exc: AcpError) -> None:
        """Credentials or config that fail the ACP's declared setup schema (5.5), checked offline."""
        self.setup_error(
            source,
            CredentialsInvalid(f"Source «{source.id}», {what} checked against the {source.acp} ACP's {what}_schema: {exc.message}"),
            f"Fix \"{what}\" of source «{source.id}» in {self.path} (acp_sources lists what the {source.acp} ACP accepts), "
            f"{self._restart()}",
        )

    def check_schemas(self, source: Source, capability: dict[str, Any]) -> None:
        """Validate the source's credentials and config against the setup schemas its ACP declares (offline)."""
        from analytics_acp.schemas import validate_config, validate_credentials

        checks = (("credentials", source.credentials, capability.get("credentials_schema"), validate_credentials),
                  ("config", source.config, capability.get("config_schema"), validate_config))
        for what, value, schema, validate in checks:
            if value is not None and isinstance(schema, dict) and schema:
                try:
                    validate(schema, value)
                except AcpError as exc:
                    self.schema_error(source, what, exc)
                    return

    def server_error(self, source: Source, message: str) -> None:
        """Its ACP server could not start: no tools until the bridge is restarted."""
        self.setup_error(
            source, UpstreamError(message),
            f"Check that the {source.acp} ACP is installed and starts (the bridge log has its stderr), {self._restart()}",
        )

    def started(self, source: Source) -> None:
        """Its server is up and nothing is left to probe: ok (a setup error stays)."""
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
            health.fix = f"Fix \"credentials\" of source «{source.id}» in {self.path}, {self._restart()}"
        elif payload.get("name") == "ACP_UPSTREAM_ERROR":
            health.fix = (f"Check the network, the proxy (HTTPS_PROXY) and the config of source «{source.id}» in {self.path} "
                          "(an api_endpoint or host). Its tools stay published: calls work once the upstream answers.")
        else:
            health.fix = None

    def publishes_tools(self, source: Source) -> bool:
        """False for a setup error (23.1: a source that cannot work offers no tools)."""
        return not self.of(source).setup

    def counts(self) -> dict[str, int]:
        """Sources per status."""
        out = {OK: 0, STARTING: 0, ERROR: 0}
        for source in self.file.sources:
            out[self.of(source).status] += 1
        return out

    def overall(self) -> dict[str, Any]:
        """Top-level status: ``ok`` only when every source is; ``degraded`` with the counts; ``error`` for the file."""
        if self.file.error:
            return {"status": ERROR}
        counts = self.counts()
        if counts[OK] == len(self.file.sources):
            return {"status": OK}
        return {"status": "degraded", "counts": counts}

    def settled(self) -> bool:
        """No source is still starting."""
        return all(self.of(s).status != STARTING for s in self.file.sources)

    def check_lines(self) -> list[str]:
        """One line per source for ``bridge --check`` (plus one for the file when it is unusable)."""
        lines = [f"error  sources.json: {self.file.error}"] if self.file.error else []
        for source in self.file.sources:
            health = self.of(source)
            head = f"{health.status:<6} {source.id} ({source.acp})"
            if health.error:
                head += f": {health.line()}"
                if health.fix:
                    head += f" Fix: {health.fix}"
            lines.append(head)
        return lines
