"""How long a Google call may take: the call's deadline, one request's read and connect timeouts.

Env ``ANALYTICS_ACP_GOOGLE_DEADLINE_S`` / ``ANALYTICS_ACP_GOOGLE_TIMEOUT_S`` change the defaults (tests set them
to a couple of seconds); ``config.timeout_s`` of a source wins over both. Read by the retry policy (retry.py)
and by the error messages that name the bound (errors.py), so it sits below both.
"""

from __future__ import annotations

import os
from typing import Any

DEFAULT_DEADLINE_S = 30.0
DEFAULT_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 5.0
TIMEOUT_S_MIN, TIMEOUT_S_MAX = 5, 600  # bounds of config.timeout_s


def _env_seconds(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        return default
    return value if value > 0 else default


def configured_timeout_s(config: dict[str, Any] | None) -> float | None:
    """``config.timeout_s`` clamped to its bounds, or None when unset or not a number."""
    raw = (config or {}).get("timeout_s")
    if raw is None or isinstance(raw, bool):
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return None
    return min(max(value, TIMEOUT_S_MIN), TIMEOUT_S_MAX)


def deadline_s(config: dict[str, Any] | None = None) -> float:
    """The whole call's budget in seconds: config.timeout_s, else env ``ANALYTICS_ACP_GOOGLE_DEADLINE_S``, else 30."""
    return configured_timeout_s(config) or _env_seconds("ANALYTICS_ACP_GOOGLE_DEADLINE_S", DEFAULT_DEADLINE_S)


def request_timeout_s(config: dict[str, Any] | None = None) -> float:
    """One request's read timeout: config.timeout_s, else env ``ANALYTICS_ACP_GOOGLE_TIMEOUT_S``, else 30."""
    return configured_timeout_s(config) or _env_seconds("ANALYTICS_ACP_GOOGLE_TIMEOUT_S", DEFAULT_TIMEOUT_S)


def connect_timeout_s(config: dict[str, Any] | None = None) -> float:
    """How long to wait for a TCP/TLS connection: 5 s, or less when the read timeout is shorter."""
    return min(CONNECT_TIMEOUT_S, request_timeout_s(config))
