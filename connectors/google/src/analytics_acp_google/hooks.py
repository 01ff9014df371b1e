"""Hook implementations every Google connector shares, written once (issue 27.6).

A connector's plugin.py imports them (``from analytics_acp_google.hooks import credential_identity``):
pluggy registers the hookimpls found in the plugin module's namespace, so importing is registering.
"""

from __future__ import annotations

from typing import Any

from analytics_acp import hookimpl


@hookimpl
def credential_identity(credentials: dict[str, Any] | None) -> str | None:
    """client_email / email / account / client_id: a non-secret identity for the caches (7.4)."""
    from .credentials import credential_identity as identity

    return identity(credentials)
