"""Connector state without module globals: made at load, released at shutdown, reached through the call.

A connector keeps things between calls (API clients, database engines, a browser, metadata it learnt)
and things for the length of one call (its Google deadline, a dry run the cost preflight made). Neither
lives in a module global here:

- ``ConnectorSlot(name, make, release)`` declares one piece of a connector's state. The core gives every
  loaded connector one ``ConnectorState`` (``LoadedConnector.state``) and every call's context points at
  it; ``ctx.state(SLOT)`` makes the piece on first use and returns the same object afterwards. When the
  server stops, the core closes the state: each piece's ``release`` runs (engines disposed, clients closed).
- ``CallSlot(name, make)`` declares per-call state: ``ctx.state(SLOT)`` makes it from the call's context
  once and it ends with the context (no dict keyed by ``id(ctx)``).
- ``KeyedCache`` is the one bounded, thread-safe LRU (optionally with a TTL) that connectors keep their
  clients and lookups in; ``keyed_cache(...)`` declares one as a ``ConnectorSlot``.
- ``identity_key(...)`` is the one hash of credentials (with whatever else partitions a cache: an endpoint,
  a project): caches are keyed by it, never by the credentials themselves (7.4, 10.1.3, 10.1.5).

Slots are frozen module constants (declarations, like a ToolSpec); what they hold is not.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

log = logging.getLogger("analytics_acp")

T = TypeVar("T")
V = TypeVar("V")


def identity_key(*parts: Any) -> str:
    """A hex SHA-256 of ``parts`` as canonical JSON: the key of anything cached per credentials.

    Give the credentials and whatever else separates two entries (an API endpoint, a billing project): two
    accounts, or one account against two endpoints, never share an entry, and the key never shows a secret.
    """
    canonical = json.dumps(parts if len(parts) != 1 else parts[0], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


class KeyedCache(Generic[V]):
    """A bounded LRU of ``key -> value``, thread-safe, with an optional time to live.

    ``on_evict(value)`` runs for every value that leaves the cache (pushed out, replaced, expired, dropped or
    cleared), outside the lock: a client is closed, an engine disposed. ``clock`` is injectable for tests.
    """

    def __init__(self, max_entries: int, *, ttl_s: float | None = None,
                 on_evict: Callable[[V], None] | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self.ttl_s = ttl_s
        self._on_evict = on_evict
        self._clock = clock
        self._entries: OrderedDict[Hashable, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        return self.get(key) is not None

    def _fresh(self, key: Hashable) -> tuple[V | None, list[V]]:
        # Under the lock: the live value of key (moved to the end), and an expired one to evict.
        found = self._entries.get(key)
        if found is None:
            return None, []
        if found[0] <= self._clock():
            del self._entries[key]
            return None, [found[1]]
        self._entries.move_to_end(key)
        return found[1], []

    def get(self, key: Hashable) -> V | None:
        """The live value of ``key`` (now the most recently used), or None."""
        with self._lock:
            value, gone = self._fresh(key)
        self._evict(gone)
        return value

    def put(self, key: Hashable, value: V) -> None:
        """Keep ``value`` under ``key``, pushing out the least recently used entries past ``max_entries``."""
        expires = self._clock() + self.ttl_s if self.ttl_s is not None else float("inf")
        with self._lock:
            old = self._entries.pop(key, None)
            self._entries[key] = (expires, value)
            gone = [old[1]] if old is not None and old[1] is not value else []
            while len(self._entries) > self.max_entries:
                gone.append(self._entries.popitem(last=False)[1][1])
        self._evict(gone)

    def get_or_make(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value of ``key``, made by ``make()`` (outside the lock: it may do I/O) when absent.

        Two threads missing at once may both make one; the first kept wins and the other is evicted.
        """
        found = self.get(key)
        if found is not None:
            return found
        made = make()
        with self._lock:
            value, gone = self._fresh(key)
        self._evict(gone)
        if value is not None:
            self._evict([made])
            return value
        self.put(key, made)
        return made

    def pop(self, key: Hashable) -> V | None:
        """Forget ``key``; its value is evicted (``on_evict``) and returned."""
        with self._lock:
            found = self._entries.pop(key, None)
        if found is None:
            return None
        self._evict([found[1]])
        return found[1]

    def drop_where(self, test: Callable[[Hashable], bool]) -> int:
        """Evict every entry whose key passes ``test``; returns how many."""
        with self._lock:
            keys = [k for k in self._entries if test(k)]
            gone = [self._entries.pop(k)[1] for k in keys]
        self._evict(gone)
        return len(gone)

    def values(self) -> list[V]:
        """The live values, least recently used first (a copy)."""
        now = self._clock()
        with self._lock:
            return [value for expires, value in self._entries.values() if expires > now]

    def clear(self) -> None:
        """Evict everything (what a connector's shutdown does with each of its caches)."""
        with self._lock:
            gone = [value for _, value in self._entries.values()]
            self._entries.clear()
        self._evict(gone)

    def _evict(self, values: list[V]) -> None:
        if self._on_evict is None:
            return
        for value in values:
            try:
                self._on_evict(value)
            except Exception as exc:  # closing a client that is already gone: the entry is dropped all the same
                log.debug("cache eviction failed: %s", type(exc).__name__)


