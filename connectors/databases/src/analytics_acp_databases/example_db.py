"""The spec's example database (16.7): 90 days of sales by channel in ``ventas`` (fecha, canal, pedidos, importe).

``python -m analytics_acp_databases.example_db PATH [--days 90] [--end YYYY-MM-DD] [--seed 7]``
creates the SQLite file (atomically: temp file + os.replace). Same seed and end date -> same rows,
so the demo and the benchmarks are reproducible. Orders follow a weekly pattern and a slow trend
per channel, which gives forecasts something to find.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import random
import sqlite3
import sys
from pathlib import Path

CHANNELS = {
    # canal: (base orders per day, average ticket in EUR)
    "online": (120, 54.0),
    "tienda": (80, 38.5),
    "marketplace": (45, 61.0),
    "telefono": (12, 72.0),
}
WEEKLY = (1.00, 0.96, 0.98, 1.03, 1.12, 1.28, 0.84)  # Monday..Sunday


def example_rows(days: int = 90, end: dt.date | None = None, seed: int = 7) -> list[tuple[str, str, int, float]]:
    """The rows (fecha, canal, pedidos, importe), ``days`` days ending at ``end`` (default yesterday)."""
    if days < 1:
        raise ValueError("days must be at least 1")
    last = end or (dt.date.today() - dt.timedelta(days=1))
    first = last - dt.timedelta(days=days - 1)
    rng = random.Random(seed)
    rows = []
    for i in range(days):
        day = first + dt.timedelta(days=i)
        trend = 1.0 + 0.002 * i
        season = WEEKLY[day.weekday()] * (1.0 + 0.05 * math.sin(2 * math.pi * i / 30.0))
        for canal, (base, ticket) in CHANNELS.items():
            pedidos = max(0, round(base * trend * season * rng.gauss(1.0, 0.06)))
            importe = round(pedidos * ticket * rng.gauss(1.0, 0.03), 2)
            rows.append((day.isoformat(), canal, int(pedidos), float(importe)))
    return rows


def create_example_db(path: str | os.PathLike[str], days: int = 90, end: dt.date | None = None, seed: int = 7) -> Path:
    """Write the example SQLite database to ``path`` (replacing it atomically); return the path."""
    target = Path(path).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    if tmp.exists():
        tmp.unlink()
    conn = sqlite3.connect(tmp)
    try:
        conn.execute(
            "CREATE TABLE ventas (fecha DATE NOT NULL, canal TEXT NOT NULL, pedidos INTEGER NOT NULL, "
            "importe REAL NOT NULL, PRIMARY KEY (fecha, canal))"
        )
        conn.executemany("INSERT INTO ventas VALUES (?, ?, ?, ?)", example_rows(days, end, seed))
        conn.commit()
    finally:
        conn.close()
    os.replace(tmp, target)
    return target


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description="Create the example sales database (ventas) as SQLite.")
    parser.add_argument("path", help="output file, e.g. data/ventas.sqlite")
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--end", type=dt.date.fromisoformat, default=None, help="last day (YYYY-MM-DD); default yesterday")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    out = create_example_db(args.path, args.days, args.end, args.seed)
    print(f"{out} ({args.days} days x {len(CHANNELS)} channels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
