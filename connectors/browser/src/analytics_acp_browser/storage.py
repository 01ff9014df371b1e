"""localStorage / sessionStorage of each page, compared with the previous reading of the same
origin in the session (a new browser context starts empty, so first readings are ``created``)."""

from __future__ import annotations

from typing import Any

COLLECT_JS = r"""
() => {
  const read = (s) => { const out = {}; try { for (let i = 0; i < s.length; i++) { const k = s.key(i); out[k] = s.getItem(k); } } catch (e) {} return out; };
  let local = {}, session = {};
  try { local = read(window.localStorage); } catch (e) {}
  try { session = read(window.sessionStorage); } catch (e) {}
  return {origin: location.origin, local, session};
}
"""

State = dict[tuple[str, str], dict[str, str]]  # (origin, storage) -> {key: value}


def page_rows(page_index: int, reading: dict[str, Any], previous: State) -> list[dict[str, Any]]:
    """Rows for one page's final reading; ``previous`` is updated in place for the next page."""
    rows = []
    origin = reading.get("origin") or ""
    for storage in ("local", "session"):
        now: dict[str, str] = reading.get(storage) or {}
        before = previous.get((origin, storage), {})
        for key in dict.fromkeys([*before, *now]):
            if key in now and key not in before:
                change = "created"
            elif key not in now:
                change = "deleted"
            elif now[key] != before[key]:
                change = "updated"
            else:
                change = "unchanged"
            value = now.get(key)
            rows.append({
                "page_index": page_index,
                "origin": origin,
                "storage": storage,
                "key": key,
                "change": change,
                "value": value,
                "previous_value": before.get(key) if change in ("updated", "deleted") else None,
                "size": len(key) + len(value or ""),
            })
        previous[(origin, storage)] = dict(now)
    return rows
