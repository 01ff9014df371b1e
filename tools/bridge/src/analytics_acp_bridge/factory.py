"""The bridge's I/O in one place (issue 38.5): reading sources.json, finding the ACPs it can launch, the temp
folder, the ACP server processes. The parts it builds (Fleet, Catalog, Forwarder, Bridge) take everything in
their constructors and do no I/O there, so a new sources.json simply gives new inputs (``read``) and a new
fleet planned over the running one (``plan``), which the bridge compares with it (issue 34.3).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

from analytics_acp.errors import TableNotFound

from .bridge import INLINE_MAX_BYTES, Bridge
from .calls.forward import Forwarder
from .fleet.discovery import AcpLaunch, discover
from .fleet.fleet import Fleet, FleetInputs
from .fleet.process import AcpProcess, Resolver
from .paths import Paths
from .query.cache import TableCache
from .serving.skillpub import SkillCatalog
from .sources.entries import load_sources, parse_sources
from .sources.redact import Secrets
from .store.activity import ActivityLog
from .store.datasets import DatasetStore
from .view.pages import DatasetView


class Factory:
    """Builds the parts of one bridge run (or of one ``--check``) for ``paths``."""

    def __init__(self, paths: Paths, *, inline_max_bytes: int = INLINE_MAX_BYTES):
        self.paths = paths
        self.inline_max_bytes = inline_max_bytes
        self.run_id = uuid.uuid4().hex
        self.secrets = Secrets()
        self.resolver: Resolver = _no_tables  # acp/read_table for the servers: the forwarder's once a bridge is built
        self._tmp: Path | None = None
        self._made = 0

    def session_id(self, source_id: str) -> str:
        """16.5: ``bridge-<uuid>:<source>``, one per source and bridge start."""
        return f"bridge-{self.run_id}:{source_id}"

    @property
    def tmp(self) -> Path:
        """The run's temp folder (made on first use, removed by ``close``)."""
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="analytics-acp-bridge-"))
        return self._tmp

    def read(self, data: Any = None) -> FleetInputs:
        """sources.json as it is now (or ``data`` as if it were that file) and the ACPs that can be launched now."""
        if data is None:
            sources = load_sources(self.paths.sources, self.paths.project)
        else:
            sources = parse_sources(data, self.paths.sources, self.paths.project)
        return FleetInputs(sources, discover(self.paths.root))

    def plan(self, inputs: FleetInputs, previous: Fleet | None = None) -> Fleet:
        """The fleet for ``inputs``, taking over what ``previous`` can keep; new servers made here (not started)."""
        def make_process(launch: AcpLaunch) -> AcpProcess:
            self._made += 1  # a relaunched ACP gets a folder of its own: the early CSV reader watches one server
            return AcpProcess(launch, self.resolver, self.tmp / f"acp-{launch.id}-{self._made}", acp_cache_dir(launch),
                              self.secrets.errlog())

        return Fleet.plan(inputs, self.secrets, self.session_id, make_process, previous)

    def bridge(self) -> Bridge:
        """A bridge: its store, query cache, forwarder and first fleet (not started)."""
        store = DatasetStore(self.paths.project)
        query_cache = TableCache()  # acp_query tables kept until their CSV changes (bench case 5)
        forwarder = Forwarder(store, query_cache, sources_path=self.paths.sources, read_dir=self.tmp / "read",
                              inline_max_bytes=self.inline_max_bytes, session_id=self.session_id,
                              redactor=self.secrets.redactor)
        self.resolver = forwarder.resolve
        # The skills are read again at each listing, from the ACPs installed then (13.1: no restart needed).
        skills = SkillCatalog(self.paths.project, self.paths.root, lambda: discover(self.paths.root))
        return Bridge(self.paths, fleet=self.plan(self.read()), forwarder=forwarder, view=DatasetView(store, query_cache),
                      skills=skills, secrets=self.secrets, parts=self, cleanup=self.close,
                      activity=ActivityLog(store.dir, self.secrets.log_redactor))

    def check_fleet(self, data: Any = None) -> Fleet:
        """A fleet for ``--check`` and the set-up page: no store, and no table reads (nothing calls a tool)."""
        return self.plan(self.read(data))

    def close(self) -> None:
        """Remove the temp folder and close the servers' stderr pipe."""
        self.secrets.close()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)


async def _no_tables(ref: str, call_id: str | None) -> dict[str, Any]:
    raise TableNotFound(f"Table {ref!r} is not available during a set-up check.")


def acp_cache_dir(launch: AcpLaunch) -> Path | None:
    """The ACP_CACHE_DIR an ACP server of ``launch`` gets (the set-up page starts its servers the same way).

    13.1: an ACP folder gets its own cache, apart from the installed connector of the same id."""
    base = os.environ.get("ACP_CACHE_DIR")
    if launch.origin != "folder" or not base:
        return None  # installed connectors share the environment's ACP_CACHE_DIR (inherited)
    return Path(base) / "bridge-acps" / launch.id
