"""The shape of a simple GROUP BY query: which columns a covering index for it would hold.

acp_query's table cache builds an index for a GROUP BY that SQLite keeps sorting (query/cache.py).
Only the plainest shape qualifies: one SELECT over one table (no join, no subquery, no CTE, no
set operation, no ``*`` but ``COUNT(*)``), GROUP BY on bare columns of that table. Anything else
yields None: an index is an optimisation, so a shape we are unsure about is simply not indexed.
The index never changes what SQLite answers, only how it finds the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: querycache needs GroupShape, not sqlglot (bridge --check loads no parser)
    from sqlglot import exp

MAX_COLUMNS = 8  # wider indexes cost more memory than the sort they save


@dataclass(frozen=True)
class GroupShape:
    """Table (lowercased id) and the index columns: group-by columns in order, then the others."""

    table: str
    group: tuple[str, ...]
    others: tuple[str, ...]

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns of the covering index, in index order."""
        return self.group + self.others


def group_shape(statement: exp.Expression | None, headers: dict[str, list[str]]) -> GroupShape | None:
    """The GroupShape of ``statement``, or None if it is not a plain one-table GROUP BY.

    ``headers`` maps each lowercased dataset id to its column names; names resolve the way SQLite
    does (case-insensitively), and a column that is not one of the table's is an alias or an error.
    """
    from sqlglot import exp

    if not isinstance(statement, exp.Select) or statement.args.get("with") or statement.args.get("joins"):
        return None
    source = statement.args.get("from_") or statement.args.get("from")
    group = statement.args.get("group")
    if source is None or group is None or not isinstance(source.this, exp.Table):
        return None
    table = source.this
    if table.args.get("db") or table.args.get("catalog") or table.name.lower() not in headers:
        return None
    if any(isinstance(n, exp.Select | exp.Subquery) for n in statement.walk() if n is not statement):
        return None
    if any(not isinstance(star.parent, exp.Count) for star in statement.find_all(exp.Star)):
        return None
    names = {h.lower(): h for h in headers[table.name.lower()]}
    if len(names) != len(headers[table.name.lower()]):
        return None  # two columns differing only in case: SQLite would refuse them anyway
    qualifiers = {table.name.lower(), table.alias_or_name.lower()}
    aliases = {e.alias.lower() for e in statement.expressions if isinstance(e, exp.Alias)}
    grouped: list[str] = []
    for key in group.expressions:
        if not isinstance(key, exp.Column) or key.name.lower() not in names or key.name.lower() in aliases:
            return None  # an expression, a position, or a name an alias may shadow
        if key.table and key.table.lower() not in qualifiers:
            return None
        column = names[key.name.lower()]
        if column not in grouped:
            grouped.append(column)
    others: list[str] = []
    for node in statement.find_all(exp.Column):
        if node.table and node.table.lower() not in qualifiers:
            return None
        other = names.get(node.name.lower())
        if other is not None and other not in grouped and other not in others:
            others.append(other)
    if len(grouped) + len(others) > MAX_COLUMNS:
        return None
    return GroupShape(table.name.lower(), tuple(grouped), tuple(sorted(others)))
