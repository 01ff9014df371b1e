"""The argument model of each example tool (issue 38.1): the core publishes their schemas and hands each tool its
parsed object. A light module (pydantic and the core only): declaration.py imports it at load, the tools for types."""

from __future__ import annotations

from analytics_acp import EndDate, StartDate, TableRef, ToolArguments
from pydantic import Field

from .constants import Channel


class Window(ToolArguments):
    """A date window (8.9); the tools default it to 7daysAgo..yesterday."""

    start_date: StartDate | None = Field(None, description="YYYY-MM-DD, YYYYMMDD, NdaysAgo, yesterday or today.")
    end_date: EndDate | None = Field(None, description="YYYY-MM-DD, YYYYMMDD, NdaysAgo, yesterday or today.")


class QueryOrders(Window):
    """query_orders: a window, optionally one channel and a row cap."""

    channel: Channel | None = Field(None, description="Only orders of this channel.")
    limit: int | None = Field(None, ge=1, le=100000, description="Maximum orders to extract.")


class ListCustomers(ToolArguments):
    """list_customers: how many."""

    count: int = Field(40, ge=1, le=500, description="How many customers.")


class CaptureSession(ToolArguments):
    """capture_session: how many pages the simulated session visits."""

    pages: int = Field(3, ge=1, le=20, description="Pages to visit.")


class TableStats(ToolArguments):
    """table_stats: a host table (8.8), optionally one of its columns."""

    table_ref: TableRef = Field(description="Id of a host dataset or report. The host resolves the rows.")
    column: str | None = Field(None, description="Only this column (default: all).")


class AddNote(ToolArguments):
    """add_note: the note's text."""

    text: str = Field(min_length=1, description="The note.")
