"""The core's own hook implementations: fallbacks every connector gets (trylast)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .hookspecs import hookimpl


@hookimpl(trylast=True)
def credential_identity(credentials: dict[str, Any] | None) -> str:
    """Default identity: a hash of the canonical credentials JSON (never the secret itself)."""
    if not credentials:
        return "anonymous"
    canonical = json.dumps(credentials, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


@hookimpl(trylast=True)
def normalize_resource_id(resource_id: str) -> str:
    """Default normalization: trim white space."""
    return resource_id.strip()

