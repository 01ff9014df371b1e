"""The resource listing (6.3) and id normalization (6.1) backed by sites.list."""

from __future__ import annotations

from typing import Any

from analytics_acp import Resource

from .client import Client
from .resource_ids import DOMAIN_PREFIX, parse, resolve_bare

PERMISSIONS = {
    "SITE_OWNER": "Owner",
    "SITE_FULL_USER": "Full user",
    "SITE_RESTRICTED_USER": "Restricted user",
    "SITE_UNVERIFIED_USER": "Unverified (no data access)",
}


def list_resources(ctx: Any) -> list[Resource]:
    """Every property the credentials see, in the API's order; group = permission level."""
    out = []
    for entry in Client(ctx).sites():
        site = entry["siteUrl"]
        kind = "Domain property" if site.startswith(DOMAIN_PREFIX) else "URL-prefix property"
        out.append(Resource(resource_id=site, name=site[len(DOMAIN_PREFIX):] if site.startswith(DOMAIN_PREFIX) else site,
                            description=kind, group=PERMISSIONS.get(entry.get("permissionLevel", ""), entry.get("permissionLevel"))))
    return out


def normalize(resource_id: str, ctx: Any) -> str:
    """The normalized property id; a bare host is looked up among the properties the credentials can see."""
    prop = parse(resource_id)
    if not prop.bare or not ctx.credentials:
        return prop.id
    sites = [e["siteUrl"] for e in Client(ctx).sites()]
    return resolve_bare(prop, sites)
