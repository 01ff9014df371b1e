"""What one run of the page holds: where it works, its secrets, its ACP servers, drafts and sign-ins."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analytics_acp_bridge.paths import Paths
from analytics_acp_bridge.sources.redact import Redactor

from .catalog import AcpEntry, Capability, Servers, installed
from .drafts import Drafts
from .runs import Runner
from .security import Security
from .signin import SignIns
from .verdicts import Report, Verdict


@dataclass
class UiState:
    """The page's state (one per ``analytics-acp ui`` run)."""

    paths: Paths
    security: Security
    tmp: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="analytics-acp-ui-")))
    drafts: Drafts = field(default_factory=Drafts)
    signins: SignIns = field(default_factory=SignIns)
    redactor: Redactor = field(default_factory=Redactor)
    flash: list[str] = field(default_factory=list)
    reports: dict[str, tuple[Any, Report]] = field(default_factory=dict)  # "offline" -> (file stamp, report)
    online: dict[str, tuple[Any, Verdict]] = field(default_factory=dict)  # source id -> (file stamp, its online test)
    identities: dict[str, AcpEntry] = field(default_factory=dict)  # installed connectors, read once
    servers: Servers = field(init=False)
    runner: Runner = field(init=False)  # queries run from the page, through the bridge's own call path (issue 37)
    _secret_home: str | None = field(default=None, init=False)
    _view: Any = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.servers = Servers(self.tmp, self.redactor)
        self.runner = Runner(self.paths, self.redactor)

    def acps(self) -> dict[str, AcpEntry]:
        """The installed ACPs, read again (a folder copied into acps/ appears without a restart, 13.1)."""
        return installed(self.paths.root, self.identities)

    async def capability(self, entry: AcpEntry) -> Capability:
        """The capability of an installed ACP (its server started once and kept while the page runs)."""
        return await self.servers.capability(entry.launch)

    def dataset_view(self) -> Any:
        """The bridge's dataset view over the project's acp-data (its store and its query cache, kept while the page runs)."""
        if self._view is None:
            from analytics_acp_bridge.query.cache import TableCache
            from analytics_acp_bridge.store.datasets import DatasetStore
            from analytics_acp_bridge.view.pages import DatasetView

            self._view = DatasetView(DatasetStore(self.paths.project), TableCache())
        return self._view

    def secret_home(self) -> str:
        """Where secrets typed on the page go, in words (asked once: probing a Secret Service is slow)."""
        if self._secret_home is None:
            from analytics_acp.secret_store import backend_description

            self._secret_home = backend_description()
        return self._secret_home

    def say(self, message: str) -> None:
        """A message for the next page the person sees."""
        self.flash.append(message)

    def take_flash(self) -> list[str]:
        """The pending messages, once."""
        out, self.flash = self.flash, []
        return out

    def stamp(self) -> Any:
        """What identifies the current sources.json (a change makes the verdicts stale)."""
        try:
            st = self.paths.sources.stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def cleanup(self) -> None:
        """Remove the page's temp folder."""
        shutil.rmtree(self.tmp, ignore_errors=True)
