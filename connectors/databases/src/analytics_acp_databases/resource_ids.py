"""resource_id parsing and normalization (6.1): ``<database>[.<schema>[.<table>]]``.

- SQLite and DuckDB files: the database is the file stem (``ventas.sqlite`` -> ``ventas``).
- MySQL/MariaDB and SQLite have no schema level: ``<database>.<table>``.
- Quoting (``"x"``, backticks, ``[x]``) and ``/`` separators are accepted and normalized away;
  a part that itself contains ``.`` or ``/`` is written back in double quotes.

Only sqlglot's tokenizer-based table parser reads the names (lazy import); nothing heavy at start-up.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analytics_acp import CallContext, InvalidArguments, ResourceNotFound
from analytics_acp.state import CallSlot

# sqlglot dialect names per SQLAlchemy backend name (mariadb speaks the mysql dialect).
SQLGLOT_DIALECTS = {
    "postgresql": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
    "sqlite": "sqlite",
    "duckdb": "duckdb",
    "mssql": "tsql",
    "oracle": "oracle",
    "snowflake": "snowflake",
    "trino": "trino",
    "presto": "presto",
    "bigquery": "bigquery",
    "redshift": "redshift",
    "clickhouse": "clickhouse",
    "databricks": "databricks",
    "hive": "hive",
    "teradata": "teradata",
}
TWO_LEVEL = {"sqlite", "mysql", "mariadb"}


def canonical(credentials: dict[str, Any] | None) -> dict[str, Any] | None:
    """A ``url`` credential naming a SQLite/DuckDB file becomes the file variant, so it gets the file fences."""
    if not credentials or credentials.get("type") != "url":
        return credentials
    text = str(credentials.get("url") or "")
    scheme = text.split(":", 1)[0].split("+", 1)[0].lower()
    if scheme not in ("sqlite", "duckdb"):
        return credentials
    from sqlalchemy.engine import make_url

    try:
        path = make_url(text).database
    except Exception:
        return credentials
    if not path or path == ":memory:":
        return credentials
    return {"type": scheme, "path": path}


def backend_of(credentials: dict[str, Any] | None) -> str:
    """SQLAlchemy backend name of the credentials (postgresql, mysql, mariadb, sqlite, duckdb, mssql...)."""
    if not credentials:
        return "unknown"
    kind = credentials.get("type")
    if kind in ("sqlite", "duckdb"):
        return kind
    if kind == "server":
        return str(credentials.get("dialect") or "postgresql")
    if kind == "url":
        scheme = str(credentials.get("url", "")).split(":", 1)[0]
        name = scheme.split("+", 1)[0].lower()
        return {"postgres": "postgresql"}.get(name, name) or "unknown"
    return "unknown"


def sqlglot_dialect(backend: str) -> str | None:
    """sqlglot's read dialect for a backend; None means sqlglot's generic dialect."""
    return SQLGLOT_DIALECTS.get(backend)


def has_schema_level(backend: str) -> bool:
    """False where database and schema are the same thing (MySQL/MariaDB) or there is one schema (SQLite)."""
    return backend not in TWO_LEVEL


def file_database(credentials: dict[str, Any]) -> str | None:
    """The database name of a file credential: the file stem (spec example ``ventas``)."""
    credentials = canonical(credentials) or {}
    if credentials.get("type") in ("sqlite", "duckdb") and credentials.get("path"):
        return file_stem(str(credentials["path"]))
    return None


def file_name(path: str) -> str:
    """``Path(path).name``, read off the string when its last part is plain: a Path costs more than
    the rest of a resource id's parsing (bench case 4b), and every call reads the stem."""
    if os.sep == "/" and os.altsep is None:
        last = path.rpartition("/")[2]
        if last and last != ".":
            return last
    return Path(path).name


def file_stem(path: str) -> str:
    """``Path(path).stem``: the name without its suffix; a name with a leading or trailing dot keeps pathlib's rules."""
    name = file_name(path)
    dot = name.rfind(".")
    if dot == -1:
        return name
    return name[:dot] if 0 < dot < len(name) - 1 else Path(path).stem


def credential_database(credentials: dict[str, Any] | None) -> str | None:
    """The database the credentials connect to by default (None when the URL names none)."""
    if not credentials:
        return None
    stem = file_database(credentials)
    if stem:
        return stem
    if credentials.get("type") == "server":
        return credentials.get("database") or None
    if credentials.get("type") == "url":
        from sqlalchemy.engine import make_url

        try:
            return make_url(str(credentials["url"])).database or None
        except Exception:
            return None
    return None


