"""The installed ACPs as the page shows them (13.1, 13.2, 13.4): identity without starting them, capability by starting them.

Which ACPs exist and how to start them is the bridge's discovery (``acps/`` folders win over installed
connectors). Identity (name, description, icon, skills) is read without starting a process: from
acp.json for a folder, from the connector's declaration for an installed one. Everything else (setup
schemas, resource_id, defaults, table_catalog, blocks, tools) comes from the running server's capability
and tools/list (13.2: the capability owns it), through the bridge's own AcpProcess. Nothing here knows
any particular ACP (14.3).
"""

from __future__ import annotations

import logging
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from analytics_acp.manifest import ManifestError, icon_problem, load_manifest
from analytics_acp.skills import Skill, read_skills
from analytics_acp_bridge.factory import acp_cache_dir
from analytics_acp_bridge.fleet.discovery import AcpLaunch, discover
from analytics_acp_bridge.fleet.process import AcpProcess, ServerUnavailable
from analytics_acp_bridge.sources.redact import Redactor, ScrubbedStderr

log = logging.getLogger("analytics_acp_ui")
START_BOUND_S = 30.0  # an ACP that has not answered initialize by then is reported, not waited on


@dataclass
class AcpEntry:
    """One installed ACP: how to start it and what identifies it on the page."""

    launch: AcpLaunch
    name: str
    description: str = ""
    version: str | None = None
    icon: Path | None = None  # a usable icon file (13.2 rules), else None
    skills: list[Skill] = field(default_factory=list)
    skill_problems: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        """The ACP id."""
        return self.launch.id

    @property
    def origin(self) -> str:
        """``folder`` (acps/<id>) or ``installed`` (a connector of this environment)."""
        return self.launch.origin

    def icon_type(self) -> str:
        """The icon's media type."""
        return (mimetypes.guess_type(self.icon.name)[0] if self.icon else None) or "application/octet-stream"


def _identity(launch: AcpLaunch) -> AcpEntry:
    entry = AcpEntry(launch=launch, name=launch.name, description=launch.description or "")
    folder: Path | None = None
    icon: Any = None
    if launch.origin == "folder" and launch.folder is not None:
        folder = launch.folder
        try:
            manifest = load_manifest(folder)
        except ManifestError:
            manifest = {}
        icon, entry.version = manifest.get("icon"), manifest.get("version")
    else:
        try:
            from analytics_acp.plugins import load_connector

            info = load_connector(launch.id, extensions=False).info
        except Exception:  # a broken connector is still listed: starting it will say what is wrong
            info = None
        if info is not None:
            entry.name, entry.description, entry.version = info.name, info.description, info.version
            folder, icon = info.package_dir, info.icon
    if folder is not None:
        if icon is not None and icon_problem(folder, icon) is None:  # 13.2: else the icon is left out
            entry.icon = (folder / str(icon)).resolve()
        entry.skills, entry.skill_problems = read_skills(folder / "skills")
    return entry


def installed(root: Path | None, known: dict[str, AcpEntry] | None = None) -> dict[str, AcpEntry]:
    """Every ACP the bridge can launch, re-read on each call (13.1: no registry, copying a folder is enough).

    ``known`` keeps the identities of installed connectors between calls (they change only with the
    environment, and reading one imports its plugin); folders are read again every time.
    """
    out: dict[str, AcpEntry] = {}
    for acp_id, launch in discover(root).items():
        if launch.origin == "installed" and known is not None:
            if acp_id not in known:
                known[acp_id] = _identity(launch)
            out[acp_id] = known[acp_id]
        else:
            out[acp_id] = _identity(launch)
    return out


@dataclass
class Capability:
    """What a started ACP declares: its experimental.acp capability, tools and whether it speaks ACP at all."""

    acp: dict[str, Any]
    tools: list[dict[str, Any]]
    plain_mcp_reason: str | None = None

    @property
    def needs_resource(self) -> bool:
        """14.3: a default resource is required when any tool publishes resource_id."""
        return any("resource_id" in ((t.get("inputSchema") or {}).get("properties") or {}) for t in self.tools
                   if t.get("name") not in ("autocontext", "autocontext_data"))


