"""validate_sql (info): statement type, read-only verdict, referenced tables and result columns, without running it.

The columns come from the database describing ``SELECT * FROM (<query>) LIMIT 0`` on the fenced
connection (no row is produced); date markers are replaced by a fixed date only for the check.
"""

from __future__ import annotations

from typing import Any

from analytics_acp import (
    AcpError,
    CallContext,
    CredentialsInvalid,
    Info,
    InvalidArguments,
    ReadOnlyViolation,
    ResourceNotFound,
)
from analytics_acp.dates import has_template, substitute_template
from sqlalchemy.exc import DBAPIError

from . import catalog
from .arguments import ValidateSql
from .engines import USER_SQL, open_read
from .execute import call_target, column_types, effective_schema, unique_names
from .readonly import check_sql
from .resource_ids import sqlglot_dialect
from .sqlerrors import map_error

PLACEHOLDER_DAY = "2000-01-01"


def run_validate_sql(arguments: ValidateSql, ctx: CallContext) -> Info:
    """Check the query; a rejected or failing query is reported in the result, not raised."""
    sql = arguments.sql
    templated = has_template(sql)
    text = substitute_template(sql, PLACEHOLDER_DAY, PLACEHOLDER_DAY) if templated else sql
    target = call_target(ctx)
    source = catalog.source_for(ctx, target)
    dialect = sqlglot_dialect(source.backend)
    out: dict[str, Any] = {"dialect": dialect or source.backend, "uses_date_window": templated}
    try:
        checked = check_sql(text, dialect)
    except ReadOnlyViolation as exc:
        out.update({"valid": False, "read_only": False, "statement_type": (exc.data or {}).get("statement_type"), "error": exc.message})
        return Info(data=out)
    except InvalidArguments as exc:
        out.update({"valid": False, "read_only": None, "error": exc.message})
        return Info(data=out)
    out.update({"statement_type": checked.statement_type, "read_only": True, "referenced_tables": checked.tables})
    if checked.explain:
        out["valid"] = True
        return Info(data=out)
    schema = effective_schema(target, ctx)
    try:
        session = open_read(source, schema)
    except DBAPIError as exc:  # cannot connect: the source, not the query, is wrong (10.3)
        raise map_error(exc, source.credentials, ctx.resource_id or target.database, source.timeout_s) from None
    try:
        with session:
            probe = f"SELECT * FROM (\n{checked.sql}\n) acp_validate LIMIT 0"
            result = session.conn.execution_options(no_parameters=True, **{USER_SQL: True}).exec_driver_sql(probe)
            description = result.cursor.description
            names = unique_names([d[0] for d in description])
            kinds = column_types(session, checked, description, schema)
            result.close()
    except (DBAPIError, AcpError) as exc:
        err = map_error(exc, source.credentials, ctx.resource_id or target.database, source.timeout_s)
        if isinstance(err, (CredentialsInvalid, ResourceNotFound)):
            raise err from None  # the source, not the query, is wrong: a typed error for the user (10.3)
        out.update({"valid": False, "error": err.message})
        return Info(data=out)
    out["valid"] = True
    out["columns"] = [{"name": n, "type": k or "unknown"} for n, k in zip(names, kinds, strict=True)]
    return Info(data=out)
