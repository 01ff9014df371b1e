"""What lives as long as the server process, as one plain object the call steps receive.

A leaf of the call path: ``calls.ConnectorRuntime`` builds one ``RuntimeState`` and hands it to
the step modules (reserved_tools, finishing, first_call, runtime_tools), which never import
``calls`` back (issue 27.2: the core's imports form a DAG, tests/test_core_imports.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .catalog import catalog_for_tool, tables_argument_schema
from .declarations import ConnectorInfo, ToolSpec
from .delivery import DeliveryTracker
from .dirs import cache_dir
from .plugins import LoadedConnector
from .toolschemas import publish_schema

if TYPE_CHECKING:
    from .autocontext import AutocontextEngine
    from .resources import RecentStore, ResourceListCache


@dataclass
class RuntimeState:
    """The loaded connector, its autocontext engine and caches, the 7.5 tracker and the recent-resource store.

    The engine and the resource stores are built (and their modules imported) at first use: initialize and
    tools/list need neither (cold start, tools/bench case 4).
    """

    loaded: LoadedConnector
    cache_directory: Path | None  # ACP_CACHE_DIR when the state was built
    delivery: DeliveryTracker = field(default_factory=DeliveryTracker)
    _schemas: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def build(cls, loaded: LoadedConnector) -> RuntimeState:
        """The state of a freshly loaded connector (disk caches under ACP_CACHE_DIR when set)."""
        return cls(loaded=loaded, cache_directory=cache_dir())

    @cached_property
    def engine(self) -> AutocontextEngine:
        """The autocontext engine and its block cache (on disk under ACP_CACHE_DIR/autocontext when set)."""
        from .autocontext import AutocontextEngine
        from .cache import TTLCache

        directory = self.cache_directory
        return AutocontextEngine(self.info, self.loaded.blocks, TTLCache(directory / "autocontext" if directory else None))

    @cached_property
    def recent(self) -> RecentStore:
        """Resources used recently, for the suggestions of 6.3 (kept under ACP_CACHE_DIR when set)."""
        from .resources import RecentStore

        return RecentStore(self.cache_directory)

    @cached_property
    def listings(self) -> ResourceListCache:
        """The connector's resource listings, cached per identity (6.3)."""
        from .resources import ResourceListCache

        return ResourceListCache()

    @property
    def info(self) -> ConnectorInfo:
        """The connector's declaration."""
        return self.loaded.info

    def declared_arguments(self, name: str) -> set[str]:
        """Argument names the argument model of tool ``name`` declares (none for unknown tools)."""
        tool = self.loaded.tools.get(name)
        return set(tool.arguments.argument_names()) if tool else set()

    def published_schema(self, tool: ToolSpec) -> dict[str, Any]:
        """The inputSchema of one connector tool as the model sees it (cached per tool)."""
        if tool.name not in self._schemas:
            tables_property = None
            catalog = catalog_for_tool(self.info.table_catalog, tool.name)
            if tool.multitable and catalog:
                tables_property = tables_argument_schema(catalog, tool.name)
            self._schemas[tool.name] = publish_schema(self.info, tool, tables_property)
        return self._schemas[tool.name]
