"""A small ACP connector for the bridge tests: every tool exercises one host duty of 16.5."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from analytics_acp import (
    ConnectorInfo,
    CostEstimate,
    CredentialsInvalid,
    Extraction,
    Header,
    Info,
    MultiExtraction,
    ResourceIdSpec,
    TableOutput,
    TableRef,
    ToolArguments,
    ToolSpec,
    hookimpl,
)
from pydantic import Field

CREDENTIALS = {
    "type": "object",
    "properties": {"account": {"type": "string"}, "token": {"type": "string", "writeOnly": True}},
    "required": ["account", "token"],
}


def _check(ctx):
    creds = ctx.credentials or {}
    if creds.get("token") == "bad-token-value":
        # A careless server echoing the secret: the bridge must still keep it from the model.
        raise CredentialsInvalid(f"token {creds['token']} was rejected for account {creds.get('account')}")
    return creds


def whoami(args, ctx):
    """Which process and which account served the call."""
    creds = _check(ctx)
    return Info(data={"pid": os.getpid(), "account": creds.get("account"), "token_chars": len(creds.get("token", "")),
                      "session_id": ctx.session_id, "conversation_id": ctx.conversation_id, "call_id": ctx.call_id,
                      "row_limit": ctx.row_limit, "host_tables": ctx.client.host_tables, "multi_table": ctx.client.multi_table})


def leak(args, ctx):
    """A careless tool that puts the secret in its model_response (the bridge must scrub it)."""
    creds = ctx.credentials or {}
    return Info(data={"debug": f"called with token {creds.get('token')}"})


def noisy(args, ctx):
    """A careless tool that prints the credentials on its stderr (the bridge must scrub what it relays)."""
    creds = ctx.credentials or {}
    print(f"fixture debug: token={creds.get('token')} account={creds.get('account')}", file=sys.stderr, flush=True)
    return Info(data={"printed": True})


def multi(args, ctx):
    """Three tables: one small, one empty, one large enough to travel as a file."""
    _check(ctx)
    big = [{"n": i, "label": f"row-{i}-" + "x" * 400, "flag": i % 2 == 0, "obj": {"i": i}} for i in range(args.big)]
    return MultiExtraction(
        tables=[
            TableOutput("hits", [{"en": "page_view", "n": 1}, {"en": "click", "n": 2}, {"en": "scroll", "n": None}],
                        title="Hits", description="Hits of the fixture.", primary=True,
                        headers=[Header("en", "string"), Header("n", "integer")]),
            TableOutput("cookies", [], title="Cookies", description="Cookies of the fixture.", headers=[Header("name", "string")]),
            TableOutput("network", big, title="Network", description="Requests of the fixture.",
                        headers=[Header("n", "integer"), Header("label", "string"), Header("flag", "boolean"), Header("obj", "json")]),
        ],
        description="Fixture capture with three tables.",
        title="Fixture capture",
        dates=["2026-10-01"],
        manifest={"pages": [{"url": "https://fixture.test/"}]},
    )


def numbers(args, ctx):
    """``count`` rows (a single-table extraction)."""
    _check(ctx)
    count = args.count
    return Extraction(
        rows=({"i": i, "sq": i * i} for i in range(count)),
        headers=[Header("i", "integer"), Header("sq", "integer")],
        description=f"The first {count} squares.",
        title="Squares",
    )


async def table_sum(args, ctx):
    """Reads a host table by table_ref (8.8) and sums a column."""
    table = await ctx.read_table(args.table_ref)
    column = args.column
    return Info(data={"rows": len(table.rows), "sum": sum(r.get(column) or 0 for r in table.rows),
                      "types": {h["name"]: h.get("type") for h in table.headers}})


def artifacts(args, ctx):
    """8.10: a screenshot and a PDF left on disk."""
    base = Path(os.environ.get("ACP_TMP_DIR") or ".")
    base.mkdir(parents=True, exist_ok=True)
    png = base / "shot.png"
    png.write_bytes(bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                                  "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"))
    pdf = base / "deck.pdf"
    pdf.write_bytes(b"%PDF-1.4\n% fixture\n")
    return Info(data={"screenshot_path": str(png), "pdf_path": str(pdf)})


def priced(args, ctx):
    """A paid extraction (9.2): the core's preflight runs estimate_cost first."""
    return Extraction(rows=[{"v": 1}], headers=[Header("v", "integer")], description="Priced rows.")


def crash(args, ctx):
    """The process dies in the middle of the call."""
    os._exit(3)


class MultiArguments(ToolArguments):
    big: int = 800


class NumbersArguments(ToolArguments):
    count: int = 10


class TableSumArguments(ToolArguments):
    table_ref: TableRef = Field(description="Host table id.")
    column: str


TOOLS = [
    ToolSpec(name="whoami", description="Process and account.", run=whoami, needs_resource=False),
    ToolSpec(name="leak", description="Echoes the token.", run=leak, needs_resource=False),
    ToolSpec(name="noisy", description="Prints the token on stderr.", run=noisy, needs_resource=False),
    ToolSpec(name="multi", description="Three tables.", run=multi, kind="extraction", multitable=True, needs_resource=False,
             arguments=MultiArguments),
    ToolSpec(name="numbers", description="Squares.", run=numbers, kind="extraction", default=True, needs_resource=False,
             arguments=NumbersArguments),
    ToolSpec(name="table_sum", description="Sum a column of a host table.", run=table_sum, needs_resource=False,
             needs_credentials=False,
             arguments=TableSumArguments),
    ToolSpec(name="artifacts", description="Files on disk.", run=artifacts, needs_resource=False, needs_credentials=False),
    ToolSpec(name="priced", description="Costs 5 USD.", run=priced, kind="extraction", paid=True, needs_resource=False,
             needs_credentials=False),
    ToolSpec(name="crash", description="Dies.", run=crash, needs_resource=False, needs_credentials=False),
]


@hookimpl
def connector_declaration():
    """The fixture's declaration."""
    return ConnectorInfo(
        id="fixture", name="Bridge fixture", version="0.1.0", description="Bridge test connector.",
        resource_id=ResourceIdSpec(description="Unused.", format="<none>", examples=["none"]),
        credentials_schema=CREDENTIALS,
    )


@hookimpl
def register_tools(register):
    """Every fixture tool."""
    for tool in TOOLS:
        register(tool)


@hookimpl
def estimate_cost(tool, arguments, ctx):
    """priced always costs 5 USD."""
    if tool.name == "priced":
        return CostEstimate(usd=5.0, hint="fewer rows")
    return None
