"""The last day with final data, asked from the API (the default window of 15.2 ends there).

Google's advice: run a simple query grouped by date over the last 10 days; the latest day it
returns with the default data state (final) is the last day with final data. Cached per
credential identity, endpoint, property and search type for an hour.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from . import dates
from .state import FRESHNESS

PROBE_DAYS = 10


def last_final_date(client: Any, site: str, search_type: str = "web") -> dt.date:
    """The latest day with final data for the property (fallback: 3 days ago, PT, when the probe finds none)."""
    today = dates.today_pt()
    cache = client.ctx.state(FRESHNESS)
    key = (client.ctx.credential_identity, client.endpoint, site, search_type, today)
    hit = cache.get(key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    body = {"startDate": (today - dt.timedelta(days=PROBE_DAYS)).isoformat(), "endDate": today.isoformat(),
            "dimensions": ["date"], "type": search_type, "rowLimit": PROBE_DAYS + 1}
    rows = client.query(site, body).get("rows") or []
    found = [str(r["keys"][0]) for r in rows if r.get("keys")]
    day = dt.date.fromisoformat(max(found)) if found else dates.usual_last_final_date()
    cache.put(key, day)
    return day