def split_parts(resource_id: str, backend: str) -> list[str]:
    """Split an id into unquoted parts, accepting quotes/backticks/brackets and '/' separators."""
    text = resource_id.strip()
    if not text:
        raise InvalidArguments("resource_id is empty. Use <database>[.<schema>[.<table>]].")
    if '"' not in text and "`" not in text and "[" not in text:  # plain tests, no generator: every call parses an id
        parts = [p.strip() for p in text.replace("/", ".").split(".")]
    else:
        import sqlglot
        from sqlglot import exp
        from sqlglot.errors import ParseError

        try:
            table = sqlglot.parse_one(text.replace("/", "."), into=exp.Table, read=sqlglot_dialect(backend))
        except ParseError:
            raise InvalidArguments(f"resource_id {resource_id!r} is not a valid <database>[.<schema>[.<table>]] name.") from None
        parts = [p.name for p in table.parts]
    if "" in parts:
        raise InvalidArguments(f"resource_id {resource_id!r} has an empty part. Use <database>[.<schema>[.<table>]].")
    return parts


def quote_part(part: str) -> str:
    """Write a part back; only names holding a separator or a quote need double quotes."""
    if "." in part or "/" in part or '"' in part or "`" in part:
        return '"' + part.replace('"', '""') + '"'
    return part


def join_parts(parts: list[str]) -> str:
    """The normalized id text."""
    return ".".join([quote_part(p) for p in parts])


@dataclass
class Target:
    """A parsed resource: database, schema (None = default) and table (None at database/schema level)."""

    database: str
    schema: str | None = None
    table: str | None = None

    @property
    def level(self) -> str:
        """database, schema or table (6.1 levels)."""
        if self.table:
            return "table"
        return "schema" if self.schema else "database"

    def id(self, backend: str) -> str:
        """Normalized resource id for this backend."""
        if not has_schema_level(backend):
            return join_parts([p for p in (self.database, self.table) if p])
        return join_parts([p for p in (self.database, self.schema, self.table) if p])


def parse_target(resource_id: str, credentials: dict[str, Any] | None) -> Target:
    """Parse an id into a Target, checking it against the credentials (file databases have one name)."""
    backend = backend_of(credentials)
    parts = split_parts(resource_id, backend)
    if not has_schema_level(backend):
        if backend == "sqlite" and len(parts) == 3 and parts[1].lower() == "main":
            parts = [parts[0], parts[2]]  # ventas.main.ventas -> ventas.ventas
        if len(parts) > 3:
            raise InvalidArguments(f"resource_id {resource_id!r} has too many parts: use <database>[.<table>].")
        if len(parts) == 3:  # a valid shape elsewhere (6.1 examples), but no such object in a two-level engine
            raise ResourceNotFound(
                f"resource_id {resource_id!r} does not exist here: this engine has no schemas, use <database>[.<table>]. "
                "Call autocontext without resource_id to list the tables."
            )
        target = Target(database=parts[0], table=parts[1] if len(parts) > 1 else None)
    else:
        if len(parts) > 3:
            raise InvalidArguments(f"resource_id {resource_id!r} has too many parts: use <database>[.<schema>[.<table>]].")
        target = Target(
            database=parts[0],
            schema=parts[1] if len(parts) > 1 else None,
            table=parts[2] if len(parts) > 2 else None,
        )
    stem = file_database(credentials or {})
    if stem is not None and target.database != stem:
        raise ResourceNotFound(
            f"Database {target.database!r} is not in this source: it is the file database {stem!r}. "
            f"Use resource_id {stem!r} (or {stem}.<table>); call autocontext without resource_id to list its tables."
        )
    return target


# The ids parsed during one call: the tool parses again the id its normalize_resource_id hook parsed (the same
# text when the id was already normal, as a session's default is). Per call, so nothing outlives the call.
_PARSED: CallSlot[dict[str, tuple[Any, Target]]] = CallSlot("databases.parsed_ids", lambda ctx: {})


def parse_call_target(resource_id: str, credentials: dict[str, Any] | None, ctx: CallContext) -> Target:
    """``parse_target``, remembered for the rest of ``ctx``'s call (per id text and credentials object)."""
    parsed = ctx.state(_PARSED)
    found = parsed.get(resource_id)
    if found is not None and found[0] is credentials:
        return found[1]
    target = parse_target(resource_id, credentials)
    parsed[resource_id] = (credentials, target)
    return target
