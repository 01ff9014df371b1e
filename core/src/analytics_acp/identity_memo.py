"""The hashed credential identity of a session's credentials, worked out once per credentials object (7.4).

Every tools/call needs ``ctx.credential_identity``: the connector's ``credential_identity`` hook, then a
SHA-256 of its answer (canonical JSON). A session's credentials are one dict for the session's life
(acp/configure makes a new one), so the answer is remembered per dict object, bounded (LRU). An entry only
serves the very object it was made from (identity, with a strong reference so its id cannot be reused) and
only while that object still equals the copy taken then: other credentials, even equal ones in another
session, or a dict changed in place, are hashed afresh.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

MAX_ENTRIES = 256


class IdentityMemo:
    """``credentials -> identity`` remembered per credentials object (see the module docstring)."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[int, tuple[dict[str, Any], Any, str]] = OrderedDict()
        self._lock = threading.Lock()

    def identity(self, credentials: dict[str, Any], compute: Callable[[dict[str, Any]], str]) -> str:
        """``compute(credentials)``, or the value it gave for this same, unchanged object."""
        key = id(credentials)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] is credentials and entry[1] == credentials:
                self._entries.move_to_end(key)
                return entry[2]
        value = compute(credentials)
        snapshot = copy.deepcopy(credentials)  # what the entry vouches for: a change in place is a miss
        with self._lock:
            self._entries[key] = (credentials, snapshot, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return value

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
