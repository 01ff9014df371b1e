"""The typed SQLite table of a dataset: its statements, for acp_query's CSV load and the preload worker.

acp_query loads a dataset's CSV cells with ``cell_sql`` (empty is NULL, boolean words 0/1, column
affinity for numbers). The preload worker (loadworker.py) builds the same table from the rows of the
extraction's table file with the statements of ``load_sql``, which the bridge hands it (the worker
imports neither this module nor the core package).
"""

from __future__ import annotations

from analytics_acp.results.inference import FALSE_WORDS, TRUE_WORDS

from ..store import csvtypes
from .indexbuild import quote

_TRUE_SQL = ", ".join(f"'{w}'" for w in sorted(TRUE_WORDS | {"1"}))
_FALSE_SQL = ", ".join(f"'{w}'" for w in sorted(FALSE_WORDS | {"0"}))


def cell_sql(index: int, kind: str) -> str:
    """SQL for one inserted CSV cell: empty is NULL, booleans become 0/1 (the core's boolean words);
    SQLite's column affinity turns numeric text into INTEGER/REAL values, so rows go in without
    per-cell Python work."""
    if kind == "boolean":
        return (
            f"CASE WHEN lower(?{index}) IN ({_TRUE_SQL}) THEN 1 WHEN lower(?{index}) IN ({_FALSE_SQL}) THEN 0 "
            f"ELSE NULLIF(?{index}, '') END"
        )
    return f"NULLIF(?{index}, '')"


def load_sql(table: str, names: list[str], kinds: list[str]) -> dict[str, str]:
    """The statements that make and fill a dataset's typed table from row objects (loadworker.py).

    ``typed_sql`` binds values SQLite stores as their CSV text would be stored; ``cells_sql`` binds
    the CSV text itself (``cell_sql``), for batches that are not that plain.
    """
    columns = ", ".join(f"{quote(n)} {csvtypes.SQLITE_TYPES.get(k, 'TEXT')}" for n, k in zip(names, kinds, strict=True))
    return {
        "create_sql": f"CREATE TABLE {quote(table)} ({columns})",
        "typed_sql": f"INSERT INTO {quote(table)} VALUES ({', '.join('?' for _ in names)})",
        "cells_sql": f"INSERT INTO {quote(table)} VALUES ({', '.join(cell_sql(i + 1, k) for i, k in enumerate(kinds))})",
    }
