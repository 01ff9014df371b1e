"""The state of one checklist run: how to connect, what to send, and every response seen."""

from __future__ import annotations

import copy
import json
import os
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..host import AcpClient
from .model import Findings, Seen

# A host table the kit's resolver serves (8.8): sample calls may pass table_ref="kit_numbers".
KIT_HOST_TABLES: dict[str, dict[str, Any]] = {
    "kit_numbers": {
        "format": "inline",
        "row_count": 4,
        "headers": [{"name": "day", "type": "date"}, {"name": "value", "type": "integer"},
                    {"name": "label", "type": "string"}],
        "table": [
            {"day": "2026-01-01", "value": 3, "label": "a"},
            {"day": "2026-01-02", "value": 5, "label": "b"},
            {"day": "2026-01-03", "value": 8, "label": "c"},
            {"day": "2026-01-04", "value": 13, "label": "d"},
        ],
    }
}
# A server that stops answering makes the run fail instead of hanging (slow real sources stay well below).
READ_TIMEOUT_S = 300.0
# A secret-looking value the kit sends inside deliberately invalid credentials (10.3).
PROBE_SECRET = "kit-probe-SECRET-7f3a9c2e"


@dataclass
class Sample:
    """One sample call: tool, arguments and extra ``_meta.acp`` for it."""

    tool: str
    arguments: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)


def parse_samples(sample_calls: Any) -> list[Sample]:
    """``[(tool, args)]`` or ``[(tool, args, meta)]`` (or dicts with tool/arguments/meta) as Samples."""
    out = []
    for entry in sample_calls or []:
        if isinstance(entry, Sample):
            out.append(entry)
        elif isinstance(entry, dict):
            out.append(Sample(entry["tool"], dict(entry.get("arguments") or {}), dict(entry.get("meta") or {})))
        else:
            tool, args, *rest = entry
            out.append(Sample(tool, dict(args or {}), dict(rest[0] or {}) if rest else {}))
    return out


class Run:
    """Connection factory + recorder shared by every probe of one run_checklist call."""

    def __init__(self, *, command: list[str] | None, url: str | None, token: str | None, env: dict[str, str] | None,
                 cwd: str | None, credentials: dict[str, Any] | None, config: dict[str, Any] | None,
                 resource_id: str | None, samples: list[Sample], host_tables: dict[str, dict[str, Any]],
                 package_dir: Path | None):
        self.command, self.url, self.token, self.cwd = command, url, token, cwd
        self.credentials, self.config, self.resource_id = credentials, config, resource_id
        self.resource_origin = "given to the kit" if resource_id else ""  # or how the kit chose it (choose_resource)
        self.no_resource = "no resource_id given to the kit"  # why there is none, for the items that need one
        self.samples, self.host_tables, self.package_dir = samples, host_tables, package_dir
        self.findings = Findings()
        self.server_files: list[Path] = []  # an HTTP server's log/cache/tmp the secret scan reads too
        self.progress: Callable[[str], None] | None = None  # told the name of each step as it starts
        self.seen: list[Seen] = []
        self.texts: list[tuple[str, str]] = []  # (where, published text) for the English check
        self.wire: list[str] = []  # every JSON text received (configure answers, errors...) for the secret scan
        self.read_table_calls: list[tuple[str, str | None]] = []
        self.capability: dict[str, Any] = {}
        self.server_info: dict[str, Any] = {}
        self.tools: dict[str, dict[str, Any]] = {}
        self._dir = Path(tempfile.mkdtemp(prefix="analytics-acp-kit-"))
        self.stderr_path = self._dir / "server-stderr.log"
        self.env = dict(env or {})
        # The server's caches and temp files go where the kit can scan them for secrets (7.4, 10.1).
        self.env.setdefault("ACP_CACHE_DIR", str(self._dir / "cache"))
        self.env.setdefault("ACP_TMP_DIR", str(self._dir / "tmp"))

    # --- connections -----------------------------------------------------------------------
    @asynccontextmanager
    async def connect(self, capability: dict[str, Any] | bool | None = None) -> AsyncIterator[AcpClient]:
        """A new connection (new session) to the server under test; ``False`` = plain MCP client."""
        resolver = self._resolve if capability is not False else None
        if self.url:
            async with AcpClient.http(self.url, token=self.token, capability=capability, resolver=resolver,
                                      read_timeout=READ_TIMEOUT_S) as client:
                yield client
        else:
            assert self.command is not None  # run_checklist takes a command or a url
            with open(self.stderr_path, "a", encoding="utf-8") as errlog:
                async with AcpClient.stdio(self.command, env={**os.environ, **self.env}, cwd=self.cwd,
                                           capability=capability, resolver=resolver, errlog=errlog,
                                           read_timeout=READ_TIMEOUT_S) as client:
                    yield client

    async def _resolve(self, ref: str, call_id: str | None) -> dict[str, Any]:
        from ..errors import TableNotFound

        self.read_table_calls.append((ref, call_id))
        if ref not in self.host_tables:
            raise TableNotFound(f"The host has no table {ref!r}. Pass the id of a dataset.")
        return copy.deepcopy(self.host_tables[ref])

    # --- calls -------------------------------------------------------------------------------
    def meta(self, *, credentials: bool = True, **extra: Any) -> dict[str, Any]:
        """``_meta.acp`` with the run's credentials/config plus ``extra``."""
        out: dict[str, Any] = {}
        if credentials and self.credentials is not None:
            out["credentials"] = copy.deepcopy(self.credentials)
        if self.config:
            out["config"] = copy.deepcopy(self.config)
        out.update(extra)
        return out

    async def call(self, client: Any, tool: str, arguments: dict[str, Any] | None = None,
                   meta: dict[str, Any] | None = None, label: str = "") -> Seen:
        """tools/call through the host client; the response is recorded for the global checks."""
        args = copy.deepcopy(arguments or {})
        result = await client.call_tool(tool, args, meta=meta)
        seen = Seen(tool=tool, arguments=args, meta=meta, raw=result.raw, result=result, label=label or tool,
                    kind=self.kind_of(tool))
        self.wire.append(json.dumps(result.raw, ensure_ascii=False, default=str))
        self.seen.append(seen)
        return seen

    def record_wire(self, value: Any) -> None:
        """Remember a non-tools/call answer (configure, errors) for the secret scan."""
        self.wire.append(json.dumps(value, ensure_ascii=False, default=str))

    def kind_of(self, tool: str) -> str:
        """Published kind of a tool: autocontext, autocontext_data, extraction or info."""
        if tool in ("autocontext", "autocontext_data"):
            return tool
        return "extraction" if tool in (self.capability.get("extraction_tools") or []) else "info"

    def with_resource(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Arguments plus the run's resource_id when the tool publishes one and none is given."""
        args = dict(arguments)
        props = ((self.tools.get(tool) or {}).get("inputSchema") or {}).get("properties") or {}
        if "resource_id" in props and "resource_id" not in args and self.resource_id:
            args["resource_id"] = self.resource_id
        return args

    def publishes(self, tool: str, prop: str) -> bool:
        """True when the tool's published inputSchema has ``prop``."""
        return prop in (((self.tools.get(tool) or {}).get("inputSchema") or {}).get("properties") or {})

    def extraction_samples(self) -> list[Sample]:
        """Sample calls of extraction tools."""
        return [s for s in self.samples if self.kind_of(s.tool) == "extraction"]

    def cleanup_dir(self) -> Path:
        """The run's private folder (stderr log, cache and tmp of a stdio server)."""
        return self._dir
