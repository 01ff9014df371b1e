"""The on_first_call decision table of 7.5, with an in-memory (process-lifetime) delivered set."""

from __future__ import annotations

from collections import OrderedDict


class DeliveryTracker:
    """Remembers which (session_id, resource_id) pairs already got autocontext (7.5)."""

    def __init__(self, capacity: int = 10_000):
        self.capacity = capacity
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()

    def should_attach(self, autocontext_delivered: bool | None, session_id: str | None, resource_id: str | None) -> bool:
        """7.5: true -> never; false without session -> always; absent without session -> never;
        false/absent with session -> only the first time for that (session, resource)."""
        if autocontext_delivered is True:
            return False
        if not session_id:
            return autocontext_delivered is False
        return (session_id, resource_id or "") not in self._seen

    def mark(self, session_id: str, resource_id: str | None) -> None:
        """Record that this session already has the resource's autocontext."""
        key = (session_id, resource_id or "")
        self._seen[key] = None
        self._seen.move_to_end(key)
        while len(self._seen) > self.capacity:
            self._seen.popitem(last=False)
