"""The tool catalog: every source's tools as the client sees them (16.4) and the route of each back to its ACP.

Built from a started fleet, without I/O; a reload builds a new one and compares it with the running one
(``same_tools``) to know whether to send ``notifications/tools/list_changed``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..fleet.fleet import Fleet
from ..fleet.process import AcpProcess
from ..sources.redact import Redactor
from .exposure import Route, rewrite_tool


@dataclass(frozen=True)
class Catalog:
    """The published source tools (wire dicts, file order of the sources) and their routes by public name."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    routes: dict[str, Route] = field(default_factory=dict)

    @classmethod
    def build(cls, fleet: Fleet, redactor: Redactor) -> Catalog:
        """Every tool of every source that publishes tools, descriptions scrubbed of secrets."""
        tools: list[dict[str, Any]] = []
        routes: dict[str, Route] = {}
        for source in fleet.sources.sources:
            proc = fleet.usable(source)
            if proc is None:
                continue
            extraction = set(proc.capability.get("extraction_tools") or [])
            acp_name = _acp_name(proc)
            for tool in proc.tools:
                wire, route = rewrite_tool(tool, source.id, source.label, acp_name, tool["name"] in extraction)
                wire["description"] = redactor.text(wire["description"])
                routes[route.public] = route
                tools.append(wire)
        return cls(tools, routes)

    def same_tools(self, other: Catalog) -> bool:
        """True when a client listing both would see the same tools."""
        return self.tools == other.tools

    def viewed(self) -> set[str]:
        """The tools whose result is about datasets (they save or read one): the dataset view shows them."""
        return {r.public for r in self.routes.values() if r.datasets_shown}

    def of_source(self, source_id: str) -> list[str]:
        """The public names of one source's tools, sorted."""
        return sorted(r.public for r in self.routes.values() if r.source == source_id)


def _acp_name(proc: AcpProcess) -> str:
    info = proc.server_info
    if proc.launch.origin == "folder" and proc.launch.name != proc.launch.id:
        return proc.launch.name
    return str(info.get("title") or info.get("name") or proc.launch.name)
