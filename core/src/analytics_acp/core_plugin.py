"""The core's own hook implementations: fallbacks every connector gets (trylast)."""

from __future__ import annotations

from typing import Any

from .hookspecs import hookimpl
from .state import identity_key


@hookimpl(trylast=True)
def credential_identity(credentials: dict[str, Any] | None) -> str:
    """Default identity: a hash of the canonical credentials JSON (never the secret itself)."""
    if not credentials:
        return "anonymous"
    return "sha256:" + identity_key(credentials)


@hookimpl(trylast=True)
def normalize_resource_id(resource_id: str) -> str:
    """Default normalization: trim white space."""
    return resource_id.strip()

