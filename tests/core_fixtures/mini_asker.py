"""The mini connector plus one tool that asks the host for a table named by a plain string argument, not a
``table_ref`` (served by module path): what a connector that breaks 8.8's contract meets over Streamable HTTP."""

from __future__ import annotations

import mini_connector
from analytics_acp import Info, ToolArguments, ToolSpec, hookimpl
from mini_connector import (  # noqa: F401 - the mini connector's hooks, served by this module too
    connector_declaration,
    estimate_cost,
    list_resources,
    normalize_resource_id,
    register_blocks,
)
from pydantic import Field


class AskArguments(ToolArguments):
    name: str = Field(description="A table's id, as a plain string.")


async def _ask(args: AskArguments, ctx):
    table = await ctx.read_table(args.name)
    return Info(data={"rows": len(table.rows)})


@hookimpl
def register_tools(register):
    mini_connector.register_tools(register)
    register(ToolSpec(name="ask_host", description="Reads a host table by a plain name.", run=_ask,
                      needs_resource=False, needs_credentials=False, arguments=AskArguments))
