"""Hook implementations of the ``prediction`` connector (entry point ``analytics_acp.connectors``)."""

from __future__ import annotations

from analytics_acp import hookimpl

from . import declaration


@hookimpl
def connector_declaration():
    """The connector's ConnectorInfo: no remote resource, empty credentials schema (6.1)."""
    return declaration.connector_info()
