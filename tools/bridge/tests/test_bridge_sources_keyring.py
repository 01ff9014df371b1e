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


def test_an_unsaved_setup_resolves_as_the_saved_entry_would(tmp_path, memory_keyring, monkeypatch):
    # The set-up page's resource picker calls the ACP with a form's set-up before it is saved: resolve_setup is the
    # bridge's own resolution (one home), giving what load_sources gives the saved entry, and the values to scrub.
    from analytics_acp_bridge.sources.entries import resolve_setup

    stored = secret_store.store("shop.credentials.token", "kr-TOKEN-value-456")
    (tmp_path / "key.json").write_text(json.dumps({"type": "service_account", "private_key": "PRIVATE-KEY-abcdef"}))
    monkeypatch.setenv("UI_PICKER_HOST", "db.example.com")
    monkeypatch.delenv("UI_PICKER_UNSET", raising=False)
    credentials = {"token": stored.reference, "user": "ana-literal", "key": {"file": "key.json"}}
    config = {"host": {"env": "UI_PICKER_HOST"}, "folder": {"projectPath": "data"}}
    path = tmp_path / "sources.json"
    path.write_text(json.dumps({"sources": [{"id": "s", "acp": "x", "credentials": credentials, "config": config}]}))
    (saved,) = load_sources(path, tmp_path / "project").sources
    resolved = resolve_setup(credentials, config, path, tmp_path / "project")
    assert resolved.problems == [] and saved.error is None
    assert (resolved.credentials, resolved.config) == (saved.credentials, saved.config)
    assert resolved.config == {"host": "db.example.com", "folder": str((tmp_path / "project" / "data").resolve())}
    assert {"kr-TOKEN-value-456", "ana-literal", "PRIVATE-KEY-abcdef"} <= resolved.secrets
    # A whole-object reference is read as the JSON object it holds; one that does not resolve is a typed problem.
    whole = resolve_setup({"file": "key.json"}, None, path, tmp_path)
    assert whole.credentials == {"type": "service_account", "private_key": "PRIVATE-KEY-abcdef"} and whole.config is None
    broken = resolve_setup({"token": {"env": "UI_PICKER_UNSET"}}, {"x": {"file": "missing.txt"}}, path, tmp_path)
    assert [p.name for p in broken.problems] == ["ACP_CREDENTIALS_MISSING", "ACP_INVALID_ARGUMENTS"]
    assert broken.problems[0].message == "credentials.token: environment variable UI_PICKER_UNSET is not set."
