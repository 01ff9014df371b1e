"""Autocontext blocks (7.1, 15.3 step 5): datasets of a project, tables of a dataset, table schemas.

Date-sharded tables (``name_YYYYMMDD``) are one entry ``name_*`` with the shard count, the
latest shard and the ``_TABLE_SUFFIX`` hint; schemas of sharded tables come from the latest shard.
Sizes and row counts need one tables.get per entry, so at most MAX_DESCRIBED entries get them.
"""

from __future__ import annotations

from typing import Any

from analytics_acp import CallContext, InvalidArguments

from . import client as bq
from .errors import to_acp
from .lookup import Finder
from .resource_ids import BqRef, parse
from .sharding import Group, ga4_note, group_tables
from .types_map import flatten_schema

MAX_DESCRIBED = 30
SCHEMA_TABLES = 15
MAX_TABLES_LISTED = 2000


def _client(ctx: CallContext, ref: BqRef) -> Any:
    return bq.client_for(ctx, bq.billing_project(ctx, ref))


def _call(ctx: CallContext, fn: Any, *args: Any, listing: bool = False, **kwargs: Any) -> Any:
    """Call the client with bounded retry/timeout; ``listing`` drains the page iterator inside the error mapping."""
    try:
        return bq.call(ctx, fn, *args, listing=listing, **kwargs)
    except Exception as exc:
        raise to_acp(exc, resource=ctx.resource_id or None, ctx=ctx, finder=Finder(ctx, getattr(fn, "__self__", None))) from None


def block_datasets(resource_id: str, ctx: CallContext) -> list[dict[str, Any]]:
    """Project datasets with their location (project level)."""
    ref = parse(resource_id)
    client = _client(ctx, ref)
    items = _call(ctx, client.list_datasets, ref.project, listing=True)
    # datasets.list carries each dataset's location; DatasetListItem only exposes it through its resource.
    return [{"dataset": f"{ref.project}.{d.dataset_id}", "location": d._properties.get("location")} for d in items]


def _groups(ctx: CallContext, client: Any, ref: BqRef) -> list[Group]:
    listed = _call(ctx, client.list_tables, f"{ref.project}.{ref.dataset}", max_results=MAX_TABLES_LISTED, page_size=1000,
                   listing=True)
    return group_tables([(t.table_id, t.table_type or "TABLE") for t in listed])


def _describe(ctx: CallContext, client: Any, ref: BqRef, group: Group, detail: bool) -> dict[str, Any]:
    full = f"{ref.project}.{ref.dataset}.{group.name}"
    entry: dict[str, Any] = {"table": full, "type": group.type}
    if group.sharded:
        entry.update({
            "shards": len(group.members),
            "latest_shard": group.latest,
            "query_hint": f"FROM `{full}` WHERE _TABLE_SUFFIX BETWEEN 'YYYYMMDD' AND 'YYYYMMDD'",
        })
        note = ga4_note(ref.dataset or "", group)
        if note:
            entry["ga4_export"] = note
    entry["partitioning"] = None
    if detail:
        table = _call(ctx, client.get_table, f"{ref.project}.{ref.dataset}.{group.representative}")
        part = table.time_partitioning
        if part is not None:
            entry["partitioning"] = {"type": part.type_, "field": part.field or "_PARTITIONTIME"}
        elif table.range_partitioning is not None:
            entry["partitioning"] = {"type": "RANGE", "field": table.range_partitioning.field}
        if table.clustering_fields:
            entry["clustering"] = list(table.clustering_fields)
        size_key = "latest_shard_rows" if group.sharded else "rows"
        entry[size_key] = table.num_rows
        entry["latest_shard_bytes" if group.sharded else "bytes"] = table.num_bytes
        if table.description:
            entry["description"] = table.description
    return entry


def block_tables(resource_id: str, ctx: CallContext) -> list[dict[str, Any]]:
    """Tables and views of the dataset (or the one table), shards grouped, with partitioning, size and rows."""
    ref = parse(resource_id)
    if not ref.dataset:
        raise InvalidArguments("The tables block needs a dataset: use <project>.<dataset>.")
    client = _client(ctx, ref)
    if ref.table:
        groups = [g for g in _groups(ctx, client, ref) if g.name == ref.table or ref.table in g.members]
        if not groups:
            groups = [Group(name=ref.table)]
    else:
        groups = _groups(ctx, client, ref)
    return [_describe(ctx, client, ref, g, i < MAX_DESCRIBED) for i, g in enumerate(groups)]


def block_table_schemas(resource_id: str, ctx: CallContext) -> list[dict[str, Any]]:
    """Columns (name, type, mode, description; RECORD fields flattened as a.b) of the table or the first 15 tables."""
    ref = parse(resource_id)
    if not ref.dataset:
        raise InvalidArguments("The table_schemas block needs a dataset or a table.")
    client = _client(ctx, ref)
    groups = _groups(ctx, client, ref)
    if ref.table:
        chosen = [g for g in groups if g.name == ref.table or ref.table in g.members] or [Group(name=ref.table)]
        if ref.table in (chosen[0].members or []):
            chosen = [Group(name=ref.table)]  # one named shard: that shard itself
    else:
        chosen = groups[:SCHEMA_TABLES]
    out = []
    for g in chosen:
        table = _call(ctx, client.get_table, f"{ref.project}.{ref.dataset}.{g.representative}")
        out.append({"table": g.name, "columns": flatten_schema([f.to_api_repr() for f in table.schema])})
    return out
