"""A keyring test backend kept in one JSON file (``$ANALYTICS_ACP_TEST_KEYRING``), so a bridge started as another
process reads what the page stored: ``PYTHON_KEYRING_BACKEND=uikeyring.FileKeyring`` with this folder on PYTHONPATH.
Never the machine's real keychain.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import KeyringError, PasswordDeleteError

ENV = "ANALYTICS_ACP_TEST_KEYRING"


class FileKeyring(KeyringBackend):
    """Entries as {"service\\nusername": password} in the file $ANALYTICS_ACP_TEST_KEYRING."""

    priority = 1  # type: ignore[assignment]

    def _load(self) -> dict[str, str]:
        path = Path(os.environ.get(ENV) or "/nonexistent/keyring.json")
        return json.loads(path.read_text()) if path.exists() else {}

    def _save(self, data: dict[str, str]) -> None:
        if not os.environ.get(ENV):
            raise KeyringError(f"{ENV} is not set")
        Path(os.environ[ENV]).write_text(json.dumps(data))

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}\n{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._load()
        data[f"{service}\n{username}"] = password
        self._save(data)

    def delete_password(self, service: str, username: str) -> None:
        data = self._load()
        if data.pop(f"{service}\n{username}", None) is None:
            raise PasswordDeleteError(username)
        self._save(data)