@dataclass(frozen=True, eq=False)
class ConnectorSlot(Generic[T]):
    """One piece of a connector's state: ``make()`` on first use, ``release(value)`` when the server stops."""

    name: str
    make: Callable[[], T]
    release: Callable[[T], None] | None = None


@dataclass(frozen=True, eq=False)
class CallSlot(Generic[T]):
    """One piece of per-call state: ``make(ctx)`` on first use in a call; it ends with the call's context.
    (``ctx`` is the call's ``CallContext``, typed ``Any`` here: context.py imports this module.)"""

    name: str
    make: Callable[[Any], T]


def keyed_cache(name: str, max_entries: int, *, ttl_s: float | None = None,
                on_evict: Callable[[Any], None] | None = None) -> ConnectorSlot[KeyedCache[Any]]:
    """A ``ConnectorSlot`` holding a ``KeyedCache``; the server's stop clears it (running ``on_evict``)."""
    return ConnectorSlot(name, lambda: KeyedCache(max_entries, ttl_s=ttl_s, on_evict=on_evict), KeyedCache.clear)


class ConnectorState:
    """What one loaded connector keeps between calls, by slot; created at load, closed at shutdown."""

    def __init__(self, connector_id: str = "") -> None:
        self.connector_id = connector_id
        self._held: dict[ConnectorSlot[Any], Any] = {}
        self._lock = threading.RLock()  # a slot's make may reach another slot

    def get(self, slot: ConnectorSlot[T]) -> T:
        """The slot's value, made on first use."""
        with self._lock:
            if slot in self._held:
                return self._held[slot]  # type: ignore[no-any-return]
            value = self._held[slot] = slot.make()
            return value

    def peek(self, slot: ConnectorSlot[T]) -> T | None:
        """The slot's value if it was ever made (None otherwise): nothing is made to be released."""
        with self._lock:
            return self._held.get(slot)

    def close(self) -> None:
        """Release every piece, last made first; each failure is logged and the others still run.
        The state can be used again afterwards (a piece is made anew), and closed again."""
        with self._lock:
            held = list(self._held.items())
            self._held.clear()
        for slot, value in reversed(held):
            if slot.release is None:
                continue
            try:
                slot.release(value)
            except Exception:  # stopping anyway: one failed release must not keep the others
                log.exception("%s: releasing %s failed", self.connector_id or "connector", slot.name)


class CallState:
    """The per-call values of one ``CallContext``, by ``CallSlot`` (made once per call, thread-safe)."""

    def __init__(self) -> None:
        self._values: dict[CallSlot[Any], Any] = {}
        self._lock = threading.RLock()

    def get(self, slot: CallSlot[T], ctx: Any) -> T:
        """The slot's value for this call, made from ``ctx`` on first use."""
        with self._lock:
            if slot in self._values:
                return self._values[slot]  # type: ignore[no-any-return]
            value = self._values[slot] = slot.make(ctx)
            return value

    def peek(self, slot: CallSlot[T]) -> T | None:
        """The slot's value if this call made it, else None."""
        with self._lock:
            return self._values.get(slot)
