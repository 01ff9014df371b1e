"""sources.json parsing (16.3): fields, defaults, value references, errors that never stop the bridge."""

import json

from analytics_acp_bridge.sources.entries import load_sources
from analytics_acp_bridge.sources.redact import Redactor


def write(path, data):
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def test_bridge_sources_references_and_defaults(tmp_path, monkeypatch):
    project = tmp_path / "proj"
    project.mkdir()
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "token.txt").write_text("  s3cr3t-token-value \n", encoding="utf-8")
    monkeypatch.setenv("BRIDGE_TEST_PASSWORD", "hunter2-password")
    path = write(tmp_path / "sources.json", {
        "defaults": {"row_limit": 25, "cost_limit_usd": 1.5},
        "sources": [
            {
                "id": "ventas", "acp": "databases", "label": "Ventas (SQLite)", "default_resource_id": "ventas",
                "credentials": {"type": "sqlite", "path": {"projectPath": "data/ventas.sqlite"}},
                "row_limit": 10,
            },
            {
                "id": "pg", "acp": "databases",
                "credentials": {"type": "postgres", "password": {"env": "BRIDGE_TEST_PASSWORD"}, "token": {"file": "secrets/token.txt"}},
                "config": {"access_mode": "onlyRead"}, "field_limit": 8,
            },
        ],
    })
    result = load_sources(path, project)
    assert result.error is None
    ventas, pg = result.sources
    assert ventas.error is None and pg.error is None
    assert ventas.credentials == {"type": "sqlite", "path": str((project / "data/ventas.sqlite").resolve())}
    assert ventas.limits == {"row_limit": 10, "cost_limit_usd": 1.5}  # source beats defaults
    assert ventas.label == "Ventas (SQLite)"
    assert pg.label == "pg"  # label defaults to the id
    assert pg.credentials["password"] == "hunter2-password"
    assert pg.credentials["token"] == "s3cr3t-token-value"  # file contents, trimmed, relative to sources.json
    assert pg.limits == {"row_limit": 25, "cost_limit_usd": 1.5, "field_limit": 8}
    assert pg.meta()["config"] == {"access_mode": "onlyRead"}
    assert result.secrets == {"hunter2-password", "s3cr3t-token-value"}  # env and file references are secrets
    # Literal values: secret when the ACP's schema marks them writeOnly (or when the schema is unknown).
    schema = {"oneOf": [{"properties": {"type": {"const": "sqlite"}, "path": {"type": "string"}}},
                        {"properties": {"user": {"type": "string"}, "pin": {"type": "string", "writeOnly": True}}}]}
    assert ventas.secret_values(schema) == set()
    assert ventas.secret_values(None) == {str((project / "data/ventas.sqlite").resolve())}
    assert "sqlite" not in ventas.secret_values(None)  # the variant discriminator is never a secret
    scrub = Redactor(result.secrets)
    assert "hunter2" not in scrub.text("error: password hunter2-password rejected")


def test_bridge_sources_write_only_literals(tmp_path):
    path = write(tmp_path / "sources.json", {"sources": [
        {"id": "s", "acp": "x", "credentials": {"type": "server", "user": "analyst", "pin": "4711-9999", "password": "pw-literal"}},
    ]})
    [source] = load_sources(path, tmp_path).sources
    schema = {"properties": {"user": {"type": "string"}, "pin": {"type": "string", "writeOnly": True}}}
    assert source.secret_values(schema) == {"4711-9999", "pw-literal"}  # writeOnly, and a secret-named key


def test_bridge_sources_file_errors_are_reported(tmp_path):
    missing = load_sources(tmp_path / "nope.json", tmp_path)
    assert missing.sources == [] and "not found" in missing.error
    broken = load_sources(write(tmp_path / "s.json", '{"sources": [ {"id": "a",, }'), tmp_path)
    assert broken.sources == [] and "not valid JSON" in broken.error and "line 1" in broken.error
    shape = load_sources(write(tmp_path / "t.json", '{"sources": {}}'), tmp_path)
    assert "sources" in shape.error


