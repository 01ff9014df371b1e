"""Autocontext cache (7.4): TTL entries in memory and, with a directory, on disk (one JSON file per key).

Callers build keys from a credential *identity hash*, never from the credentials themselves.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from .state import identity_key as _digest


class TTLCache:
    """get/set/invalidate with per-entry TTL; disk entries are written atomically with mode 0600."""

    def __init__(self, directory: Path | None = None):
        self.directory = Path(directory) if directory else None
        self._memory: dict[str, tuple[float, Any]] = {}

    def get(self, key: Any, now: float | None = None) -> Any | None:
        """The cached value, or None when absent or expired."""
        now = time.time() if now is None else now
        digest = _digest(key)
        entry = self._memory.get(digest)
        if entry is None and self.directory is not None:
            entry = self._read(digest)
        if entry is None:
            return None
        expires, value = entry
        if expires < now:
            self.invalidate(key)
            return None
        self._memory[digest] = entry
        return value

    def set(self, key: Any, value: Any, ttl_s: float, now: float | None = None) -> None:
        """Store ``value`` (JSON-serializable) for ``ttl_s`` seconds."""
        now = time.time() if now is None else now
        digest = _digest(key)
        entry = (now + ttl_s, value)
        self._memory[digest] = entry
        if self.directory is not None:
            self._write(digest, entry)

    def invalidate(self, key: Any) -> None:
        """Forget one entry (memory and disk)."""
        digest = _digest(key)
        self._memory.pop(digest, None)
        if self.directory is not None:
            (self.directory / f"{digest}.json").unlink(missing_ok=True)

    def _read(self, digest: str) -> tuple[float, Any] | None:
        path = self.directory / f"{digest}.json"  # type: ignore[operator]
        try:
            data = json.loads(path.read_text())
            return float(data["expires"]), data["value"]
        except (OSError, ValueError, KeyError):
            return None

    def _write(self, digest: str, entry: tuple[float, Any]) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)  # type: ignore[union-attr]
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-")
            with os.fdopen(fd, "w") as handle:
                json.dump({"expires": entry[0], "value": entry[1]}, handle, default=str)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.directory / f"{digest}.json")  # type: ignore[operator]
        except (OSError, TypeError, ValueError):
            pass  # a disk cache that cannot be written is only slower
