"""The `databases` connector's offline check of a set-up (``ConnectorInfo.check_setup``): what is known without
connecting, so a host learns before the first call that a source cannot work.

- sqlite/duckdb: the database file exists and is a file (the message names the full path tried);
- url: the URL parses (SQLAlchemy ``make_url``, nothing is connected); a SQLite/DuckDB URL's file exists;
- server: the engine is one of the three and host/user are set.
"""

from __future__ import annotations

from typing import Any

from . import credentials as creds


def check_setup(credentials: dict[str, Any] | None, config: dict[str, Any]) -> None:
    """Raise ACP_CREDENTIALS_INVALID for credentials that cannot work; never opens a connection."""
    if not credentials:
        return  # the core reports missing credentials where they are needed
    kind = credentials.get("type")
    if kind in ("sqlite", "duckdb"):
        creds.file_path(credentials)
    elif kind == "url":
        creds.check_url_file(credentials)
    elif kind == "server":
        creds.server_url(credentials)
