"""Retry and timeout policy for every Google call: seconds, never Google's 600 s defaults.

``ANALYTICS_ACP_GOOGLE_DEADLINE_S`` (total retry budget) and ``ANALYTICS_ACP_GOOGLE_TIMEOUT_S``
(one HTTP request) override the defaults; tests set them to a couple of seconds.
"""

from __future__ import annotations

import os
from typing import Any

DEFAULT_DEADLINE_S = 30.0
DEFAULT_TIMEOUT_S = 30.0
RETRIED_STATUS = (500, 502, 503, 504)


def _env_seconds(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        return default
    return value if value > 0 else default


def deadline_s() -> float:
    """Total retry budget in seconds (default 30; env ``ANALYTICS_ACP_GOOGLE_DEADLINE_S``)."""
    return _env_seconds("ANALYTICS_ACP_GOOGLE_DEADLINE_S", DEFAULT_DEADLINE_S)


def request_timeout_s() -> float:
    """Timeout of one HTTP request in seconds (default 30; env ``ANALYTICS_ACP_GOOGLE_TIMEOUT_S``)."""
    return _env_seconds("ANALYTICS_ACP_GOOGLE_TIMEOUT_S", DEFAULT_TIMEOUT_S)


def is_retryable(exc: BaseException) -> bool:
    """True for 500/502/503/504 and connection failures; never for a 4xx or a read timeout."""
    code = getattr(exc, "code", None)
    if isinstance(code, int) and code in RETRIED_STATUS:
        return True
    status = getattr(getattr(exc, "resp", None), "status", None)  # googleapiclient.errors.HttpError
    if isinstance(status, int) and status in RETRIED_STATUS:
        return True
    try:
        import requests
    except ImportError:  # pragma: no cover - requests is a dependency
        return False
    # A ConnectTimeout is a ConnectionError; a ReadTimeout is not: a hung server is not hammered again.
    return isinstance(exc, requests.exceptions.ConnectionError) and not isinstance(exc, requests.exceptions.ReadTimeout)


def api_core_retry() -> Any:
    """A ``google.api_core.retry.Retry`` for 5xx and connection errors, bounded by ``deadline_s()``."""
    from google.api_core.retry import Retry

    return Retry(predicate=is_retryable, initial=0.2, maximum=4.0, multiplier=2.0, timeout=deadline_s())
