"""The core's result builder: the pure part of spec 8.

The runtime calls ``build_extraction`` / ``build_multitable`` with the effective
``BuildSettings`` of a call and wraps the returned ``Built`` into the three parts of a
tool result. ``resolve_selection`` and ``tables_argument_schema`` implement the table
catalog (8.7). Table files (8.5) live in ``analytics_acp.tablefile``.
"""

from .conversion import plain_json
from .extraction import build_extraction
from .inference import infer_type
from .multitable import build_multitable
from .notices import extraction_notice, not_extracted_notice, table_notice, tables_notice
from .sampling import SpreadSampler, sample, select_indices
from .selection import catalog_for_tool, resolve_selection, tables_argument_schema
from .settings import BuildSettings, Built
from .table import TableResult, build_table

__all__ = [
    "BuildSettings",
    "Built",
    "SpreadSampler",
    "TableResult",
    "build_extraction",
    "build_multitable",
    "build_table",
    "catalog_for_tool",
    "extraction_notice",
    "infer_type",
    "not_extracted_notice",
    "plain_json",
    "resolve_selection",
    "sample",
    "select_indices",
    "table_notice",
    "tables_argument_schema",
    "tables_notice",
]
