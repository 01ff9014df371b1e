"""The argument model of each `databases` tool (issue 38.1): the core publishes their schemas and hands each tool
its parsed object. A light module (pydantic and the core only): declaration.py imports it at start-up."""

from __future__ import annotations

from typing import Literal

from analytics_acp import SqlText, ToolArguments, WriteTableArguments
from analytics_acp.dates import has_template
from pydantic import Field, field_validator


class ExecuteSql(ToolArguments):
    """execute_sql: one read-only query, optionally capped."""

    sql: SqlText = Field(description="The query, in the database's dialect.")
    limit: int | None = Field(None, ge=1, description="Rows to extract. Default: all.")

    @field_validator("sql")
    @classmethod
    def _window_substituted(cls, sql: str) -> str:
        # x-acp-date template (8.9): the host fills the markers; a query that still has them cannot run.
        if has_template(sql):
            raise ValueError("still contains {{start_date}}/{{end_date}}: this host did not substitute the date "
                             "window. Write the dates as literals ('YYYY-MM-DD').")
        return sql


class ValidateSql(ToolArguments):
    """validate_sql: the query to check (date markers allowed)."""

    sql: SqlText = Field(description="The query; date markers may stay.")


class InsertRows(WriteTableArguments):
    """insert_rows: a host dataset (8.8) into a table."""

    table: str = Field(description="Target table, relative to resource_id or a full id.")
    mode: Literal["append", "replace"] = Field("append", description="replace empties the table first (access_mode full).")