async def _no_tables(ref: str, call_id: str | None) -> dict[str, Any]:
    from analytics_acp.errors import TableNotFound

    raise TableNotFound("The set-up page has no datasets to lend.")


class Servers:
    """The ACP processes the page started (one per ACP, kept while the page runs), their stderr scrubbed."""

    def __init__(self, tmp: Path, redactor: Redactor):
        self.tmp = tmp
        self.redactor = redactor
        self.stderr: ScrubbedStderr | None = None
        self.procs: dict[str, AcpProcess] = {}
        self._blocks: dict[str, list[dict[str, Any]]] = {}
        self._tg: anyio.abc.TaskGroup | None = None

    def bind(self, tg: anyio.abc.TaskGroup) -> None:
        """The task group (the page's lifespan) that owns the connections."""
        self._tg = tg

    async def process(self, launch: AcpLaunch) -> AcpProcess:
        """The running server of ``launch`` (started, bounded by START_BOUND_S); ServerUnavailable if it cannot start."""
        proc = self.procs.get(launch.id)
        if proc is None or proc.launch.command != launch.command or proc.launch.url != launch.url:
            if proc is not None:
                await proc.aclose()
            if self.stderr is None:
                self.stderr = ScrubbedStderr(self.redactor)
            # The environment the bridge gives its servers (one home: its factory), so a check through this
            # server runs as one through the bridge's own would.
            proc = AcpProcess(launch, _no_tables, self.tmp / f"acp-{launch.id}", acp_cache_dir(launch), self.stderr.file)
            if self._tg is None:
                raise ServerUnavailable("The page is not running.")
            proc.bind(self._tg)
            self.procs[launch.id] = proc
        try:
            with anyio.fail_after(START_BOUND_S):
                await proc.ensure()
        except TimeoutError:
            raise ServerUnavailable(f"The {launch.id} ACP server did not answer within {START_BOUND_S:g} s.") from None
        return proc

    def running(self, launch: AcpLaunch) -> AcpProcess | None:
        """The server of exactly ``launch`` when it is running now (what the page lends the bridge's check), else None."""
        proc = self.procs.get(launch.id)
        return proc if proc is not None and proc.launch == launch and proc.client is not None else None

    async def capability(self, launch: AcpLaunch) -> Capability:
        """The capability and tools of ``launch``'s server."""
        proc = await self.process(launch)
        return Capability(acp=dict(proc.capability), tools=list(proc.tools), plain_mcp_reason=proc.plain_mcp_reason)

    async def blocks(self, launch: AcpLaunch) -> list[dict[str, Any]]:
        """The autocontext blocks (7.2: ``autocontext_data`` answers without credentials), ``[]`` when there are none."""
        if launch.id in self._blocks:
            return self._blocks[launch.id]
        found: list[dict[str, Any]] = []
        try:
            proc = await self.process(launch)
            if proc.plain_mcp_reason is None and any(t.get("name") == "autocontext_data" for t in proc.tools):
                with anyio.fail_after(START_BOUND_S):
                    result = await proc.call("autocontext_data", {}, {})
                answer = result.model_response if not result.is_error else None
                items = answer.get("blocks") if isinstance(answer, dict) else answer
                found = [b for b in items or [] if isinstance(b, dict) and isinstance(b.get("id"), str)]
        except (ServerUnavailable, TimeoutError, Exception) as exc:  # no blocks to choose is not an error of the form
            log.info("autocontext_data of %s failed: %s", launch.id, type(exc).__name__)
        self._blocks[launch.id] = found
        return found

    async def aclose(self) -> None:
        """Stop every server."""
        for proc in self.procs.values():
            await proc.aclose()
        self.procs.clear()
        if self.stderr is not None:
            self.stderr.close()
            self.stderr = None
