"""Tools of the example source. Each one exercises a different part of the core (see README).

declaration.tool_specs names each function here with ``lazy("acpexample.tools:<function>")``.
"""

from __future__ import annotations

import statistics

from analytics_acp import (
    CallContext,
    CostEstimate,
    Extraction,
    Header,
    Info,
    InvalidArguments,
    ModelView,
    MultiExtraction,
    NoArguments,
    TableOutput,
    resolve_window,
)

from . import data
from .arguments import AddNote, CaptureSession, ListCustomers, QueryOrders, TableStats, Window
from .resources import account_of

DEFAULT_START, DEFAULT_END = "7daysAgo", "yesterday"
NOTES: dict[str, list[str]] = {}  # add_note's "upstream": process memory, per account


def _window(args: Window) -> tuple[str, str]:
    return resolve_window(args.start_date or DEFAULT_START, args.end_date or DEFAULT_END)


def _account(ctx: CallContext, table: str | None = None) -> str:
    """The account of the effective resource; a table-level id must name ``table`` when given."""
    rid = ctx.resource_id or ""
    account = account_of(rid, ctx.credentials)
    if table and "." in rid and rid.split(".", 1)[1] != table:
        raise InvalidArguments(f"{ctx.tool} reads the {table} table. Pass {account} or {account}.{table} as resource_id.")
    return account


def query_orders(args: QueryOrders, ctx: CallContext) -> Extraction:
    """Orders of an account in a date window; some columns declared, the rest inferred (8.6)."""
    account = _account(ctx, "orders")
    start, end = _window(args)
    rows = data.orders(account, start, end, limit=args.limit)
    if args.channel:
        rows = [r for r in rows if r["channel"] == args.channel]
    channel = f" Filter: channel = {args.channel}." if args.channel else ""
    return Extraction(
        rows=rows,
        headers=[
            Header("order_id", "integer", "dimension"),
            Header("date", "date", "dimension"),
            Header("amount", "number", "metric", "Order amount in EUR"),
        ],
        description=f"Example orders of account {account} from {start} to {end}.{channel}",
        title=f"Orders {account} · {start}→{end}",
        dates=[start, end],
        totals={"units": sum(r["units"] for r in rows), "amount": round(sum(r["amount"] for r in rows), 2)},
        source={"api": "example.orders.list", "account": account},
        arguments={"start_date": args.start_date or DEFAULT_START, "end_date": args.end_date or DEFAULT_END},
    )


def list_customers(args: ListCustomers, ctx: CallContext) -> Extraction:
    """Customers with upstream-typed values the core must normalize (numeric strings, YYYYMMDD)."""
    account = _account(ctx, "customers")
    count = args.count
    return Extraction(
        rows=data.customers(account, count),
        headers=[
            Header("customer_id", "integer", "dimension"),
            Header("signup", "date", "dimension"),
            Header("lifetime_value", "number", "metric"),
        ],
        description=f"Example customers of account {account} (first {count}).",
        title=f"Customers {account}",
        source={"api": "example.customers.list"},
        arguments={"count": count},
    )


def capture_session(args: CaptureSession, ctx: CallContext) -> MultiExtraction:
    """A multitable extraction: every table computed, the core keeps the selected ones (8.7)."""
    account = _account(ctx)
    pages = args.pages
    tables = data.session_capture(account, pages)
    start_url = f"https://{account}.example.test/p0"
    where = f"of {account}.example.test in a session started with {start_url}"
    return MultiExtraction(
        tables=[
            TableOutput("events", tables["events"], title="Events", primary=True,
                        description=f"Tracked events {where}.",
                        headers=[Header("page_index", "integer", "dimension"), Header("en", "string", "dimension")],
                        model_view=ModelView(fields=["en", "page_index", "dl", "ep.label", "ep.payload", "seq", "cid", "gcs"],
                                             max_value_chars=40)),
            TableOutput("pages", tables["pages"], title="Pages", description=f"Pages {where}."),
            TableOutput("cookies", tables["cookies"], title="Cookies", description=f"Cookies {where}."),
            TableOutput("summary", tables["summary"], title="Summary", description=f"Counts {where}."),
        ],
        description=f"Example browsing session {where}, {pages} page(s).",
        title=f"Session {account}",
        manifest={"pages": [{"page_index": p["page_index"], "url": p["url"]} for p in tables["pages"]]},
        arguments={"pages": pages},
    )


def premium_report(args: Window, ctx: CallContext) -> Extraction:
    """Hourly metrics, a paid extraction: the core ran estimate_cost before this (9.2)."""
    account = _account(ctx)
    start, end = _window(args)
    return Extraction(
        rows=data.hourly_metrics(account, start, end),
        headers=[Header("date", "date", "dimension"), Header("hour", "integer", "dimension"),
                 Header("sessions", "integer", "metric"), Header("revenue", "number", "metric")],
        description=f"Example premium hourly report of account {account} from {start} to {end}.",
        title=f"Premium {account} · {start}→{end}",
        dates=[start, end],
        cost_actual_usd=ctx.cost_estimate_usd,
        source={"api": "example.premium.hourly"},
    )


def estimate_premium(args: Window, ctx: CallContext) -> CostEstimate:
    """Price of premium_report before it runs: hourly rows of the window times price_per_row_usd."""
    start, end = _window(args)
    rows = len(data.days(start, end)) * 24
    price = float(ctx.config.get("price_per_row_usd", 0.001))
    return CostEstimate(usd=rows * price, hint="a shorter date range",
                        data={"rows": rows, "price_per_row_usd": price})


async def table_stats(args: TableStats, ctx: CallContext) -> Info:
    """Statistics of a host table read with acp/read_table (8.8); no remote resource (6.2)."""
    table = await ctx.read_table(args.table_ref)
    columns = table.columns
    wanted = [args.column] if args.column else columns
    missing = [c for c in wanted if c not in columns]
    if missing:
        raise InvalidArguments(f"Table {table.ref} has no column {missing[0]!r}. Columns: {', '.join(columns)}.")
    stats = {}
    for column in wanted:
        values = [r.get(column) for r in table.rows]
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if numbers:
            stats[column] = {"count": len(numbers), "min": min(numbers), "max": max(numbers),
                             "mean": round(statistics.fmean(numbers), 6), "sum": sum(numbers)}
        else:
            stats[column] = {"count": sum(v is not None for v in values), "distinct": len({str(v) for v in values})}
    return Info(data={"table_ref": table.ref, "rows": len(table.rows), "columns": columns, "stats": stats})


def account_info(args: NoArguments, ctx: CallContext) -> Info:
    """Plain info about the account (kind info, 8.3)."""
    account = data.BY_ID[_account(ctx)]
    return Info(data={"account": account.id, "name": account.name, "region": account.region,
                      "public": account.public, "tables": list(data.TABLES), "notes": len(NOTES.get(account.id, []))})


def add_note(args: AddNote, ctx: CallContext) -> Info:
    """Append a note to the account: a write allowed only by readAndOnlyAdd or full (10.6)."""
    account = _account(ctx)
    mode = ctx.check_access(f"{account}.notes", "add")
    NOTES.setdefault(account, []).append(args.text)
    return Info(data={"account": account, "added": 1, "notes": len(NOTES[account]), "access_mode": mode})


def live_status(args: NoArguments, ctx: CallContext) -> Info:
    """Always fails with an untyped exception that (like many drivers) echoes the key: 12.1 and 10.1."""
    key = (ctx.credentials or {}).get("api_key", "public")
    raise ConnectionError(f"upstream 502 Bad Gateway calling /status with key {key}")
