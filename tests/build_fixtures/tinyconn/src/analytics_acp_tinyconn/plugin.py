"""Hooks of the tiny test connector: one extraction tool without credentials or resource."""

from __future__ import annotations

from pathlib import Path

from analytics_acp import ConnectorInfo, Extraction, ResourceIdSpec, ToolArguments, ToolSpec, hookimpl
from pydantic import Field


class CountArguments(ToolArguments):
    n: int = Field(3, ge=1, le=100, description="How many rows.")


def _count(arguments: CountArguments, ctx):
    n = arguments.n
    return Extraction(rows=[{"i": i, "square": i * i} for i in range(1, n + 1)], description=f"The numbers 1..{n} and their squares.", title=f"1..{n}")


@hookimpl
def connector_declaration():
    """The tiny connector's declaration."""
    return ConnectorInfo(
        id="tinyconn",
        name="Tiny connector",
        version="0.3.1",
        description="Counts from 1 to N (build tests only).",
        instructions="Tiny test source: count_rows returns the numbers 1..n and their squares.",
        resource_id=ResourceIdSpec(title="Nothing", description="This source has no resources.", format="none", examples=[]),
        icon="icon.svg",
        package_dir=Path(__file__).resolve().parents[2],
    )


@hookimpl
def register_tools(register):
    """Publish count_rows."""
    register(ToolSpec(
        name="count_rows",
        description="Return the numbers 1..n with their squares.",
        run=_count,
        arguments=CountArguments,
        kind="extraction",
        needs_resource=False,
        needs_credentials=False,
        default=True,
    ))
