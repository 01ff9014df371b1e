"""On-demand cost model (9.1 per_byte, 9.2): bytes -> USD, the 10 MB minimum, maximumBytesBilled.

BigQuery bills on-demand queries per TiB (2**40 bytes) scanned, at least 10 MB (MiB) per
referenced table; cache hits bill 0. Prices and limits are in USD.
"""

from __future__ import annotations

import math
from typing import Any

from .constants import DEFAULT_PRICE_PER_TIB_USD

TIB = 1 << 40
MIN_BYTES_PER_TABLE = 10 * (1 << 20)
NARROW_HINT = "fewer columns, shorter date range, filter by partition"


def price_per_tib(config: dict[str, Any]) -> float:
    """config.price_per_tib_usd (default 6.25, never negative)."""
    value = (config or {}).get("price_per_tib_usd")
    if value is None or value == "":
        return DEFAULT_PRICE_PER_TIB_USD
    try:
        price = float(value)
    except (TypeError, ValueError):
        from analytics_acp import InvalidArguments

        raise InvalidArguments("config.price_per_tib_usd must be a number (USD per TiB, e.g. 6.25).") from None
    if price < 0 or math.isnan(price):
        from analytics_acp import InvalidArguments

        raise InvalidArguments("config.price_per_tib_usd must be 0 or more.")
    return price


def billed_estimate(total_bytes_processed: int, referenced_tables: int) -> int:
    """Bytes a query would bill: what it scans, but at least 10 MB per referenced table."""
    return max(int(total_bytes_processed or 0), MIN_BYTES_PER_TABLE * max(0, referenced_tables))


def usd(nbytes: int | None, price: float) -> float:
    """USD for ``nbytes`` at ``price`` per TiB, rounded to 6 decimals."""
    return round((nbytes or 0) / TIB * price, 6)


def maximum_bytes_billed(limit_usd: float, price: float) -> int | None:
    """maximumBytesBilled from cost_limit_usd (the second fence, 9.2); None when the price is 0 (no on-demand billing).

    Never 0: BigQuery reads 0 as "no cap" (the project default), so the floor is 1 byte.
    """
    if price <= 0:
        return None
    return max(1, int(math.floor(limit_usd / price * TIB)))


def human_bytes(nbytes: int | None) -> str:
    """Binary units the way the BigQuery console writes them: 674810580992 -> '628.5 GB'."""
    value = float(nbytes or 0)
    if value < 1024:
        return f"{int(value)} B"
    units = ["KB", "MB", "GB", "TB"]
    value /= 1024
    while value >= 1024 and len(units) > 1:
        value /= 1024
        units.pop(0)
    return f"{value:.1f} {units[0]}"