def test_bridge_sources_bad_entries_do_not_hide_good_ones(tmp_path, monkeypatch):
    monkeypatch.delenv("BRIDGE_TEST_UNSET", raising=False)
    path = write(tmp_path / "sources.json", {
        "defaults": {"row_limit": 9000},
        "sources": [
            {"id": "Bad Id", "acp": "databases"},
            {"id": "ok", "acp": "prediction", "extra_field": 1},
            {"id": "ok", "acp": "prediction"},
            {"id": "noenv", "acp": "databases", "credentials": {"password": {"env": "BRIDGE_TEST_UNSET"}}},
            {"id": "nofile", "acp": "databases", "credentials": {"key": {"file": "missing.txt"}}},
            {"id": "limits", "acp": "databases", "row_limit": -1, "field_limit": 500, "cost_limit_usd": "x"},
            {"id": "noacp"},
            "not an object",
        ],
    })
    result = load_sources(path, tmp_path)
    assert "defaults.row_limit" in result.error
    by_index = result.sources
    assert "id must be" in by_index[0].error
    # Issue 34.1: an unknown field is an error (the source publishes no tools), naming the known fields.
    assert "unknown field 'extra_field' (the fields are acp, autocontext_blocks, config," in by_index[1].error
    assert by_index[1].problem().name == "ACP_INVALID_ARGUMENTS"
    assert "earlier source" in by_index[2].error
    assert "BRIDGE_TEST_UNSET is not set" in by_index[3].error
    assert "cannot read file" in by_index[4].error
    assert all(k in by_index[5].error for k in ("row_limit", "field_limit", "cost_limit_usd"))
    assert by_index[5].problem().name == "ACP_INVALID_LIMIT" and result.problem.name == "ACP_INVALID_LIMIT"  # 5.1
    assert by_index[3].problem().name == "ACP_CREDENTIALS_MISSING"  # an unset variable: the credential is not there
    assert "acp is required" in by_index[6].error
    assert "must be an object" in by_index[7].error


def test_bridge_sources_whole_credentials_from_a_json_file(tmp_path):
    """gcloud's application-default credentials file as the whole credentials object (GSC/GA4 authorized_user)."""
    adc = {"type": "authorized_user", "client_id": "c.apps.googleusercontent.com", "client_secret": "adc-client-secret",
           "refresh_token": "1//adc-refresh-token", "account": "", "quota_project_id": "p", "universe_domain": "googleapis.com"}
    (tmp_path / "adc.json").write_text(json.dumps(adc), encoding="utf-8")
    (tmp_path / "not-json.txt").write_text("plain text", encoding="utf-8")
    path = write(tmp_path / "sources.json", {"sources": [
        {"id": "gsc", "acp": "gsc", "credentials": {"file": "adc.json"}},
        {"id": "bad", "acp": "gsc", "credentials": {"file": "not-json.txt"}},
    ]})
    good, bad = load_sources(path, tmp_path).sources
    assert good.error is None and good.credentials == adc
    assert "1//adc-refresh-token" in load_sources(path, tmp_path).secrets  # its leaves are secrets too
    assert "must hold a JSON object" in bad.error


def test_bridge_sources_a_key_file_whole_redacts_only_its_secret_fields(tmp_path):
    """Issue 26.4: {"file": "key.json"} with the key downloaded from the Cloud console; only private_key and
    private_key_id are secret, so "service_account", field names and client_email stay readable in messages."""
    key = {"type": "service_account", "project_id": "acme-analytics", "private_key_id": "0123456789abcdef",
           "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEabc\n-----END PRIVATE KEY-----\n",
           "client_email": "reader@acme-analytics.iam.gserviceaccount.com", "client_id": "1234567890",
           "token_uri": "https://oauth2.googleapis.com/token"}
    (tmp_path / "key.json").write_text(json.dumps(key), encoding="utf-8")
    path = write(tmp_path / "sources.json", {"sources": [{"id": "ga", "acp": "ga4", "credentials": {"file": "key.json"}}]})
    loaded = load_sources(path, tmp_path)
    (source,) = loaded.sources
    assert source.error is None and source.credentials == key
    assert {key["private_key"], key["private_key_id"]} <= loaded.secrets
    assert not {"service_account", key["client_email"], key["project_id"], key["token_uri"]} & loaded.secrets
    text = Redactor(loaded.secrets).text(f"missing required field(s) service_account; grant {key['client_email']} "
                                         f"(key {key['private_key']})")
    assert "service_account" in text and key["client_email"] in text and "MIIEabc" not in text
