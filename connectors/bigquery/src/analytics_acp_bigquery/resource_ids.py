"""resource_id and table ids: ``<project>[.<dataset>[.<table>]]`` with levels project/dataset/table (6.1).

Accepted variants (6.1 "reasonable variants"): backticks (whole or per part), ``/`` separators,
REST paths (``projects/p/datasets/d/tables/t``), domain-scoped projects (``example.com:project``)
and the legacy ``project:dataset.table`` form. A table may be a wildcard (``events_*``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analytics_acp import InvalidArguments, ResourceRef

# Project ids: 6-30 lowercase letters, digits and hyphens, optionally "domain.tld:" scoped.
_PROJECT = re.compile(r"^(?:[a-z0-9][a-z0-9.-]*\.[a-z]{2,}:)?[a-z][a-z0-9-]{1,62}$")
_DATASET = re.compile(r"^[A-Za-z0-9_]{1,1024}$")
# Table names allow Unicode letters, marks, digits, connectors, dashes and spaces; a wildcard only at the end.
_TABLE = re.compile(r"^[\w\- $]{0,1023}\*?$")
_REST = re.compile(r"^projects/([^/]+)(?:/datasets/([^/]+)(?:/tables/([^/]+))?)?/?$")

FORMAT_HINT = "Use <project>[.<dataset>[.<table>]], e.g. my-project.analytics_123 or my-project.analytics_123.events_*."


@dataclass(frozen=True)
class BqRef:
    """A parsed BigQuery id: project, optional dataset and table (``events_*`` wildcards kept)."""

    project: str
    dataset: str | None = None
    table: str | None = None

    @property
    def level(self) -> str:
        """project, dataset or table."""
        return "table" if self.table else "dataset" if self.dataset else "project"

    @property
    def id(self) -> str:
        """The normalized dotted id."""
        return ".".join(p for p in (self.project, self.dataset, self.table) if p)

    @property
    def dataset_id(self) -> str | None:
        """``project.dataset`` (None at project level)."""
        return f"{self.project}.{self.dataset}" if self.dataset else None

    @property
    def is_wildcard(self) -> bool:
        """True for ``name_*`` tables (queried with _TABLE_SUFFIX)."""
        return bool(self.table and self.table.endswith("*"))


def _split(text: str) -> list[str]:
    """Split on dots and slashes outside a domain-scoped project prefix."""
    text = text.replace("/", ".")
    if ":" in text:
        head, _, rest = text.partition(":")
        if "." in head:  # domain.com:project[.dataset[.table]]: the domain keeps its dots
            first, _, tail = rest.partition(".")
            return [f"{head}:{first}"] + (tail.split(".") if tail else [])
        return [head] + rest.split(".")  # legacy project:dataset.table
    return text.split(".")


def parse(text: str | None, *, what: str = "resource_id") -> BqRef:
    """Parse any accepted form into a BqRef; ACP_INVALID_ARGUMENTS with the expected format otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidArguments(f"{what} is empty. {FORMAT_HINT}")
    raw = text.strip()
    bare = raw.replace("`", "")
    rest = _REST.match(bare)
    parts = [p for p in rest.groups() if p] if rest else [p.strip() for p in _split(bare)]
    if not parts or len(parts) > 3 or any(not p for p in parts):
        raise InvalidArguments(f"{what} {raw!r} is not a BigQuery id. {FORMAT_HINT}")
    project = parts[0].lower()
    if not _PROJECT.match(project):
        raise InvalidArguments(f"{what} {raw!r}: {parts[0]!r} is not a valid project id. {FORMAT_HINT}")
    dataset = parts[1] if len(parts) > 1 else None
    if dataset is not None and not _DATASET.match(dataset):
        raise InvalidArguments(f"{what} {raw!r}: {dataset!r} is not a valid dataset id (letters, digits, underscores).")
    table = parts[2] if len(parts) > 2 else None
    if table is not None and not _TABLE.match(table):
        raise InvalidArguments(f"{what} {raw!r}: {table!r} is not a valid table name.")
    return BqRef(project, dataset, table)


def normalize(resource_id: str) -> ResourceRef:
    """The normalize_resource_id hook: the dotted id with its level (6.1)."""
    ref = parse(resource_id)
    return ResourceRef(ref.id, ref.level)


def resolve_table(text: str, base: BqRef | None) -> BqRef:
    """A table named by the model: ``table``, ``dataset.table`` or a full id; relative names use the resource."""
    cleaned = str(text or "").strip()
    parts = [p for p in _split(cleaned.replace("`", "")) if p] if cleaned else []
    if base is not None and len(parts) == 1 and base.dataset:
        return parse(f"{base.project}.{base.dataset}.{parts[0]}", what="table")
    if base is not None and len(parts) == 2 and ":" not in cleaned:
        return parse(f"{base.project}.{parts[0]}.{parts[1]}", what="table")
    ref = parse(cleaned, what="table")
    if not ref.table:
        raise InvalidArguments(f"table {cleaned!r} names a {ref.level}, not a table: use <dataset>.<table> or <project>.<dataset>.<table>.")
    return ref
