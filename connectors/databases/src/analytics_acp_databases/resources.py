"""The resource listing (6.3) and the normalize_resource_id hook's work (6.1).

The listing: databases, schemas and tables the credentials can see, source order.

The core ranks (default first, then recent use), pages to 25, filters by ``query`` and caches per
credential identity; this module only lists: the connected database first, then the others.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from analytics_acp import CallContext, Resource, ResourceRef

from . import catalog
from .credentials import ENGINE_TITLES
from .engines import Source, open_read
from .resource_ids import backend_of, credential_database, has_schema_level, join_parts, parse_call_target
from .sqlerrors import map_error
from .state import DATABASES

MAX_RESOURCES = 2000
TABLES_PER_SCHEMA = 300


def _rows(estimate: Any) -> str:
    return f", ~{int(estimate):,} rows" if estimate is not None and int(estimate) >= 0 else ""


def list_resources(ctx: CallContext) -> list[Resource]:
    """Every database/schema/table id (capped at 2000) with a name, group and short description."""
    credentials = ctx.require_credentials()
    source = Source(credentials=credentials, config=dict(ctx.config or {}), database=credential_database(credentials),
                    state=ctx.state(DATABASES))
    try:
        with open_read(source, timeout_s=min(20.0, source.timeout_s)) as session:
            return _list(session, source)
    except sa.exc.DBAPIError as exc:
        raise map_error(exc, credentials) from None


def _list(session: Any, source: Source) -> list[Resource]:
    backend = session.backend
    engine = ENGINE_TITLES.get(backend, backend)
    current = source.database or _current_database(session)
    out: list[Resource] = []
    if has_schema_level(backend):
        out.append(Resource(resource_id=join_parts([current]), name=current, description=f"{engine} database", group=None))
        default = catalog.default_schema(session)
        schemas = catalog.list_schemas(session)
        schemas = ([default] if default in schemas else []) + [s for s in schemas if s != default]
        for schema in schemas:
            tables = catalog.list_tables(session, schema, TABLES_PER_SCHEMA)
            out.append(Resource(resource_id=join_parts([current, schema]), name=f"{current}.{schema}", description=f"schema, {len(tables)} tables", group=current))
            for t in tables:
                out.append(Resource(
                    resource_id=join_parts([current, schema, t["name"]]), name=t["name"],
                    description=f"{t['kind']}{_rows(t.get('rows_estimate'))}", group=f"{current}.{schema}",
                ))
                if len(out) >= MAX_RESOURCES:
                    return out
        for other in catalog.list_databases(session):
            if other != current:
                out.append(Resource(resource_id=join_parts([other]), name=other, description=f"{engine} database", group=None))
        return out[:MAX_RESOURCES]
    databases = catalog.list_databases(session) if backend != "sqlite" else [current]
    ordered = ([current] if current in databases else []) + [d for d in databases if d != current]
    for db in ordered:
        tables = catalog.list_tables(session, db if backend != "sqlite" else None, TABLES_PER_SCHEMA)
        out.append(Resource(resource_id=join_parts([db]), name=db, description=f"{engine} database, {len(tables)} tables", group=None))
        for t in tables:
            out.append(Resource(resource_id=join_parts([db, t["name"]]), name=t["name"], description=f"{t['kind']}{_rows(t.get('rows_estimate'))}", group=db))
            if len(out) >= MAX_RESOURCES:
                return out
    return out


def _current_database(session: Any) -> str:
    sql = {"postgresql": "SELECT current_database()", "duckdb": "SELECT current_database()"}.get(session.backend, "SELECT DATABASE()")
    try:
        return str(session.conn.exec_driver_sql(sql).scalar() or "")
    except Exception:
        return ""


def normalize(resource_id: str, ctx: CallContext) -> ResourceRef:
    """The normalize_resource_id hook: canonical text plus level."""
    credentials = getattr(ctx, "credentials", None)
    backend = backend_of(credentials)
    target = parse_call_target(resource_id, credentials, ctx)
    if has_schema_level(backend) and target.schema and not target.table and credentials:
        # <database>.<name> may name a table of the default schema (DuckDB ventas.ventas).
        target = catalog.resolve_schema_or_table(target, ctx)
    return ResourceRef(id=target.id(backend), level=target.level)
