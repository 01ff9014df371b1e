"""sources.json written by the set-up page (issue 35.4, 8.7, 5.2): ``{"keyring": name}`` references resolved from the
secret store like ``{"env"}`` (their values are secrets), and ``tables`` / ``autocontext_blocks`` sent in ``_meta.acp``.

A test keyring backend (``keyring.set_keyring``), never the machine's keychain.
"""

import json

import keyring
import pytest
from analytics_acp import secret_store
from analytics_acp_bridge.sources.entries import load_sources
from keyring.backend import KeyringBackend


class MemoryKeyring(KeyringBackend):
    priority = 1

    def __init__(self):
        super().__init__()
        self.entries = {}

    def get_password(self, service, username):
        return self.entries.get((service, username))

    def set_password(self, service, username, password):
        self.entries[(service, username)] = password

    def delete_password(self, service, username):
        self.entries.pop((service, username), None)


@pytest.fixture
def memory_keyring():
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    secret_store._cache.clear()
    yield backend
    keyring.set_keyring(previous)
    secret_store._cache.clear()


def test_keyring_references_resolve_as_secrets_and_name_lists_reach_meta(tmp_path, memory_keyring):
    stored = secret_store.store("shop.credentials.basic_password", "kr-SECRET-value-123")
    assert stored.reference == {"keyring": "shop.credentials.basic_password"}
    path = tmp_path / "sources.json"
    path.write_text(json.dumps({"sources": [
        {"id": "shop", "acp": "browser", "credentials": {"basic_username": "ana", "basic_password": stored.reference},
         "tables": ["datalayer", "cookies"], "autocontext_blocks": []},
        {"id": "gone", "acp": "browser", "credentials": {"basic_password": {"keyring": "not-there"}}},
        {"id": "bad", "acp": "browser", "tables": "cookies"},
    ]}))
    result = load_sources(path, tmp_path)
    shop, gone, bad = result.sources
    assert shop.error is None and not shop.warnings
    assert shop.credentials == {"basic_username": "ana", "basic_password": "kr-SECRET-value-123"}
    assert "kr-SECRET-value-123" in result.secrets  # scrubbed from everything the client receives
    assert shop.meta()["tables"] == ["datalayer", "cookies"] and shop.meta()["autocontext_blocks"] == []
    assert gone.error == "sources[1].credentials.basic_password: the system keyring has no secret 'not-there' (set it again on the set-up page)."
    assert bad.error == "sources[2].tables must be a list of names."
