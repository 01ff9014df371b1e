"""Where a server writes: ACP_TMP_DIR and ACP_CACHE_DIR (13.3), never the server folder."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

_private_tmp: Path | None = None


def tmp_dir() -> Path:
    """ACP_TMP_DIR (13.3) or a private 0700 temp dir of this process; never the server folder."""
    global _private_tmp
    env = os.environ.get("ACP_TMP_DIR")
    if env:
        path = Path(env)
        path.mkdir(parents=True, exist_ok=True)
        return path
    if _private_tmp is None:
        _private_tmp = Path(tempfile.mkdtemp(prefix="analytics-acp-"))
    return _private_tmp


def cache_dir() -> Path | None:
    """ACP_CACHE_DIR (13.3) or None: then caches are memory-only."""
    env = os.environ.get("ACP_CACHE_DIR")
    if not env:
        return None
    path = Path(env)
    path.mkdir(parents=True, exist_ok=True)
    return path
