"""analytics_acp.secret_store (issue 35.4): the keyring when a usable backend exists, else a 0600 file in a 0700
folder of the user's config folder; references for sources.json; only what it owns is ever removed.

Tests choose the keyring backend with ``keyring.set_keyring`` (never the machine's real keychain).
"""

from __future__ import annotations

import stat

import keyring
import pytest
from analytics_acp import secret_store
from keyring.backend import KeyringBackend
from keyring.backends import fail


class MemoryKeyring(KeyringBackend):
    """A keyring that keeps entries in memory (a test backend)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        from keyring.errors import PasswordDeleteError

        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.setenv(secret_store.CONFIG_ENV, str(tmp_path / "config"))
    previous = keyring.get_keyring()
    secret_store._cache.clear()
    yield tmp_path / "config"
    keyring.set_keyring(previous)
    secret_store._cache.clear()


def test_a_usable_keyring_keeps_the_secret_and_sources_json_gets_a_reference(config):
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    stored = secret_store.store("ventas.credentials.password/x y", "s3cret-value")
    assert stored.place == "keyring" and stored.reference == {"keyring": "ventas.credentials.password_x_y"}
    assert backend.entries == {("analytics-acp", "ventas.credentials.password_x_y"): "s3cret-value"}
    assert "keyring" in secret_store.backend_description()
    secret_store._cache.clear()  # read back from the backend itself, not the process cache
    assert secret_store.read_keyring("ventas.credentials.password_x_y") == "s3cret-value"
    assert secret_store.is_reference(stored.reference)
    assert secret_store.remove(stored.reference) and backend.entries == {}
    with pytest.raises(secret_store.SecretStoreError, match="has no secret") as err:
        secret_store.read_keyring("ventas.credentials.password_x_y")
    assert "s3cret" not in str(err.value)
    assert not config.exists()  # nothing was written to disk


def test_without_a_usable_keyring_a_private_file_outside_the_project(config):
    keyring.set_keyring(fail.Keyring())
    stored = secret_store.store("ga4.credentials.service_account", '{"private_key": "k"}')
    assert stored.place == "file" and "not encrypted" in stored.description
    path = config / "secrets" / "ga4.credentials.service_account"
    assert stored.reference == {"file": str(path)} and path.read_text() == '{"private_key": "k"}'
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700 and stat.S_IMODE(config.stat().st_mode) == 0o700
    assert "not encrypted" in secret_store.backend_description()
    with pytest.raises(secret_store.SecretStoreError, match="no usable system keyring"):
        secret_store.read_keyring("anything")
    assert secret_store.remove(stored.reference) and not path.exists()


def test_only_what_the_store_owns_is_removed(config, tmp_path):
    keyring.set_keyring(fail.Keyring())
    mine = tmp_path / "my-key.json"
    mine.write_text("{}")
    assert not secret_store.remove({"file": str(mine)}) and mine.exists()  # the person's own file
    assert not secret_store.remove({"env": "GA_KEY"})
    assert not secret_store.is_reference({"file": str(mine)})
    outside = config / "secrets" / ".." / "elsewhere"
    assert secret_store.owned_file({"file": str(outside)}) is None
