"""Date-sharded tables (``name_YYYYMMDD``) grouped as ``name_*`` (15.3 step 5), GA4 exports recognised.

A GA4 BigQuery export is a dataset ``analytics_<property id>`` with daily ``events_YYYYMMDD``
shards and, with streaming export, ``events_intraday_YYYYMMDD`` for the current day.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

_SHARD = re.compile(r"^(.*_)(\d{8})$")
GA4_DATASET = re.compile(r"^analytics_\d+$")
GA4_GROUPS = {"events_": "GA4 export: one table per day of events", "events_intraday_": "GA4 streaming export: today's events, replaced by events_YYYYMMDD once the day is final"}


def shard_of(name: str) -> tuple[str, str] | None:
    """``('events_', '20260923')`` when ``name`` ends in a valid YYYYMMDD date, else None."""
    m = _SHARD.match(name)
    if not m:
        return None
    try:
        dt.datetime.strptime(m.group(2), "%Y%m%d")
    except ValueError:
        return None
    return m.group(1), m.group(2)


@dataclass
class Group:
    """One listed entry: a plain table, or a ``prefix*`` group of shards."""

    name: str  # table name, or "events_*" for a group
    type: str = "TABLE"
    members: list[str] = field(default_factory=list)  # shard table names, oldest first

    @property
    def sharded(self) -> bool:
        """True for a ``prefix_*`` group."""
        return bool(self.members)

    @property
    def latest(self) -> str | None:
        """The newest shard's table name."""
        return self.members[-1] if self.members else None

    @property
    def representative(self) -> str:
        """The table to read a schema or size from: the latest shard, or the table itself."""
        return self.latest or self.name


def group_tables(tables: list[tuple[str, str]]) -> list[Group]:
    """Group ``(name, type)`` pairs: two or more shards sharing a prefix become ``prefix*``.

    Order follows the first appearance of each entry in the listing (the API's order).
    """
    by_prefix: dict[str, list[str]] = {}
    for name, _ in tables:
        shard = shard_of(name)
        if shard:
            by_prefix.setdefault(shard[0], []).append(name)
    grouped = {p for p, names in by_prefix.items() if len(names) >= 2}
    out: list[Group] = []
    seen: set[str] = set()
    for name, kind in tables:
        shard = shard_of(name)
        if shard and shard[0] in grouped:
            prefix = shard[0]
            if prefix not in seen:
                seen.add(prefix)
                out.append(Group(name=f"{prefix}*", type=kind, members=sorted(by_prefix[prefix])))
            continue
        out.append(Group(name=name, type=kind))
    return out


def ga4_note(dataset: str, group: Group) -> str | None:
    """The GA4-export note of a group in an ``analytics_<id>`` dataset, else None."""
    if not group.sharded or not GA4_DATASET.match(dataset):
        return None
    return GA4_GROUPS.get(group.name[:-1])


def collapse_referenced(tables: list[str]) -> list[str]:
    """Referenced table ids with two or more shards of one prefix shown as ``prefix*`` (15.3 step 1)."""
    counts: dict[str, int] = {}
    for t in tables:
        dataset, _, name = t.rpartition(".")
        shard = shard_of(name)
        if shard:
            key = f"{dataset}.{shard[0]}*"
            counts[key] = counts.get(key, 0) + 1
    out: list[str] = []
    for t in tables:
        dataset, _, name = t.rpartition(".")
        shard = shard_of(name)
        group = f"{dataset}.{shard[0]}*" if shard else ""
        shown = group if group and counts[group] >= 2 else t
        if shown not in out:
            out.append(shown)
    return out
