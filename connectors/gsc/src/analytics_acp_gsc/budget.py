"""The URL Inspection budget ledger: 2,000 inspections a day and 600 a minute per property.

Kept per property in ACP_CACHE_DIR (``gsc/inspection-ledger.json``; without it in the connector's state,
``state.LEDGER``, for as long as the server runs), so
every call of this server, and any other server process sharing the folder, counts against the
same budget. A call is refused before it would exceed either limit (the API would answer 429
part-way, leaving an incomplete table). The day is the Pacific Time day: Google's quota resets at
midnight PT. The file holds property ids, dates and counts, never credentials.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from analytics_acp import UpstreamError

from . import dates
from .state import LedgerMemory

DAILY_LIMIT = 2000
MINUTE_LIMIT = 600
FILE = "inspection-ledger.json"


class Ledger:
    """Reserve inspections for a property before sending them; give back what was not sent.

    ``memory`` is the server's (``ctx.state(LEDGER)``): its lock serializes the server's threads, and it holds
    the ledger when there is no cache folder."""

    def __init__(self, directory: Path | None, clock: Callable[[], float] = time.time, memory: LedgerMemory | None = None):
        self.path = Path(directory) / "gsc" / FILE if directory else None
        self.clock = clock
        self.memory = memory if memory is not None else LedgerMemory()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        with self.memory.lock:
            if self.path is None:
                yield self.memory.data
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path.with_suffix(".lock"), "a+") as lock:
                _flock(lock)
                data = self._read()
                yield data
                self._write(data)

    def _read(self) -> dict[str, Any]:
        assert self.path is not None
        try:
            data = json.loads(self.path.read_text())
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _write(self, data: dict[str, Any]) -> None:
        assert self.path is not None
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".ledger-")
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle)
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.path)

    def _entry(self, data: dict[str, Any], site: str, today: str, now: float) -> dict[str, Any]:
        entry = data.get(site)
        if not isinstance(entry, dict) or entry.get("day") != today:
            entry = {"day": today, "count": 0, "minute": []}
        entry["minute"] = [[t, n] for t, n in entry.get("minute", []) if now - t < 60]
        data[site] = entry
        return entry

    def used(self, site: str) -> tuple[int, int]:
        """(inspections today, inspections in the last minute) for a property."""
        now, today = self.clock(), dates.today_pt().isoformat()
        with self._locked() as data:
            entry = self._entry(data, site, today, now)
            return entry["count"], sum(n for _, n in entry["minute"])

    def reserve(self, site: str, n: int) -> None:
        """Count ``n`` inspections now, or raise ACP_UPSTREAM_ERROR saying how many fit and when to retry."""
        now, today = self.clock(), dates.today_pt().isoformat()
        with self._locked() as data:
            entry = self._entry(data, site, today, now)
            in_minute = sum(k for _, k in entry["minute"])
            if entry["count"] + n > DAILY_LIMIT:
                left = max(DAILY_LIMIT - entry["count"], 0)
                raise UpstreamError(
                    f"URL Inspection allows {DAILY_LIMIT:,} inspections a day per property. {entry['count']:,} were already "
                    f"used today (Pacific Time) for {site}, so {n:,} more would exceed it. Inspect at most {left:,} URLs "
                    f"now, or wait until midnight Pacific Time ({_until_midnight_pt()}).",
                    {"daily_limit": DAILY_LIMIT, "used_today": entry["count"], "requested": n},
                )
            if in_minute + n > MINUTE_LIMIT:
                oldest = min((t for t, _ in entry["minute"]), default=now)
                wait = max(1, int(60 - (now - oldest)) + 1)
                raise UpstreamError(
                    f"URL Inspection allows {MINUTE_LIMIT} inspections a minute per property and {in_minute} were sent "
                    f"in the last minute for {site}: {n} more would exceed it. Retry in {wait} s or send fewer URLs.",
                    {"minute_limit": MINUTE_LIMIT, "used_last_minute": in_minute, "requested": n},
                )
            entry["count"] += n
            entry["minute"].append([now, n])

    def release(self, site: str, n: int) -> None:
        """Give back ``n`` reserved inspections that were never sent."""
        if n <= 0:
            return
        now, today = self.clock(), dates.today_pt().isoformat()
        with self._locked() as data:
            entry = self._entry(data, site, today, now)
            entry["count"] = max(0, entry["count"] - n)
            if entry["minute"]:
                t, k = entry["minute"][-1]
                entry["minute"][-1] = [t, max(0, k - n)]


def _until_midnight_pt() -> str:
    from zoneinfo import ZoneInfo

    now = dates.now_utc().astimezone(ZoneInfo(dates.PACIFIC))
    midnight = dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(), tzinfo=now.tzinfo)
    minutes = int((midnight - now).total_seconds() // 60)
    return f"in {minutes // 60} h {minutes % 60} min"


def _flock(handle: Any) -> None:
    try:
        import fcntl
    except ImportError:  # Windows: the thread lock still serializes this process
        return
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)

