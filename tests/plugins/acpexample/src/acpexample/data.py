"""Deterministic data of the example source: accounts, tables and rows generated in code.

Every value comes from ``random.Random(<string seed>)`` (stable across runs and machines),
so tests can assert exact counts without a fixture file.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from .constants import CHANNELS

REGIONS = ("North", "South", "East", "West", "Online")
CITIES = (
    "Avila", "Bilbao", "Cadiz", "Dublin", "Essen", "Faro", "Girona", "Hamburg", "Ibiza", "Jaen",
    "Kiel", "Lugo", "Madrid", "Nantes", "Oporto", "Paris", "Quimper", "Rome", "Sevilla", "Toledo",
    "Ulm", "Valencia", "Wien", "Xativa", "York", "Zurich", "Alicante", "Bergen", "Cork", "Derby",
)
TABLES = {
    "orders": [("order_id", "integer"), ("date", "date"), ("channel", "string"), ("units", "integer"), ("amount", "number")],
    "customers": [("customer_id", "integer"), ("name", "string"), ("signup", "date"), ("segment", "string"),
                  ("lifetime_value", "number"), ("visits", "number")],
    "events": [("ts", "datetime"), ("en", "string"), ("page", "string")],
}
PUBLIC_ACCOUNTS = 8  # the first accounts are readable with the `public` credentials variant


@dataclass(frozen=True)
class Account:
    """One account of the source (the first level of resource_id)."""

    id: str
    name: str
    region: str
    public: bool


ACCOUNTS = [
    Account(id=f"acct{i + 1:02d}", name=f"{CITIES[i]} store", region=REGIONS[i % len(REGIONS)], public=i < PUBLIC_ACCOUNTS)
    for i in range(len(CITIES))
]
BY_ID = {a.id: a for a in ACCOUNTS}


def days(start: str, end: str) -> list[str]:
    """Every YYYY-MM-DD day of an inclusive window."""
    first, last = dt.date.fromisoformat(start), dt.date.fromisoformat(end)
    return [(first + dt.timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]


def orders(account: str, start: str, end: str, limit: int | None = None) -> list[dict]:
    """Orders of an account between two days: 0-4 per day, amounts with cents, some coupons."""
    rows: list[dict] = []
    for day in days(start, end):
        rnd = random.Random(f"orders:{account}:{day}")
        for n in range(rnd.randint(0, 4)):
            units = rnd.randint(1, 6)
            rows.append({
                "order_id": int(day.replace("-", "")) * 10 + n,
                "date": day,
                "channel": rnd.choice(CHANNELS),
                "units": units,
                "amount": round(units * rnd.uniform(4.5, 60.0), 2),
                "coupon": rnd.choice([None, None, "SPRING", "VIP"]),
            })
            if limit is not None and len(rows) >= limit:
                return rows
    return rows


def customers(account: str, count: int) -> list[dict]:
    """Customers as an upstream API returns them: numeric strings, YYYYMMDD dates, mixed int/float visits."""
    rnd = random.Random(f"customers:{account}")
    rows = []
    for i in range(count):
        signup = dt.date(2025, 1, 1) + dt.timedelta(days=rnd.randint(0, 600))
        visits = rnd.randint(1, 90)
        rows.append({
            "customer_id": 1000 + i,
            "name": f"Customer {i + 1}",
            "signup": signup.strftime("%Y%m%d"),  # the core normalizes YYYYMMDD to YYYY-MM-DD (8.6)
            "segment": rnd.choice(["new", "returning", "vip"]),
            "lifetime_value": f"{rnd.uniform(10, 2000):.2f}",  # numeric string, declared number
            "visits": visits if i % 2 else visits + 0.5,  # integer and number mixed: inferred number
        })
    return rows


def session_capture(account: str, pages: int) -> dict[str, list[dict]]:
    """A browsing session: sparse event rows, pages, cookies and a one-row summary."""
    rnd = random.Random(f"capture:{account}:{pages}")
    page_rows = [{"page_index": i, "url": f"https://{account}.example.test/p{i}", "title": f"Page {i}"} for i in range(pages)]
    events = []
    for page in page_rows:
        for k in range(rnd.randint(3, 6)):
            event = {
                "page_index": page["page_index"],
                "en": rnd.choice(["page_view", "scroll", "click", "add_to_cart"]),
                "dl": page["url"],
                "dt": page["title"],
                "cid": f"{rnd.randint(10**8, 10**9)}.{rnd.randint(10**8, 10**9)}",
                "seq": k,
                "ep.label": rnd.choice(["", "hero", "footer", None]),
                "ep.payload": {"items": [{"sku": f"SKU-{rnd.randint(1, 99)}", "qty": 1}] * rnd.randint(1, 4)},
                "gcs": "G111",
                "debug": None,
            }
            events.append(event)
    cookies = [
        {"name": "_ga", "domain": f".{account}.example.test", "value": "GA1.1." + "7" * 60, "first_party": True},
        {"name": "session", "domain": f"{account}.example.test", "value": "s-" + "x" * 30, "first_party": True},
        {"name": "ads", "domain": ".ads.example.test", "value": "a1", "first_party": False},
    ]
    summary = [{"pages": len(page_rows), "events": len(events), "cookies": len(cookies)}]
    return {"events": events, "pages": page_rows, "cookies": cookies, "summary": summary}


def hourly_metrics(account: str, start: str, end: str) -> list[dict]:
    """The paid premium report: one row per hour of the window."""
    rows = []
    for day in days(start, end):
        rnd = random.Random(f"premium:{account}:{day}")
        for hour in range(24):
            rows.append({"date": day, "hour": hour, "sessions": rnd.randint(0, 500), "revenue": round(rnd.uniform(0, 900), 2)})
    return rows


def table_row_count(account: str, table: str) -> int:
    """Row count shown in the ``tables`` block (stable per account and table)."""
    return random.Random(f"count:{account}:{table}").randint(100, 100_000)
