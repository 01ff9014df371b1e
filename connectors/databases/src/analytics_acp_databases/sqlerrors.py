"""Driver errors -> typed ACP errors (12.1), with secrets scrubbed from every message (10.1.4).

- authentication failures -> ACP_CREDENTIALS_INVALID (a message for the user, 10.3)
- unknown database -> ACP_RESOURCE_NOT_FOUND; unknown table/column, syntax -> ACP_INVALID_ARGUMENTS
  telling the model to call autocontext
- writes refused by the database's own fence -> ACP_READ_ONLY_VIOLATION
- timeouts and everything else -> ACP_UPSTREAM_ERROR
Classification uses SQLSTATEs and driver error codes; only SQLite and DuckDB (which have no
codes for these cases) are classified by their message text.
"""

from __future__ import annotations

from typing import Any

from analytics_acp import (
    AcpError,
    CredentialsInvalid,
    InvalidArguments,
    ReadOnlyViolation,
    ResourceNotFound,
    UpstreamError,
)

from .credentials import ENGINE_TITLES, scrub, server_address
from .resource_ids import backend_of

_PG_AUTH = {"28000", "28P01"}
_PG_UNKNOWN_OBJECT = {"42P01", "42703", "3F000", "42883", "42704"}
_PG_SYNTAX = {"42601", "42804", "42803", "42P10", "42725", "42702", "22P02", "22007", "22008", "42846"}
_LIBPQ_AUTH = ("password authentication failed", "authentication failed", "no pg_hba.conf entry", "role \"", "password is required")
_MYSQL_AUTH = {1045, 1698, 1044, 1227}
_MYSQL_UNKNOWN_OBJECT = {1146, 1054, 1305, 1109, 1051}
_MYSQL_SYNTAX = {1064, 1052, 1055, 1111, 1140, 1248, 1241, 1222}
_MYSQL_READ_ONLY = {1792, 1290, 1836}
_MYSQL_TIMEOUT = {1969, 3024, 1317}


def _hint(resource: str | None) -> str:
    target = f" for {resource}" if resource else ""
    return f"Call autocontext{target} to see the tables and their columns, then fix the query."


def _timeout_note(timeout_s: float | None) -> str:
    limit = f"statement_timeout_s ({timeout_s:g} s)" if timeout_s is not None else "its time limit"
    return f"The query ran longer than {limit}. Narrow it (filters, date range, aggregation) or ask the user to raise the timeout."


def _unreachable(credentials: dict[str, Any] | None, message: str) -> UpstreamError:
    """Connection refused / unknown host / dropped: name the engine and host:port the user configured."""
    address = server_address(credentials or {})
    engine = ENGINE_TITLES.get(backend_of(credentials or {}), "database")
    where = f" at {address}" if address else ""
    return UpstreamError(
        f"Could not connect to the {engine} server{where}: {message.rstrip('.?! ')}. Ask the user to check host and port in the "
        "source settings and that the server is running."
    )


def driver_message(exc: BaseException) -> str:
    """The driver's own message (SQLAlchemy adds the statement and a link; those are not needed)."""
    orig = getattr(exc, "orig", None) or exc
    if hasattr(orig, "args") and len(orig.args) == 2 and isinstance(orig.args[0], int):
        return str(orig.args[1])  # pymysql: (code, message)
    text = str(orig).strip()
    return text.splitlines()[0] if "\n" in text and "LINE" in text else " ".join(text.split())


