"""Hook implementations of the `databases` connector (nothing else lives here).

Start-up imports only declaration.py; SQLAlchemy, sqlglot and the drivers load on the first call.
"""

from __future__ import annotations

from analytics_acp import hookimpl

from . import declaration


@hookimpl
def connector_declaration():
    """The connector's ConnectorInfo (4.2)."""
    return declaration.connector_info()


@hookimpl
def list_resources(ctx):
    """Databases, schemas and tables the credentials can see (6.3)."""
    from .resources import list_resources as _list

    return _list(ctx)


@hookimpl
def normalize_resource_id(resource_id, ctx):
    """Normalize quoting, backticks and '/' separators; return the id with its level (6.1)."""
    from .resources import normalize

    return normalize(resource_id, ctx)


@hookimpl
def credentials_resource(credentials):
    """The database the credentials connect to (server/url ``database``, or the single file's stem)."""
    from .resource_ids import credential_database, join_parts

    database = credential_database(credentials)
    return join_parts([database]) if database else None

