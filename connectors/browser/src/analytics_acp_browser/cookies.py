"""Cookies of a capture: what changed between the start of the call and its exit.

The cookie jar is read at the start of the call (before the first navigation), after each
page settles and at the exit. A cookie's ``change`` is ``created`` (absent at the start),
``updated`` (value changed), ``deleted`` (gone at the exit) or ``unchanged``; ``page_index``
is the first page after which the change was seen.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .urls import same_site

Key = tuple[str, str, str]


def _key(cookie: dict[str, Any]) -> Key:
    return (cookie.get("name", ""), cookie.get("domain", ""), cookie.get("path", "/"))


def jar(cookies: list[dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    """Playwright cookie list -> {(name, domain, path): cookie}."""
    return {_key(c): c for c in cookies}


def _expires(cookie: dict[str, Any]) -> str | None:
    value = cookie.get("expires")
    if value is None or value < 0:
        return None
    return datetime.fromtimestamp(value, tz=UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def diff_rows(start: dict[Key, dict[str, Any]], snapshots: list[tuple[int, dict[Key, dict[str, Any]]]],
              end: dict[Key, dict[str, Any]], site_host: str) -> list[dict[str, Any]]:
    """``cookies`` rows: one per cookie seen at the start, after any page, or at the exit."""
    keys: list[Key] = list(dict.fromkeys([*start, *(k for _, snap in snapshots for k in snap), *end]))
    rows = []
    for key in keys:
        before, after = start.get(key), end.get(key)
        if before is None and after is not None:
            change = "created"
        elif before is not None and after is None:
            change = "deleted"
        elif before is not None and after is not None and before.get("value") != after.get("value"):
            change = "updated"
        elif before is None and after is None:
            change = "deleted"  # created and removed again during the capture
        else:
            change = "unchanged"
        page_index = None
        if change != "unchanged":
            for index, snap in snapshots:
                seen = snap.get(key)
                if (seen is None) != (before is None) or (seen and before and seen.get("value") != before.get("value")):
                    page_index = index
                    break
            if page_index is None and snapshots:
                page_index = snapshots[-1][0]
        cookie = after or before or next((snap[key] for _, snap in snapshots if key in snap), {})
        domain = key[1]
        rows.append({
            "name": key[0],
            "domain": domain,
            "path": key[2],
            "change": change,
            "first_party": same_site(domain.lstrip("."), site_host),
            "value_onload": before.get("value") if before else None,
            "value_onexit": after.get("value") if after else None,
            "expires": _expires(cookie) if after or before else None,
            "session": (cookie.get("expires") is None or cookie.get("expires", -1) < 0),
            "page_index": page_index,
            "http_only": bool(cookie.get("httpOnly")),
            "secure": bool(cookie.get("secure")),
            "same_site": cookie.get("sameSite"),
            "size": len(key[0]) + len(str(cookie.get("value", ""))),
        })
    return rows
