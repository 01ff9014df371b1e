"""Credentials (10.2 variants ``sqlite``/``duckdb``/``server``/``url``) -> SQLAlchemy URLs, and secret scrubbing.

Drivers put URLs (with passwords) and DSNs into exception texts; every text that leaves the
connector goes through ``scrub`` first (10.1.4: no echo of credentials).
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

from analytics_acp import CredentialsInvalid
from sqlalchemy.engine import URL, make_url

from .resource_ids import backend_of, file_name

log = logging.getLogger(__name__)

DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306, "mariadb": 3306}
SERVER_DRIVERS = {"postgresql": "postgresql+psycopg", "mysql": "mysql+pymysql", "mariadb": "mysql+pymysql"}
# Masks the password of any URL-like ``scheme://user:password@`` left in a driver message.
_URL_PASSWORD = re.compile(r"(?P<head>[a-zA-Z][\w+.-]*://[^:/@\s]*:)[^@\s]*@")
_DSN_PASSWORD = re.compile(r"(?i)(password\s*=\s*)('[^']*'|\S+)")


def file_path(credentials: dict[str, Any]) -> Path:
    """The database file of a sqlite/duckdb credential; it must exist (queries never create files).

    The message names the full path tried (10.3: it is for the person who set the source up); a relative path is
    taken from this server's working folder, which a host may not know, so the message says so.
    """
    raw = str(credentials.get("path") or "").strip()
    if not raw:
        raise CredentialsInvalid("The source has no database file path: set path in its credentials.")
    path = Path(raw).expanduser()
    missing = _missing_file(path)
    if missing:
        raise CredentialsInvalid(f"The database file {missing}: check path in the source's credentials.")
    return path.resolve()


def _missing_file(path: Path) -> str | None:
    """Why ``path`` is not an existing file, worded after "The database file" (the full path tried), or None."""
    full = os.path.abspath(path)
    relative = "" if path.is_absolute() else f" (the relative path {str(path)!r} taken from the folder {os.getcwd()})"
    if path.is_file():
        return None
    if path.is_dir():
        return f"{full} is a folder, not a file{relative}"
    return f"{full} does not exist{relative}"


def check_url_file(credentials: dict[str, Any]) -> None:
    """A ``url`` credential naming a SQLite/DuckDB file: that file must exist, like the sqlite/duckdb variants."""
    url = generic_url(credentials)
    database = url.database or ""
    if url.get_backend_name() in ("sqlite", "duckdb") and database and database != ":memory:" and not database.startswith("file:"):
        missing = _missing_file(Path(database).expanduser())
        if missing:
            raise CredentialsInvalid(f"The URL's database file {missing}: check url in the source's credentials.")


def server_url(credentials: dict[str, Any], database: str | None = None) -> URL:
    """URL of the ``server`` variant; ``database`` overrides the configured one (another database of the server)."""
    dialect = str(credentials.get("dialect") or "postgresql")
    if dialect not in SERVER_DRIVERS:
        raise CredentialsInvalid(f"Unknown server engine {dialect!r}: use postgresql, mysql or mariadb.")
    if not credentials.get("host") or not credentials.get("user"):
        raise CredentialsInvalid("The server credentials need host and user: set them in the source's credentials.")
    return URL.create(
        SERVER_DRIVERS[dialect],
        username=str(credentials["user"]),
        password=credentials.get("password") or None,
        host=str(credentials["host"]),
        port=int(credentials.get("port") or DEFAULT_PORTS[dialect]),
        database=database or credentials.get("database") or None,
    )


def generic_url(credentials: dict[str, Any], database: str | None = None) -> URL:
    """URL of the ``url`` variant, parsed by SQLAlchemy (a bare postgresql:// gets the psycopg 3 driver)."""
    try:
        url = make_url(str(credentials.get("url") or ""))
    except Exception:
        raise CredentialsInvalid("The SQLAlchemy URL of this source does not parse (expected dialect+driver://user@host:port/"
                                 "database, with :password after user when there is one): check url in the source's "
                                 "credentials.") from None
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    elif url.drivername in ("mysql", "mariadb"):
        url = url.set(drivername="mysql+pymysql")
    if database and url.get_backend_name() not in ("sqlite", "duckdb"):
        url = url.set(database=database)
    return url


def sqlite_url(path: Path, read_only: bool) -> str:
    """SQLite URI filename: mode=ro for queries (the database's own fence), mode=rw for inserts (never creates)."""
    mode = "ro" if read_only else "rw"
    return f"sqlite:///file:{quote(str(path))}?mode={mode}&uri=true"


def secrets_of(credentials: dict[str, Any] | None) -> list[str]:
    """Every text form of the secrets in the credentials, longest first (password, URL, URL-encoded forms)."""
    if not credentials:
        return []
    found: set[str] = set()
    password = credentials.get("password")
    if password:
        found.update({str(password), quote_plus(str(password)), quote(str(password), safe="")})
    url_text = credentials.get("url")
    if url_text:
        found.add(str(url_text))
        try:
            url = make_url(str(url_text))
            if url.password:
                pw = str(url.password)
                found.update({pw, quote_plus(pw), quote(pw, safe="")})
            found.add(url.render_as_string(hide_password=False))
        except Exception as exc:  # not a URL SQLAlchemy parses: its raw text above is redacted still
            log.debug("connection URL not parsed for redaction: %s", type(exc).__name__)  # never the text
    return sorted((s for s in found if len(s) >= 3), key=len, reverse=True)


def scrub(text: str, credentials: dict[str, Any] | None) -> str:
    """Remove secrets from a driver message: known secret strings, URL passwords and DSN password= pairs."""
    out = str(text)
    for secret in secrets_of(credentials):
        out = out.replace(secret, "***")
    out = _URL_PASSWORD.sub(lambda m: m.group("head") + "***@", out)
    out = _DSN_PASSWORD.sub(lambda m: m.group(1) + "***", out)
    return out


def server_address(credentials: dict[str, Any]) -> str:
    """``host:port`` of a server/url credential (never user or password); '' for files or unparsable URLs."""
    kind = credentials.get("type")
    if kind == "server":
        backend = backend_of(credentials)
        return f"{credentials.get('host')}:{credentials.get('port') or DEFAULT_PORTS.get(backend, '')}" if credentials.get("host") else ""
    if kind == "url":
        try:
            url = generic_url(credentials)
        except CredentialsInvalid:
            return ""
        if not url.host:
            return ""
        port = url.port or DEFAULT_PORTS.get(url.get_backend_name())
        return f"{url.host}:{port}" if port else str(url.host)
    return ""


def describe_source(credentials: dict[str, Any], database: str | None) -> tuple[str, str]:
    """(engine title, subject) for descriptions and titles, never with secrets: ('SQLite', 'ventas.sqlite')."""
    backend = backend_of(credentials)
    kind = credentials.get("type")
    if kind in ("sqlite", "duckdb"):
        return ("SQLite" if kind == "sqlite" else "DuckDB"), file_name(str(credentials.get("path", "")))
    title = ENGINE_TITLES.get(backend, backend)
    if kind == "server":
        host = f"{credentials.get('host')}:{credentials.get('port') or DEFAULT_PORTS.get(backend, '')}"
    else:
        try:
            url = generic_url(credentials)
            host = f"{url.host}:{url.port}" if url.port else str(url.host or "")
        except CredentialsInvalid:
            host = ""
    subject = f"{database} on {host}" if database and host else (database or host or title)
    return title, subject


ENGINE_TITLES = {
    "postgresql": "PostgreSQL",
    "mysql": "MySQL",
    "mariadb": "MariaDB",
    "sqlite": "SQLite",
    "duckdb": "DuckDB",
    "mssql": "SQL Server",
    "oracle": "Oracle",
    "snowflake": "Snowflake",
    "trino": "Trino",
    "redshift": "Redshift",
    "clickhouse": "ClickHouse",
}
