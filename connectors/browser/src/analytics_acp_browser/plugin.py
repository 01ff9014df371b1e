"""Hook implementations of the browser connector (the logic lives in the modules beside it).

Playwright is imported only when the first page is opened (sessions.SessionPool.browser); the browser is the
connector's state (sessions.BROWSER), closed by the server's stop.
"""

from __future__ import annotations

from analytics_acp import Resource, hookimpl


@hookimpl
def connector_declaration():
    """The browser connector's ConnectorInfo."""
    from .declaration import info

    return info()


@hookimpl
def normalize_resource_id(resource_id, ctx):
    """Any URL, origin or bare host -> scheme://host[:port] (6.1)."""
    from .urls import normalize_resource_id as normalize

    return normalize(resource_id)


@hookimpl
def list_resources(ctx):
    """Origins captured by this server, most recent first (there is no account to list)."""
    from .sessions import BROWSER

    ordered = sorted(ctx.state(BROWSER).pool.origins.items(), key=lambda item: item[1], reverse=True)
    return [Resource(resource_id=origin, name=origin.split("://", 1)[1]) for origin, _ in ordered]

