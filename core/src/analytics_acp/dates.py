"""Date windows (8.9): YYYY-MM-DD, YYYYMMDD, today, yesterday and NdaysAgo, resolved to YYYY-MM-DD."""

from __future__ import annotations

import datetime as _dt
import re

from .errors import InvalidArguments

_DAYS_AGO = re.compile(r"^(\d{1,5})daysAgo$")
TEMPLATE_START = "{{start_date}}"
TEMPLATE_END = "{{end_date}}"
DATE_DESCRIPTION = "YYYY-MM-DD, YYYYMMDD, NdaysAgo, yesterday or today."


def today_local(tz: str | None = None, *, now: _dt.datetime | None = None) -> _dt.date:
    """Today's date: the machine's local date, or the date in the IANA time zone ``tz``.

    Without a window, local today is the single element of ``dates`` (8.2). A source that counts
    days in its own zone (Search Console: America/Los_Angeles) passes ``tz`` so that "today" and
    NdaysAgo mean the source's day, not the machine's. ``now`` (aware) fixes the clock.
    """
    if tz is None and now is None:
        return _dt.date.today()
    moment = now if now is not None else _dt.datetime.now(_dt.UTC)
    if tz is None:
        return moment.astimezone().date()
    from zoneinfo import ZoneInfo

    return moment.astimezone(ZoneInfo(tz)).date()


def resolve_date(value: str, *, today: _dt.date | None = None, tz: str | None = None, argument: str = "date") -> str:
    """Resolve one window bound to YYYY-MM-DD or raise ACP_INVALID_ARGUMENTS naming the accepted forms.

    Relative forms count from ``today`` when given, else from today in ``tz`` (else local).
    """
    base = today or today_local(tz)
    text = str(value).strip()
    if text == "today":
        return base.isoformat()
    if text == "yesterday":
        return (base - _dt.timedelta(days=1)).isoformat()
    match = _DAYS_AGO.match(text)
    if match:
        return (base - _dt.timedelta(days=int(match.group(1)))).isoformat()
    for fmt in ("%Y-%m-%d", "%Y%m%d"):
        try:
            return _dt.datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    raise InvalidArguments(f"{argument} {text!r} is not a valid date. Use {DATE_DESCRIPTION}")


def resolve_window(start: str, end: str, *, today: _dt.date | None = None, tz: str | None = None) -> tuple[str, str]:
    """Resolve an inclusive start/end pair (relative forms in ``tz`` when given); start after end is an ACP_INVALID_ARGUMENTS."""
    base = today or (today_local(tz) if tz else None)
    s = resolve_date(start, today=base, argument="start_date")
    e = resolve_date(end, today=base, argument="end_date")
    if s > e:
        raise InvalidArguments(f"start_date {s} is after end_date {e}.")
    return s, e


def substitute_template(text: str, start: str, end: str) -> str:
    """Replace {{start_date}} / {{end_date}} (already resolved) in a template argument."""
    return text.replace(TEMPLATE_START, start).replace(TEMPLATE_END, end)


def has_template(text: str) -> bool:
    """True when a template argument carries the window markers."""
    return TEMPLATE_START in text or TEMPLATE_END in text
