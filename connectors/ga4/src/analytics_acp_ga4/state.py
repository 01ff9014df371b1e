"""What the ga4 connector keeps between calls, held by the server's ConnectorState (analytics_acp.state):
made on first use, released when the server stops. Every key starts with ``credentials_key``, so two
accounts (or one account against two endpoints) never share an entry."""

from __future__ import annotations

from typing import Any

from analytics_acp import CallContext
from analytics_acp.state import identity_key, keyed_cache

METADATA_TTL_S = 600

# (credentials key, kind) -> a Data/Admin API client: not rebuilt for every page, never shared by two accounts.
CLIENTS = keyed_cache("ga4.clients", 16)
# (credentials key, property id) -> the property's metadata (custom names included), for 10 minutes.
METADATA = keyed_cache("ga4.metadata", 64, ttl_s=METADATA_TTL_S)
# (credentials key, property id) -> (time zone, currency), learned from reports, so suggestions can describe them.
SETTINGS = keyed_cache("ga4.settings", 4096)


def credentials_key(ctx: CallContext) -> str:
    """A hash of (credentials, api_endpoint): what separates clients and in-memory caches of accounts."""
    from analytics_acp_google.endpoint import api_endpoint

    return identity_key(ctx.credentials, api_endpoint(ctx.config))


def settings_of(ctx: CallContext, property_id: str) -> tuple[Any, ...]:
    """The (time zone, currency) seen for a property, or (None, None)."""
    return ctx.state(SETTINGS).get((credentials_key(ctx), property_id)) or (None, None)
