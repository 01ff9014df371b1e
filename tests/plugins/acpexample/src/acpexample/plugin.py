"""Hook implementations of the example connector (entry point ``example``)."""

from __future__ import annotations

import hashlib

from analytics_acp import hookimpl

from . import declaration, resources


@hookimpl
def connector_declaration():
    """Identity, schemas, resource_id, cost, catalog, and the tools and blocks (declared once there)."""
    return declaration.declaration()


@hookimpl
def list_resources(ctx):
    """Accounts visible with the call's credentials (public ones without credentials, 12.3)."""
    return resources.listing(ctx.credentials)


@hookimpl
def normalize_resource_id(resource_id):
    """acct01 / ACCT01 / accounts/acct01 / acct01/orders, with the level (6.1)."""
    return resources.normalize(resource_id)


@hookimpl
def estimate_cost(tool, arguments, ctx):
    """Only premium_report is paid (9.2)."""
    if tool.name == "premium_report":
        from .tools import estimate_premium

        return estimate_premium(arguments, ctx)
    return None


@hookimpl
def credential_identity(credentials):
    """A non-secret identity: the variant and a fingerprint of the key (the core hashes it again)."""
    if not credentials:
        return None
    if credentials.get("type") == "api_key":
        return "api_key:" + hashlib.sha256(credentials["api_key"].encode()).hexdigest()[:16]
    return "public"
