"""The last day with final data, asked from the API (the default window of 15.2 ends there).

Google's advice: run a simple query grouped by date over the last 10 days; the latest day it
returns with the default data state (final) is the last day with final data. Cached per
credential identity, endpoint, property and search type for an hour.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from . import dates

TTL_S = 3600.0
PROBE_DAYS = 10
_cache: dict[tuple[Any, ...], tuple[float, dt.date]] = {}


def last_final_date(client: Any, site: str, search_type: str = "web") -> dt.date:
    """The latest day with final data for the property (fallback: 3 days ago, PT, when the probe finds none)."""
    today = dates.today_pt()
    key = (client.ctx.credential_identity, client.endpoint, site, search_type, today)
    hit = _cache.get(key)
    if hit and hit[0] > time.monotonic():
        return hit[1]
    body = {"startDate": (today - dt.timedelta(days=PROBE_DAYS)).isoformat(), "endDate": today.isoformat(),
            "dimensions": ["date"], "type": search_type, "rowLimit": PROBE_DAYS + 1}
    rows = client.query(site, body).get("rows") or []
    found = [str(r["keys"][0]) for r in rows if r.get("keys")]
    day = dt.date.fromisoformat(max(found)) if found else dates.usual_last_final_date()
    _cache[key] = (time.monotonic() + TTL_S, day)
    return day


def forget() -> None:
    """Drop cached probes (tests)."""
    _cache.clear()
