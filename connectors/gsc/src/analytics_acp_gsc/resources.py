"""The resource listing (6.3) and id normalization (6.1) backed by sites.list."""

from __future__ import annotations

from analytics_acp import CallContext, Resource

from .client import Client
from .resource_ids import DOMAIN_PREFIX, parse, resolve_bare

# The REST API answers siteOwner...; the discovery document lists SITE_OWNER...: accept both.
PERMISSIONS = {
    "siteowner": "Owner",
    "sitefulluser": "Full user",
    "siterestricteduser": "Restricted user",
    "siteunverifieduser": "Unverified (no data access)",
}


def permission_group(level: str | None) -> str | None:
    """A readable permission level for the suggestion's group."""
    if not level:
        return None
    return PERMISSIONS.get(level.replace("_", "").lower(), level)


def list_resources(ctx: CallContext) -> list[Resource]:
    """Every property the credentials see, in the API's order; group = permission level."""
    out = []
    for entry in Client(ctx).sites():
        site = entry["siteUrl"]
        kind = "Domain property" if site.startswith(DOMAIN_PREFIX) else "URL-prefix property"
        out.append(Resource(resource_id=site, name=site[len(DOMAIN_PREFIX):] if site.startswith(DOMAIN_PREFIX) else site,
                            description=kind, group=permission_group(entry.get("permissionLevel"))))
    return out


def normalize(resource_id: str, ctx: CallContext) -> str:
    """The normalized property id; a bare host is looked up among the properties the credentials can see."""
    prop = parse(resource_id)
    if not prop.bare or not ctx.credentials:
        return prop.id
    sites = [e["siteUrl"] for e in Client(ctx).sites()]
    return resolve_bare(prop, sites)
