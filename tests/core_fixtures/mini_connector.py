"""A tiny connector for the core's own runtime tests (served by module path)."""

from __future__ import annotations

import sqlite3
import threading
import time

from analytics_acp import (
    BlockSpec,
    CatalogEntry,
    ConnectorInfo,
    CostEstimate,
    CostSpec,
    CredentialsInvalid,
    Defaults,
    EndDate,
    Extraction,
    Header,
    Info,
    InvalidArguments,
    ModelView,
    MultiExtraction,
    Resource,
    ResourceIdSpec,
    ResourceRef,
    StartDate,
    TableOutput,
    TableRef,
    ToolArguments,
    ToolSpec,
    hookimpl,
    resolve_window,
)
from pydantic import Field

SECRET_FIELD = {"type": "string", "title": "API key", "writeOnly": True, "minLength": 8}


@hookimpl
def connector_declaration():
    return ConnectorInfo(
        id="mini",
        name="Mini",
        version="0.0.1",
        description="Test connector for the core runtime.",
        instructions="Mini test source.",
        resource_id=ResourceIdSpec(
            title="Account or table",
            description="Account id, optionally followed by .table",
            format="<account>[.<table>]",
            examples=["acc1", "acc1.sales"],
            separators=["."],
            levels=["account", "table"],
        ),
        defaults=Defaults(row_limit=5, cost_limit_usd=1.0, field_limit=3, tables=["events"]),
        credentials_schema={
            "oneOf": [
                {
                    "title": "API key",
                    "type": "object",
                    "properties": {"type": {"type": "string", "const": "api_key"}, "api_key": SECRET_FIELD},
                    "required": ["type", "api_key"],
                },
            ]
        },
        config_schema={
            "type": "object",
            "properties": {
                "region": {"type": "string", "title": "Region", "enum": ["eu", "us"], "default": "eu"},
                "price": {"type": "number", "title": "Price", "minimum": 0, "default": 0.5},
            },
        },
        cost=CostSpec(model="per_row", description="0.01 USD per requested row."),
        check_setup=_check_setup,
        table_catalog=[
            CatalogEntry(name="events", title="Events", group="Events"),
            CatalogEntry(name="pages", title="Pages", group="Pages", required=True),
            CatalogEntry(name="extra", title="Extra", group="Other"),
        ],
    )


def _check_setup(credentials, config):
    """The connector's own offline check (issue 34.3), blocking like the real ones (a file read, a key loaded): keys
    named sk-revoked are refused (the message quotes the key, which the core must mask), sk-buggy makes the check
    itself fail, sk-stuck blocks (a dead network mount) until STUCK_RELEASE is set or a minute passes."""
    key = str((credentials or {}).get("api_key", ""))
    if key.startswith("sk-revoked"):
        raise CredentialsInvalid(f"The key {key} was revoked: create another one.", data={"key": key, "tried": [key]})
    if key.startswith("sk-buggy"):
        raise TypeError(f"unexpected {key}")
    if key.startswith("sk-stuck"):
        STUCK_RELEASE.wait(60)  # a stuck check: the core's bound answers instead
    if key.startswith("sk-slow"):
        time.sleep(0.5)  # a slow check: a second acp/configure arrives meanwhile
    if config.get("region") == "us" and key.startswith("sk-eu-only"):
        raise InvalidArguments("config.region us is not available to this key: use eu.")


STUCK_RELEASE = threading.Event()  # set by a test to let its stuck checks end


