"""Resource suggestions (6.3): default first, then recent (14-day half-life), then the source order."""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from .constants import ACP_RESOURCE_SUGGESTIONS, RECENT_HALF_LIFE_DAYS, RESOURCE_LIST_CACHE_S
from .declarations import Resource

_DAY = 86400.0


class RecentStore:
    """Per credential identity: a decayed use score per resource, persisted under ACP_CACHE_DIR."""

    FILE = "recent-resources.json"

    def __init__(self, directory: Path | None = None):
        self.path = Path(directory) / self.FILE if directory else None
        self._data: dict[str, dict[str, list[float]]] = self._load()

    def _load(self) -> dict[str, dict[str, list[float]]]:
        if self.path is None or not self.path.exists():
            return {}
        try:
            data: dict[str, dict[str, list[float]]] = json.loads(self.path.read_text())
            return data
        except (OSError, ValueError):
            return {}

    def record(self, identity: str, resource_id: str, now: float | None = None) -> None:
        """Count one use of ``resource_id`` by ``identity`` (an identity hash, never a secret)."""
        now = time.time() if now is None else now
        score, at = self._data.setdefault(identity, {}).get(resource_id, [0.0, now])
        self._data[identity][resource_id] = [_decay(score, at, now) + 1.0, now]
        self._save()

    def scores(self, identity: str, now: float | None = None) -> dict[str, float]:
        """Current decayed scores of an identity's resources."""
        now = time.time() if now is None else now
        return {rid: _decay(s, at, now) for rid, (s, at) in self._data.get(identity, {}).items()}

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tmp-")
            with os.fdopen(fd, "w") as handle:
                json.dump(self._data, handle)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except OSError:
            pass


def _decay(score: float, at: float, now: float) -> float:
    return score * math.pow(0.5, max(0.0, now - at) / (RECENT_HALF_LIFE_DAYS * _DAY))


class ResourceListCache:
    """The full listing per credential identity, for 600 s (6.3)."""

    def __init__(self, ttl_s: float = RESOURCE_LIST_CACHE_S):
        self.ttl_s = ttl_s
        self._entries: dict[str, tuple[float, list[Resource]]] = {}

    def get(self, identity: str) -> list[Resource] | None:
        """The cached listing or None."""
        entry = self._entries.get(identity)
        if entry and entry[0] > time.monotonic():
            return entry[1]
        return None

    def set(self, identity: str, listing: list[Resource]) -> None:
        """Cache a listing."""
        self._entries[identity] = (time.monotonic() + self.ttl_s, listing)


def _entry(r: Resource, recent: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"resource_id": r.resource_id, "name": r.name}
    if r.description:
        out["description"] = r.description
    if r.group:
        out["group"] = r.group
    if recent:
        out["recent"] = True
    return out


def _matches(r: Resource, query: str) -> bool:
    q = query.lower()
    return any(q in (v or "").lower() for v in (r.name, r.group, r.resource_id))


def suggest_resources(
    listing: list[Resource],
    *,
    default_resource_id: str | None,
    recent: dict[str, float],
    query: str | None = None,
    limit: int = ACP_RESOURCE_SUGGESTIONS,
) -> dict[str, Any]:
    """The 6.3 model_response: {notice, total_available, resources}."""
    by_id = {r.resource_id: r for r in listing}
    pool = [r for r in listing if _matches(r, query)] if query else list(listing)
    order: list[Resource] = []
    seen: set[str] = set()

    def add(r: Resource) -> None:
        if r.resource_id not in seen:
            seen.add(r.resource_id)
            order.append(r)

    configured_missing = bool(default_resource_id) and default_resource_id not in by_id
    if default_resource_id:
        add(by_id.get(default_resource_id) or Resource(
            resource_id=default_resource_id,
            name="(configured default)",
            description="Configured as the default resource; not found in the account listing.",
        ))
    for rid, _ in sorted(recent.items(), key=lambda kv: -kv[1]):
        if rid in by_id and by_id[rid] in pool:
            add(by_id[rid])
    for r in pool:
        add(r)
    page = order[:limit]
    total = len(listing)
    shown = len(page)
    if query:
        matched = len(pool)
        notice = f"Searched all {total} available resources for {query!r}: {matched} matched, showing {min(shown, matched)}."
    elif shown < total + (1 if configured_missing else 0):
        notice = f"Showing {shown} of {total} available resources, most recently used first."
    else:
        notice = f"{total} resources available."
    if default_resource_id:
        notice += f" The default resource is {default_resource_id}."
    notice += " Pass resource_id to get its autocontext."
    return {
        "notice": notice,
        "total_available": total,
        "resources": [_entry(r, recent.get(r.resource_id, 0) > 0.01) for r in page],
    }
