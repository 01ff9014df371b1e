"""Plugin loading: one pluggy manager per served connector.

Connectors register under the entry-point group ``analytics_acp.connectors``
(name = connector id, value = its ``plugin`` module). Test-only connectors (the kit's reference
``example``) register under ``analytics_acp.test_connectors``: ``serve`` finds them, but they are
not listed by ``analytics-acp connectors`` nor offered by the bridge. Extension plugins (audit,
timing...) register under ``analytics_acp.plugins`` and join every manager; one that implements a hook
only the connector answers (``hookspecs.CONNECTOR_HOOKS``) is refused at load.
``ANALYTICS_ACP_PLUGINS`` (comma-separated names) restricts which entry points load;
a frozen build registers its one connector module explicitly (PyInstaller drops entry points).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

import pluggy

from . import hookspecs
from .declarations import BlockSpec, ConnectorInfo, ToolSpec
from .errors import AcpError
from .identity_memo import IdentityMemo
from .lazy import check_lazy
from .state import ConnectorState

CONNECTOR_GROUP = "analytics_acp.connectors"
TEST_CONNECTOR_GROUP = "analytics_acp.test_connectors"
PLUGIN_GROUP = "analytics_acp.plugins"
ENV_RESTRICT = "ANALYTICS_ACP_PLUGINS"


class ConnectorNotFound(LookupError):
    """No connector with that id is installed."""


class ExtensionRefused(TypeError):
    """An extension plugin implements a hook only the connector answers (issue 38.4)."""


def _allowed(name: str) -> bool:
    raw = os.environ.get(ENV_RESTRICT)
    if raw is None or not raw.strip():
        return True
    return name in {part.strip() for part in raw.split(",")}


def available_connectors(include_tests: bool = False) -> dict[str, str]:
    """Installed connectors: id -> module path of its plugin (entry points, filtered by ANALYTICS_ACP_PLUGINS).

    ``include_tests`` adds the test-only connectors (what ``serve`` may load, never what a user is offered).
    """
    return _connectors(_installed(), include_tests)


def _installed() -> dict[str, list[Any]]:
    """The entry points of the core's groups, from one read of every installed distribution's entry points
    (each ``entry_points(group=...)`` reads them all again: ``serve`` needs three groups). Not kept: a
    long-running host (the bridge, the set-up page) sees a connector installed since."""
    everything = entry_points()  # selected below: the same entry points, in the same order, as entry_points(group=)
    return {group: list(everything.select(group=group)) for group in (CONNECTOR_GROUP, TEST_CONNECTOR_GROUP, PLUGIN_GROUP)}


def _connectors(installed: dict[str, list[Any]], include_tests: bool) -> dict[str, str]:
    found: dict[str, str] = {}
    groups = (CONNECTOR_GROUP, TEST_CONNECTOR_GROUP) if include_tests else (CONNECTOR_GROUP,)
    for group in groups:
        for ep in installed[group]:
            if _allowed(ep.name):
                found.setdefault(ep.name, ep.value)
    return dict(sorted(found.items()))


@dataclass
class LoadedConnector:
    """A connector's plugin manager with its declaration, tools and blocks collected."""

    pm: pluggy.PluginManager
    info: ConnectorInfo
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    blocks: dict[str, BlockSpec] = field(default_factory=dict)
    tool_owner: dict[str, str] = field(default_factory=dict)  # tool name -> plugin name (attribution)
    state: ConnectorState = field(default_factory=ConnectorState)  # what the connector keeps between calls (state.py)
    identities: IdentityMemo = field(default_factory=IdentityMemo, repr=False)  # hashed session credentials (identity_memo.py)

    @property
    def hook(self) -> Any:
        """The pluggy hook relay."""
        return self.pm.hook

    @property
    def extraction_tools(self) -> list[str]:
        """Extraction tool names, the default one first (4.2)."""
        names = [t.name for t in self.tools.values() if t.kind == "extraction"]
        names.sort(key=lambda n: not self.tools[n].default)
        return names


def new_manager() -> pluggy.PluginManager:
    """A plugin manager with the ACP hookspecs and the core's own fallbacks."""
    pm = pluggy.PluginManager("analytics_acp")
    pm.add_hookspecs(hookspecs)
    from . import core_plugin

    pm.register(core_plugin, name="analytics_acp.core")
    return pm