def _rows(n):
    return [{"day": f"2026-01-{(i % 28) + 1:02d}", "n": i, "ratio": i / 2 if i % 2 else i // 2} for i in range(n)]


class ExtractArguments(ToolArguments):
    n: int = Field(12, ge=0)
    start_date: StartDate | None = Field(None, description="YYYY-MM-DD, YYYYMMDD, NdaysAgo, yesterday or today.")
    end_date: EndDate | None = Field(None, description="YYYY-MM-DD, YYYYMMDD, NdaysAgo, yesterday or today.")


class PaidArguments(ToolArguments):
    n: int


class SumTableArguments(ToolArguments):
    table_ref: TableRef = Field(description="Host dataset id.")
    column: str


class StepsArguments(ToolArguments):
    n: int = 20
    step_s: float = 0.05


def _extract(args: ExtractArguments, ctx):
    window = None
    if args.start_date or args.end_date:
        window = resolve_window(args.start_date or "7daysAgo", args.end_date or "today")
    n = args.n
    return Extraction(
        rows=_rows(n),
        headers=[Header("day", "date", "dimension")],
        description=f"Mini account {ctx.resource_id}. Rows: {n}.",
        title=f"Mini · {ctx.resource_id}",
        dates=list(window) if window else None,
        totals={"n": sum(range(n))},
    )


def _paid(args: PaidArguments, ctx):
    return Extraction(rows=_rows(args.n), description="Paid rows.", cost_actual_usd=ctx.cost_estimate_usd)


def _multi(args, ctx):
    events = [{"en": f"e{i}", "payload": "x" * 200, "empty": "", "k": None, "i": i} for i in range(60)]
    return MultiExtraction(
        tables=[
            TableOutput("events", events, title="Events", model_view=ModelView(fields=["en", "payload", "empty", "k", "i"]), primary=True),
            TableOutput("pages", [{"url": "/a"}, {"url": "/b"}], title="Pages"),
            TableOutput("extra", [{"x": 1}], title="Extra"),
            TableOutput("notes", [{"note": "always"}], title="Notes"),
        ],
        description="Mini multitable.",
        manifest={"pages": [{"page_index": 0, "url": "/a"}]},
    )


async def _sum_table(args: SumTableArguments, ctx):
    table = await ctx.read_table(args.table_ref)
    total = sum(float(r.get(args.column) or 0) for r in table.rows)
    return Info(data={"rows": len(table.rows), "sum": total, "columns": table.columns})


def _boom(args, ctx):
    raise RuntimeError(f"driver exploded with key {ctx.credentials['api_key']}")


def _steps(args: StepsArguments, ctx):
    # Progress (issue 28): n steps of an upstream that takes a moment per step; stops when cancelled.
    n = args.n
    rows = []
    for i in range(n):
        if ctx.cancelled:
            break
        time.sleep(args.step_s)  # the fixture's stand-in for a slow upstream page
        rows.append({"step": i + 1})
        ctx.progress(i + 1, n, f"step {i + 1} of {n}")
    return Extraction(rows=rows, description="Steps.")


def _spin(args, ctx):
    # Cancellation (issue 28): a statement that never ends on its own. ctx.on_cancel interrupts it while it
    # runs; the progress handler also stops one that starts after the cancel (an interrupt then is a no-op).
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    ctx.on_cancel(conn.interrupt)
    conn.set_progress_handler(lambda: 1 if ctx.cancelled else 0, 10_000)
    ctx.progress(0, None, "running")
    try:
        count = conn.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1e15) "
                             "SELECT count(*) FROM c").fetchone()[0]
    finally:
        conn.close()
    return Extraction(rows=[{"count": count}], description="Spun.")


@hookimpl
def register_tools(register):
    register(
        ToolSpec(
            name="extract",
            description="Extract n rows.",
            kind="extraction",
            default=True,
            run=_extract,
            arguments=ExtractArguments,
        )
    )
    register(ToolSpec(name="paid", description="Paid rows.", kind="extraction", paid=True, run=_paid,
                      arguments=PaidArguments))
    register(ToolSpec(name="multi", description="Several tables.", kind="extraction", multitable=True, run=_multi))
    register(ToolSpec(name="sum_table", description="Sum a host table column.", run=_sum_table, needs_resource=False,
                      needs_credentials=False, arguments=SumTableArguments))
    register(ToolSpec(name="boom", description="Fails.", run=_boom))
    register(ToolSpec(name="steps", description="Steps with progress.", kind="extraction", run=_steps,
                      needs_resource=False, arguments=StepsArguments))
    register(ToolSpec(name="spin", description="Runs until cancelled.", kind="extraction", run=_spin,
                      needs_resource=False))


def _fields(resource_id, ctx):
    return [{"name": "day", "type": "date"}, {"name": "n", "type": "integer"}]


def _broken(resource_id, ctx):
    raise RuntimeError("block backend down")


@hookimpl
def register_blocks(register):
    register(BlockSpec(id="fields", description="Fields with their type.", fetch=_fields))
    register(BlockSpec(id="broken", description="Always fails.", fetch=_broken))
    register(BlockSpec(id="table_stats", description="Stats of a table.", fetch=lambda r, c: {"rows": 12}, applies_to=["table"]))


@hookimpl
def list_resources(ctx):
    ctx.require_credentials()
    return [Resource(resource_id=f"acc{i}", name=f"Account {i}", group="G" + str(i % 3)) for i in range(40)]


@hookimpl
def normalize_resource_id(resource_id):
    rid = resource_id.strip().replace("/", ".")
    if rid.startswith("accounts."):
        rid = rid[len("accounts."):]
    if not rid or rid.startswith("."):
        raise InvalidArguments(f"Invalid resource_id {resource_id!r}. Use <account>[.<table>].")
    return ResourceRef(rid, "table" if "." in rid else "account")


@hookimpl
def estimate_cost(tool, arguments, ctx):
    n = arguments.n
    return CostEstimate(usd=n * 0.01, hint="fewer rows", data={"rows": n})
