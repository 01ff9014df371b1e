"""The ``api_endpoint`` config value (private endpoints and the test fakes)."""

from __future__ import annotations

from typing import Any


def api_endpoint(config: dict[str, Any] | None) -> str | None:
    """The stripped ``api_endpoint`` of ``config``, or None (Google's own endpoint)."""
    value = (config or {}).get("api_endpoint")
    if not isinstance(value, str):
        return None
    value = value.strip().rstrip("/")
    return value or None


def endpoint_host(config: dict[str, Any] | None) -> str | None:
    """host[:port] of the configured ``api_endpoint`` (for messages), or None for Google's own."""
    from urllib.parse import urlsplit

    value = api_endpoint(config)
    if not value:
        return None
    parts = urlsplit(value if "://" in value else f"https://{value}")
    return parts.netloc.rsplit("@", 1)[-1] or value
