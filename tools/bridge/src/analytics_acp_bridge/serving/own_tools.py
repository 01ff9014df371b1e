"""The bridge's own tools (16.4): acp_sources, acp_datasets, acp_query."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analytics_acp.envelope import cut_long_strings
from analytics_acp.errors import InvalidArguments
from analytics_acp.results.numbers import readable

from ..query import urlkeys
from ..query.cache import TableCache
from ..store.datasets import DatasetStore, sql_safe_id

if TYPE_CHECKING:
    from ..query.sql import Watch

QUERY_ROWS = 50  # ACP_MODEL_ROWS_SINGLE: rows of an acp_query result the model sees
ECHO_SQL_CHARS = 500  # an acp_query's SQL quoted in its dataset's arguments and description

# 16.4's three tools, described briefly: tools/list goes into every conversation (issue 23.3).
TOOLS: list[dict[str, Any]] = [
    {
        "name": "acp_sources",
        "description": (
            "The sources: status (ok, or the error to tell the user), credentials yes/no, limits, tools; installed "
            "ACPs without a source. The user edits sources.json."
        ),
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "acp_datasets",
        "description": (
            "Datasets in acp-data (extractions, acp_query results, the user's CSVs): id, rows, typed columns, "
            "origin, description, dates. An id is a table in acp_query, or a table_ref."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {"filter": {"type": "string", "description": "Text to find in id, title, description, source or tool."}},
        },
    },
    {
        "name": "acp_query",
        "description": (
            "One read-only SQLite SELECT (or WITH ... SELECT) over every row of acp-data datasets, their ids as table "
            f"names. The full result is saved as a new dataset; you see up to {QUERY_ROWS} rows.\n"
            "Pages across sources join ON url_key(gsc.page) = url_key(ga4.landingPage):\n"
            + urlkeys.description_lines()
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "sql": {"type": "string", "description": "The SELECT."},
                "save_as": {
                    "type": "string",
                    "description": "Result id (lowercase letters, digits, _); replaces an acp_query result of that id.",
                },
            },
            "required": ["sql"],
        },
    },
]
NAMES = {t["name"] for t in TOOLS}


def datasets(store: DatasetStore, filter_text: str | None) -> dict[str, Any]:
    """acp_datasets: every dataset, optionally filtered by a case-insensitive substring."""
    wanted = (filter_text or "").strip().lower()
    out = []
    for dataset in store.list():
        summary = dataset.summary()
        haystack = " ".join(str(summary.get(k) or "") for k in ("id", "title", "description", "source", "tool", "file")).lower()
        if not wanted or wanted in haystack:
            out.append(summary)
    return {"folder": str(store.dir), "count": len(out), "datasets": out}


def _query_notice(total: int, shown: int) -> str:
    if total == 0:
        return "The query returned no rows."
    if shown >= total:
        return f"Showing all {total} result rows."
    return f"Showing {shown} of {total} result rows."


def query(
    store: DatasetStore, sql: Any, save_as: Any = None, cache: TableCache | None = None, watch: Watch | None = None
) -> tuple[dict[str, Any], str | None]:
    """acp_query: run, save the full result as a dataset (origin query), return the model view and the note.

    ``cache`` keeps loaded datasets between calls (query/cache.py); None loads them for this call only.
    ``watch`` (the call's signals) gets the load's progress and a final step; its cancel interrupts SQLite,
    and nothing is saved.
    """
    if save_as is not None and save_as != "":
        if not isinstance(save_as, str) or sql_safe_id(save_as) != save_as:
            raise InvalidArguments(
                "save_as must be a lowercase SQL name: a letter first, then letters, digits or _ (not an SQL keyword)."
            )
        existing = store.get(save_as)
        if existing is not None and existing.meta.get("origin") != "query":
            raise InvalidArguments(
                f"save_as {save_as!r} names a {existing.meta.get('origin')} dataset; those are read-only. Choose another id."
            )
        dataset_id = save_as
    else:
        dataset_id = store.new_id("query")
        save_as = None
    from ..query.sql import (
        run_query,  # sqlglot (0.4 CPU-s): not for --check/--print-config; the server imports it at start
    )

    conn, result = run_query(store, sql, cache, watch)
    try:
        sample: list[dict[str, Any]] = []
        records = result.records()

        def keep_sample():
            for record in records:
                if len(sample) < QUERY_ROWS:
                    sample.append(record)
                yield record

        used = ", ".join(result.datasets) or "no dataset"
        meta = {
            "origin": "query",
            "source": None,
            "acp": None,
            "tool": "acp_query",
            "resource_id": None,
            # The SQL is stored once, whole, in "sql"; the other fields quote it cut (issue 15.3).
            "arguments": {"sql": cut_long_strings(sql, ECHO_SQL_CHARS)},
            "title": save_as or "acp_query",
            "description": f"SQLite query over {used}. SQL: {cut_long_strings(' '.join(sql.split()), ECHO_SQL_CHARS)}",
            "dates": [],
            "sql": sql,
        }
        total = store.write_dataset(dataset_id, [{"name": c} for c in result.columns], keep_sample(), meta, result.headers)
    finally:
        conn.close()
    if result.progress is not None:
        result.progress.finish(total)
    response: dict[str, Any] = {
        "notice": _query_notice(total, len(sample)),
        "total_rows": total,
        "returned_rows": len(sample),
        "truncated": len(sample) < total,
        "columns": result.columns,
        "rows": readable(sample),  # 12790.11 rather than 12790.109999999999; the dataset keeps the exact values
        "datasets_used": result.datasets,
    }
    if total:
        response["dataset"] = dataset_id
        note = (
            f"The full result was saved as dataset «{dataset_id}» in acp-data/{dataset_id}.csv. "
            f"You saw {len(sample)} of {total} rows."
        )
    else:
        note = "The query returned no rows, so no dataset was saved."
    return response, note
