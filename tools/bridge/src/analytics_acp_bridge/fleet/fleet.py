"""The fleet: the sources of one sources.json and the ACP servers that serve them (16.3, 16.4) — their
processes, their start and probes, and the secrets they bring.

A fleet is planned without I/O from what the factory read (``FleetInputs``) and, on a reload (issue 34.3),
from the running fleet: a source whose entry did not change keeps its resolved entry and health (it is not
checked or probed again), an ACP whose launch did not change keeps its running server, and only new servers
are made (by the factory's ``make_process``). ``start`` boots the servers and asks the validator
(sources/validate.py) about every other source; ``probe`` makes each such source's first call.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc
from analytics_acp.errors import UpstreamError
from analytics_acp.host import ProtocolError

from ..sources.entries import Source, SourcesFile
from ..sources.health import SourceHealth
from ..sources.redact import Secrets
from ..sources.validate import acp_finding, entry_finding, start_finding
from .discovery import AcpLaunch
from .process import AcpProcess, ServerUnavailable

log = logging.getLogger("analytics_acp_bridge")
# The start-up probe of each source (autocontext without resource: the call that connects first).
# It runs in the background: no answer of the bridge waits for it (issue 26.5).
PROBE_TIMEOUT_S = float(os.environ.get("ACP_BRIDGE_PROBE_TIMEOUT", "30"))

MakeProcess = Callable[[AcpLaunch], AcpProcess]
SessionId = Callable[[str], str]


@dataclass
class FleetInputs:
    """What the factory read: sources.json parsed (references resolved) and the ACPs it can launch."""

    sources: SourcesFile
    launches: dict[str, AcpLaunch]


class Fleet:
    """The sources of one sources.json, their health and the ACP servers they use (one per ACP, 16.4)."""

    def __init__(self, inputs: FleetInputs, processes: dict[str, AcpProcess], secrets: Secrets, session_id: SessionId,
                 carried: set[int] | None = None):
        self.sources = inputs.sources
        self.launches = inputs.launches
        self.processes = processes
        self.secrets = secrets
        self.session_id = session_id
        self.health = SourceHealth(self.sources)
        self._carried = carried or set()  # id() of sources kept from the previous fleet: no check, no probe
        self._lent: set[str] = set()  # ACP ids whose running server another owner lent (lend): not bound, not stopped
        self.ready = anyio.Event()  # servers started, every source checked

    @classmethod
    def plan(cls, inputs: FleetInputs, secrets: Secrets, session_id: SessionId, make_process: MakeProcess,
             previous: Fleet | None = None) -> Fleet:
        """The fleet for ``inputs``: entries checked (validator steps 1-2), unchanged sources and servers taken
        over from ``previous``, a new server made for each other ACP a source needs. No I/O but ``make_process``."""
        carried: dict[int, Any] = {}
        if previous is not None:
            for index, source in enumerate(inputs.sources.sources):
                old = previous.sources.get(source.id)
                if old is not None and previous.unchanged(old, source, inputs.launches):
                    inputs.sources.sources[index] = old
                    carried[id(old)] = previous.health.of(old)
        processes: dict[str, AcpProcess] = {}
        fleet = cls(inputs, processes, secrets, session_id, set(carried))
        for source in fleet.sources.sources:
            if id(source) in carried:
                fleet.health.keep(source, carried[id(source)])
                continue
            finding = entry_finding(source, list(fleet.launches), fleet.sources.path)
            if finding is not None:
                fleet.health.setup_error(source, finding)
        for acp_id in sorted({s.acp for s in fleet.sources.sources if fleet.health.publishes_tools(s)}):
            running = previous.processes.get(acp_id) if previous is not None else None
            launch = fleet.launches[acp_id]
            processes[acp_id] = running if running is not None and running.launch == launch else make_process(launch)
        secrets.add(fleet.sources.secrets, logs_only={v for s in fleet.sources.sources for v in s.secret_values(None)})
        return fleet

    def unchanged(self, old: Source, new: Source, launches: dict[str, AcpLaunch]) -> bool:
        """``new`` serves exactly as ``old`` does (same entry, same launch) and ``old`` has no set-up error."""
        return (old.fingerprint == new.fingerprint and not self.health.of(old).setup and old.acp in self.processes
                and self.processes[old.acp].launch == launches.get(new.acp))

    def narrow(self, only: Collection[str]) -> None:
        """Check and probe only the sources named in ``only`` (a set-up check of some sources of a file, read
        whole: ids, defaults and duplicates as in the file); the servers only the others use are not started."""
        self._carried |= {id(s) for s in self.sources.sources if s.id not in only}
        needed = {s.acp for s in self._fresh()}
        for acp_id in [a for a in self.processes if a not in needed]:
            del self.processes[acp_id]

    def lend(self, running: Callable[[AcpLaunch], AcpProcess | None]) -> None:
        """Use a server already running for the same launch, when ``running`` has one, instead of a new one (the
        set-up page's servers: a check then makes the same calls without starting a process). Its owner keeps it:
        this fleet neither binds nor stops it."""
        for acp_id, proc in list(self.processes.items()):
            lent = running(proc.launch)
            if lent is not None and lent is not proc and lent.client is not None and lent.launch == proc.launch:
                self.processes[acp_id] = lent
                self._lent.add(acp_id)

    # ----- start -----
    async def start(self, tg: anyio.abc.TaskGroup) -> None:
        """Boot the servers concurrently (each bound by its start bound; their connections live in ``tg``), then
        check every source that was not carried over (validator steps 3-4), then ``ready``."""
        async def boot(proc: AcpProcess) -> None:
            try:
                await proc.ensure()
            except ServerUnavailable:
                pass  # proc.error holds it; the sources that use it get a set-up error below

        try:
            for acp_id, proc in self.processes.items():
                if acp_id not in self._lent:
                    proc.bind(tg)
            async with anyio.create_task_group() as boot_tg:
                for proc in self.processes.values():
                    boot_tg.start_soon(boot, proc)
            async with anyio.create_task_group() as check_tg:
                for source in self._fresh():
                    check_tg.start_soon(self._check, source)
            self._collect_secrets()
        finally:
            self.ready.set()

    def _fresh(self) -> list[Source]:
        """Sources to check and probe: not carried over, no set-up error so far."""
        return [s for s in self.sources.sources if id(s) not in self._carried and self.health.publishes_tools(s)]

    async def _check(self, source: Source) -> None:
        proc = self.processes[source.acp]
        if proc.client is None:
            self.health.setup_error(source, start_finding(source, proc.error))
            return
        finding = await acp_finding(source, proc.client, self.sources.path, proc.launch.cwd)
        if finding is not None:
            self.health.setup_error(source, finding)

    def _collect_secrets(self) -> None:
        """Literal credential values the ACP marks writeOnly (5.5) join the env/file ones as secrets."""
        for source in self.sources.sources:
            proc = self.processes.get(source.acp)
            schema = proc.capability.get("credentials_schema") if proc is not None and proc.client is not None else None
            self.secrets.add(source.secret_values(schema if isinstance(schema, dict) else None))

    async def probe(self) -> None:
        """Call autocontext (no resource) once per checked healthy source, as the model's first call would, each
        bounded by ACP_BRIDGE_PROBE_TIMEOUT: wrong credentials, a missing file or an unreachable server show in
        acp_sources and the log (validator, online)."""
        async with anyio.create_task_group() as tg:
            for source in self._fresh():
                proc = self.processes[source.acp]
                if proc.client is None:
                    continue
                if proc.plain_mcp_reason is None and any(t.get("name") == "autocontext" for t in proc.tools):
                    tg.start_soon(self._probe, source, proc)
                else:
                    self.health.started(source)  # a plain MCP server (4.3) has no autocontext to probe

    async def _probe(self, source: Source, proc: AcpProcess) -> None:
        meta = {**source.meta(), "session_id": self.session_id(source.id), "conversation_id": self.session_id(source.id)}
        payload: dict[str, Any] | None = None
        with anyio.move_on_after(PROBE_TIMEOUT_S) as scope:
            try:
                result = await proc.call("autocontext", {}, meta)
            except (ServerUnavailable, ProtocolError) as exc:
                payload = UpstreamError(str(exc)).payload()
            else:
                if result.is_error:
                    payload = result.error or UpstreamError(result.text or "autocontext failed").payload()
        if scope.cancelled_caught:
            payload = UpstreamError(f"The first call (autocontext) did not answer within {PROBE_TIMEOUT_S:g} s.").payload()
        if payload is None:
            self.health.started(source)
        else:
            self.health.probe_failed(source, payload)
            self.log_source(source)

    # ----- what people read -----
    def log_problems(self) -> None:
        """One log line for an unusable sources.json and one per source that has a problem or a warning."""
        if self.sources.error:
            log.warning("%s", _one_line(f"sources.json: {self.sources.error}"))
        for source in self.sources.sources:
            if id(source) not in self._carried:
                self.log_source(source)

    def log_source(self, source: Source) -> None:
        """The source's problem (or warnings) as one scrubbed log line; nothing when it has neither."""
        health = self.health.of(source)
        text = health.line() or " ".join(source.warnings)
        if text:
            log.warning("%s", _one_line(self.secrets.log_redactor.text(f"source {source.id!r} ({source.acp}): {text}")))

    def usable(self, source: Source) -> AcpProcess | None:
        """The running server of a source that publishes tools, else None."""
        proc = self.processes.get(source.acp)
        if not self.health.publishes_tools(source) or proc is None or proc.client is None:
            return None
        return proc

    async def aclose(self) -> None:
        """Stop every server of this fleet (a lent one stays with its owner)."""
        for acp_id, proc in self.processes.items():
            if acp_id not in self._lent:
                await proc.aclose()


def _one_line(text: str) -> str:
    return " ".join(str(text).split())