def load_connector(connector: str | ModuleType, *, extensions: bool = True) -> LoadedConnector:
    """Build the manager for one connector: an id (entry point), a module path, or a module object."""
    pm = new_manager()
    # One read of the installed entry points, and none for a module object without extensions (a frozen build's).
    installed = _installed() if extensions or not isinstance(connector, ModuleType) else {}
    if isinstance(connector, ModuleType):
        module, name = connector, connector.__name__
    else:
        table = _connectors(installed, include_tests=True)
        target = table.get(connector, connector)  # an installed id, else a plugin module path
        try:
            module = importlib.import_module(target.split(":")[0])
        except ModuleNotFoundError as exc:
            if exc.name != target.split(":")[0].split(".")[0] and connector in table:
                raise
            raise ConnectorNotFound(
                f"No connector named {connector!r}. Installed: {', '.join(_connectors(installed, False)) or 'none'}."
            ) from None
        name = connector
    pm.register(module, name=f"connector:{name}")
    if extensions:
        for ep in installed[PLUGIN_GROUP]:
            if _allowed(ep.name):
                extension = ep.load()
                pm.register(extension, name=f"plugin:{ep.name}")
                _refuse_connector_hooks(pm, extension, ep.name)
    pm.check_pending()
    info = pm.hook.connector_declaration()
    if not isinstance(info, ConnectorInfo):
        raise TypeError(f"{name}: connector_declaration() must return a ConnectorInfo")
    loaded = LoadedConnector(pm=pm, info=info, state=ConnectorState(info.id))
    _collect(loaded)
    return loaded


def _refuse_connector_hooks(pm: pluggy.PluginManager, extension: object, name: str) -> None:
    """Refuse an extension that implements a connector hook: a firstresult hook would answer in the
    connector's place (its ``list_resources`` would replace the connector's listing), a lifecycle hook
    that raised would skip the connector's own shutdown."""
    taken = sorted(c.name for c in pm.get_hookcallers(extension) or [] if c.name in hookspecs.CONNECTOR_HOOKS)
    if taken:
        raise ExtensionRefused(
            f"Extension plugin {name!r} (entry point group {PLUGIN_GROUP}) implements {', '.join(taken)}: "
            f"{'these hooks belong' if len(taken) > 1 else 'this hook belongs'} to the connector and an extension "
            f"would take its place. An extension may implement {', '.join(sorted(hookspecs.EXTENSION_HOOKS))}; "
            f"remove the others, or leave the plugin out with {ENV_RESTRICT}."
        )


def _collect(loaded: LoadedConnector) -> None:
    """Register the tools and blocks the ConnectorInfo declares, then run the register_* hooks (extension
    plugins), recording which plugin registered each tool; clashes are errors."""
    reserved = {"autocontext", "autocontext_data"}

    def register_tool(tool: ToolSpec, owner: str) -> None:
        if tool.name in reserved:
            raise ValueError(f"{owner}: {tool.name!r} is a reserved ACP tool name (7.2, 7.3)")
        if tool.name in loaded.tools:
            raise ValueError(f"tool {tool.name!r} registered twice ({loaded.tool_owner[tool.name]} and {owner})")
        check_lazy(tool.run, f"{owner}: tool {tool.name!r}")  # a misspelt module stops the load, not the first call
        loaded.tools[tool.name] = tool
        loaded.tool_owner[tool.name] = owner

    def register_block(block: BlockSpec) -> None:
        from .blockids import check_block_id

        check_block_id(block.id)
        if block.id in loaded.blocks:
            raise ValueError(f"block {block.id!r} registered twice")
        check_lazy(block.fetch, f"block {block.id!r}")
        loaded.blocks[block.id] = block

    check_lazy(loaded.info.check_setup, f"connector:{loaded.info.id}: check_setup")
    for tool in loaded.info.tools:
        register_tool(tool, f"connector:{loaded.info.id}")
    for block in loaded.info.blocks:
        register_block(block)
    for impl in loaded.pm.hook.register_tools.get_hookimpls():
        owner = loaded.pm.get_name(impl.plugin) or "?"
        _call_impl(impl, register=lambda tool, _owner=owner: register_tool(tool, _owner), info=loaded.info)
    for impl in loaded.pm.hook.register_blocks.get_hookimpls():
        _call_impl(impl, register=register_block, info=loaded.info)


def _call_impl(impl: Any, **kwargs: Any) -> None:
    # Implementations may take fewer arguments than the spec (pluggy convention).
    wanted = {k: v for k, v in kwargs.items() if k in impl.argnames}
    impl.function(**wanted)


__all__ = [
    "AcpError",
    "ConnectorNotFound",
    "ExtensionRefused",
    "LoadedConnector",
    "available_connectors",
    "load_connector",
    "new_manager",
]
