"""The argument model of each `bigquery` tool (issue 38.1): the core publishes their schemas and hands each tool its
parsed object (the cost preflight gets the same object). A light module: declaration.py imports it at start-up."""

from __future__ import annotations

from analytics_acp import DateText, SqlText, ToolArguments, WriteTableArguments
from analytics_acp.dates import has_template
from pydantic import Field, model_validator


class QueryArguments(ToolArguments):
    """execute_query: one GoogleSQL SELECT, its {{start_date}}/{{end_date}} markers filled from the window (8.9)."""

    query: SqlText = Field(description="One GoogleSQL SELECT.")
    start_date: DateText | None = Field(None, description="Fills {{start_date}}: YYYY-MM-DD, NdaysAgo, yesterday or today.")
    end_date: DateText | None = Field(None, description="Fills {{end_date}}, same forms.")

    @model_validator(mode="after")
    def _window(self) -> QueryArguments:
        # A host normally fills the markers itself; these arguments cover hosts that do not.
        if bool(self.start_date) != bool(self.end_date):
            raise ValueError("Pass both start_date and end_date, or neither.")
        if not self.start_date and has_template(self.query):
            raise ValueError("The query still contains {{start_date}}/{{end_date}}: pass start_date and end_date "
                             "(YYYY-MM-DD, NdaysAgo, yesterday or today) or write the dates as literals.")
        return self


class ValidateQueryArguments(QueryArguments):
    """validate_query: the same query and window, checked by a dry run."""

    query: SqlText = Field(description="The query to check.")


class LoadRowsArguments(WriteTableArguments):
    """load_rows: a host dataset (8.8) appended to a table."""

    table: str = Field(description="<table> (in the resource's dataset), <dataset>.<table> or <project>.<dataset>.<table>.")
