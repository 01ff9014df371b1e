"""Where a server writes: ACP_TMP_DIR and ACP_CACHE_DIR (13.3), never the server folder."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

_private_tmp: Path | None = None


def tmp_dir() -> Path:
    """ACP_TMP_DIR (13.3) or a private 0700 temp dir of this process; never the server folder.

    The private dir is removed when the process ends (normal exit here, a stop signal in
    stopping.py): 8.5 has the host read a table file when the response arrives, so nothing in it
    is needed afterwards, and table files hold the user's data.
    """
    global _private_tmp
    env = os.environ.get("ACP_TMP_DIR")
    if env:
        path = Path(env)
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        return path
    if _private_tmp is None or not _private_tmp.is_dir():
        if _private_tmp is None:
            atexit.register(remove_private_tmp)
        _private_tmp = Path(tempfile.mkdtemp(prefix="analytics-acp-"))  # mkdtemp: mode 0700
    return _private_tmp


def remove_private_tmp() -> None:
    """Remove this process's private temp dir (never ACP_TMP_DIR, which belongs to the host)."""
    if _private_tmp is not None:
        shutil.rmtree(_private_tmp, ignore_errors=True)


def cache_dir() -> Path | None:
    """ACP_CACHE_DIR (13.3) or None: then caches are memory-only."""
    env = os.environ.get("ACP_CACHE_DIR")
    if not env:
        return None
    path = Path(env)
    path.mkdir(parents=True, exist_ok=True)
    return path