def map_error(exc: BaseException, credentials: dict[str, Any] | None, resource: str | None = None,
              timeout_s: float | None = None, writing: bool = False) -> AcpError:
    """The typed error for a driver exception; never contains a secret."""
    if isinstance(exc, AcpError):
        return exc
    orig = getattr(exc, "orig", None) or exc
    message = scrub(driver_message(exc), credentials)
    module = type(orig).__module__.split(".")[0]
    sqlstate = getattr(orig, "sqlstate", None) or getattr(getattr(orig, "diag", None), "sqlstate", None)
    code = orig.args[0] if getattr(orig, "args", None) and isinstance(orig.args[0], int) else None
    timeout_note = _timeout_note(timeout_s)
    unreachable = _unreachable(credentials, message)

    if module == "psycopg":
        if sqlstate in _PG_AUTH:
            return CredentialsInvalid(f"The database rejected the credentials ({message}). Ask the user to check user and password in the source settings.")
        if sqlstate == "3D000":
            return ResourceNotFound(f"{message}. Call autocontext without resource_id to list the databases.")
        if sqlstate in _PG_UNKNOWN_OBJECT:
            return InvalidArguments(f"{message}. {_hint(resource)}")
        if sqlstate in _PG_SYNTAX or (sqlstate or "").startswith("42") and sqlstate != "42501":
            return InvalidArguments(f"SQL error: {message}. {_hint(resource)}")
        if sqlstate == "25006":
            return ReadOnlyViolation(f"The database refused a write: {message}. execute_sql only runs read-only queries.")
        if sqlstate == "57014":
            return UpstreamError(timeout_note)
        lowered = message.lower()
        if sqlstate is None and any(m in lowered for m in _LIBPQ_AUTH):
            # libpq reports connection-time failures without a SQLSTATE: its message is all there is
            return CredentialsInvalid(f"The database rejected the credentials ({message}). Ask the user to check user and password in the source settings.")
        if sqlstate is None and "database" in lowered and "does not exist" in lowered:
            return ResourceNotFound(f"{message}. Call autocontext without resource_id to list the databases.")
        if sqlstate is None and ("connection" in lowered or "resolve host" in lowered or "translate host" in lowered):
            return unreachable
        return UpstreamError(f"The database returned an error: {message}")
    if module in ("pymysql", "MySQLdb", "mysql") or code is not None and module not in ("sqlite3", "duckdb", "_duckdb"):
        if code in _MYSQL_AUTH:
            return CredentialsInvalid(f"The database rejected the credentials ({message}). Ask the user to check user and password in the source settings.")
        if code == 1049:
            return ResourceNotFound(f"{message}. Call autocontext without resource_id to list the databases.")
        if code in _MYSQL_UNKNOWN_OBJECT:
            return InvalidArguments(f"{message}. {_hint(resource)}")
        if code in _MYSQL_SYNTAX:
            return InvalidArguments(f"SQL error: {message}. {_hint(resource)}")
        if code in _MYSQL_READ_ONLY:
            return ReadOnlyViolation(f"The database refused a write: {message}. execute_sql only runs read-only queries.")
        if code in _MYSQL_TIMEOUT:
            return UpstreamError(timeout_note)
        if code in (2003, 2005, 2006, 2013):
            return unreachable
        return UpstreamError(f"The database returned an error: {message}")
    lowered = message.lower()
    if module == "sqlite3":
        if lowered.startswith(("no such table", "no such column", "no such function")):
            return InvalidArguments(f"{message}. {_hint(resource)}")
        if "syntax error" in lowered or "incomplete input" in lowered or "ambiguous column" in lowered:
            return InvalidArguments(f"SQL error: {message}. {_hint(resource)}")
        if "not authorized" in lowered or "readonly" in lowered or "read-only" in lowered or "query_only" in lowered:
            if writing:
                return UpstreamError(f"The database refused the write: {message}")
            return ReadOnlyViolation(f"The database refused a write: {message}. execute_sql only runs read-only queries.")
        if lowered == "interrupted":
            return UpstreamError(timeout_note)
        if "unable to open" in lowered or "not a database" in lowered:
            return CredentialsInvalid(f"The SQLite file cannot be opened ({message}). Ask the user to check the path in the source credentials.")
        if "locked" in lowered or "busy" in lowered:
            return UpstreamError(f"The database is busy: {message}. Try again.")
        return UpstreamError(f"The database returned an error: {message}")
    if module == "duckdb" or module == "_duckdb":
        kind = type(orig).__name__
        if kind == "CatalogException" or kind == "BinderException":
            return InvalidArguments(f"{message}. {_hint(resource)}")
        if kind in ("ParserException", "ConversionException", "InvalidTypeException", "TypeMismatchException"):
            return InvalidArguments(f"SQL error: {message}. {_hint(resource)}")
        if kind == "InterruptException":
            return UpstreamError(timeout_note)
        if "read-only" in lowered or kind == "PermissionException":
            return ReadOnlyViolation(f"The database refused the statement: {message}. execute_sql only runs read-only queries.")
        if kind == "IOException" and "lock" in lowered:
            return UpstreamError(f"The DuckDB file is locked by another process: {message}")
        if kind == "IOException" and ("not a valid duckdb" in lowered or "cannot open" in lowered):
            return CredentialsInvalid(f"The DuckDB file cannot be opened ({message}). Ask the user to check the path in the source credentials.")
        return UpstreamError(f"The database returned an error: {message}")
    return UpstreamError(f"The database returned an error: {message}")
