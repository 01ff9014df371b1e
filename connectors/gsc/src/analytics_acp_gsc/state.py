"""What the gsc connector keeps between calls, held by the server's ConnectorState (analytics_acp.state):
made on first use, released when the server stops. Keys start with a hash of the credentials (the core's
identity_key or the call's credential_identity), so two accounts never share an entry."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from analytics_acp.state import ConnectorSlot, keyed_cache

SITES_TTL_S = 600.0
FRESHNESS_TTL_S = 3600.0

# api endpoint (None = Google's) -> the discovery-built Resource (it holds no credentials).
SERVICES = keyed_cache("gsc.services", 8)
# identity_key(credentials) -> google-auth credentials, in memory only, so tokens are reused between calls.
CREDENTIALS = keyed_cache("gsc.credentials", 32)
# (credential identity, endpoint) -> sites.list entries, for 10 minutes.
SITES = keyed_cache("gsc.sites", 256, ttl_s=SITES_TTL_S)
# (credential identity, endpoint, property, search type, PT day) -> the last day with final data, for an hour.
FRESHNESS = keyed_cache("gsc.freshness", 1024, ttl_s=FRESHNESS_TTL_S)


@dataclass
class LedgerMemory:
    """The URL Inspection ledger of a server without a cache folder, and the lock its threads share."""

    data: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


LEDGER = ConnectorSlot("gsc.ledger", LedgerMemory)
