"""Setup schemas (5.5): variant choice, rule messages without values, defaults, schema checks, redaction."""

import pytest
from analytics_acp.errors import CredentialsInvalid, InvalidArguments
from analytics_acp.schemas import (
    check_setup_schema,
    redact,
    secret_paths,
    secret_values,
    validate_config,
    validate_credentials,
)

CREDS_SCHEMA = {"oneOf": [
    {"title": "Key", "type": "object", "required": ["type", "api_key"],
     "properties": {"type": {"type": "string", "const": "api_key"},
                    "api_key": {"type": "string", "title": "Key", "writeOnly": True, "minLength": 10}}},
    {"title": "Service account", "type": "object", "required": ["type", "service_account"],
     "properties": {"type": {"type": "string", "const": "service_account"},
                    "service_account": {"type": "string", "title": "JSON", "writeOnly": True,
                                        "contentMediaType": "application/json"}}},
]}


def test_variant_by_discriminator_and_messages_without_values():
    assert validate_credentials(CREDS_SCHEMA, {"type": "api_key", "api_key": "0123456789xyz"})
    with pytest.raises(CredentialsInvalid) as err:
        validate_credentials(CREDS_SCHEMA, {"type": "api_key", "api_key": "tiny-SECRET"[:6]})
    assert "api_key" in err.value.message and "must be at least 10 characters" in err.value.message and "tiny-S" not in err.value.message
    with pytest.raises(CredentialsInvalid) as err:
        validate_credentials(CREDS_SCHEMA, {"type": "oauth", "token": "abc-SECRET"})
    assert "api_key" in err.value.message and "service_account" in err.value.message and "SECRET" not in err.value.message
    with pytest.raises(CredentialsInvalid) as err:
        validate_credentials(CREDS_SCHEMA, {"type": "service_account", "service_account": "{not json SECRET"})
    assert "valid JSON" in err.value.message and "SECRET" not in err.value.message


def test_config_defaults_and_errors():
    schema = {"type": "object", "properties": {"mode": {"type": "string", "title": "Mode", "enum": ["a", "b"], "default": "a"},
                                               "n": {"type": "integer", "title": "N", "minimum": 1}}}
    assert validate_config(schema, {}) == {"mode": "a"}
    with pytest.raises(InvalidArguments):
        validate_config(schema, {"n": 0})
    with pytest.raises(InvalidArguments):
        validate_config(schema, {"mode": "zzz"})


def test_check_setup_schema_finds_problems():
    assert check_setup_schema(CREDS_SCHEMA, allow_one_of=True) == []
    bad = {"type": "object", "properties": {"password": {"type": "string", "title": "Password"},
                                            "nested": {"type": "object", "title": "N"}, "x": {"type": "string"}}}
    problems = " ".join(check_setup_schema(bad, allow_one_of=False))
    assert "password" in problems and "writeOnly" in problems and "nested" in problems and "x: missing title" in problems
    assert check_setup_schema(CREDS_SCHEMA, allow_one_of=False)  # oneOf only in credentials_schema
    assert check_setup_schema(KEY_SCHEMA, allow_one_of=True) == []
    annotated = {"type": "object", "properties": {
        "key": {"type": "string", "title": "K", "contentSchema": {"type": "object"}},
        "rules": {"type": "string", "title": "R", "contentMediaType": "application/json", "contentSchema": {"type": 7}},
        "dir": {"type": "integer", "title": "D", "format": "path"}}}
    problems = check_setup_schema(annotated, allow_one_of=False)
    assert problems[0] == 'key: contentSchema needs contentMediaType "application/json"'
    assert problems[1].startswith("rules: contentSchema is not a valid JSON Schema (") and problems[2] == 'dir: format "path" is for string fields'


def test_secret_paths_and_redact():
    assert secret_paths(CREDS_SCHEMA) == {"api_key", "service_account"}
    text = "connect postgresql://bob:hunter2@db:5432/x failed with key sk-LONGSECRET"
    out = redact(text, ["sk-LONGSECRET"])
    assert "hunter2" not in out and "sk-LONGSECRET" not in out and "bob:***@" in out


def test_secret_values_are_the_write_only_fields_5_5_1():
    schema = {"oneOf": [
        *CREDS_SCHEMA["oneOf"],
        {"title": "Server", "type": "object", "properties": {
            "type": {"type": "string", "const": "server"}, "host": {"type": "string", "title": "Host"},
            "user": {"type": "string", "title": "User"},
            "password": {"type": "string", "title": "Password", "writeOnly": True}}},
    ]}
    server = {"type": "server", "host": "db.internal", "user": "analyst", "password": "pw-SECRET"}
    # The host and user name the resource (titles, resource ids): only the writeOnly value is secret.
    assert secret_values(server, schema) == ["pw-SECRET"]
    key = '{"client_email": "bot@x.iam", "private_key": "-----BEGIN KEY-----"}'
    values = secret_values({"type": "service_account", "service_account": key}, schema)
    assert key in values and "-----BEGIN KEY-----" in values  # JSON text inside a secret field, too
    # ...but not the pasted key file's own discriminator: "service_account" is in every validation message.
    key = '{"type": "service_account", "private_key": "-----BEGIN KEY-----"}'
    assert "service_account" not in secret_values({"type": "service_account", "service_account": key}, schema)
    # A schema that marks nothing writeOnly gives no guarantee: every string but the discriminator.
    assert sorted(secret_values(server, {"type": "object", "properties": {}})) == ["analyst", "db.internal", "pw-SECRET"]
    assert secret_values(None, schema) == [] and secret_values({"password": "abc"}, schema) == []


def test_json_text_fields_accept_the_object_and_the_object_given_whole():
    """Issue 26.4: a variant's JSON-text field (contentMediaType application/json) given as an object, or the
    object given whole in place of the variant's one required JSON field, is normalized before validation."""
    import json

    schema = {"oneOf": [{"title": "SA", "type": "object", "required": ["type", "service_account"], "properties": {
        "type": {"type": "string", "const": "service_account"},
        "service_account": {"type": "string", "title": "Key", "contentMediaType": "application/json", "writeOnly": True}}}]}
    key = {"type": "service_account", "client_email": "a@b.iam", "private_key": "PRIVATE-KEY-TEXT", "private_key_id": "kid-123"}
    whole = validate_credentials(schema, key)
    as_object = validate_credentials(schema, {"type": "service_account", "service_account": key})
    assert whole == as_object == {"type": "service_account", "service_account": json.dumps(key)}
    assert set(secret_values(whole, schema)) == {json.dumps(key), "PRIVATE-KEY-TEXT", "kid-123"}  # not a@b.iam, not type
    with pytest.raises(CredentialsInvalid, match="missing required field"):
        validate_credentials(schema, {"type": "service_account"})


# --- issue 34.1: JSON in a string checked against its contentSchema; 34.2: path fields -----------------------

KEY_SCHEMA = {"oneOf": [{"title": "Key file", "type": "object", "required": ["type", "key"], "properties": {
    "type": {"type": "string", "const": "key_file"},
    "key": {"type": "string", "title": "Key JSON", "writeOnly": True, "contentMediaType": "application/json",
            "contentSchema": {
                "type": "object", "required": ["account", "secret"],
                "description": "expected: the key file with account and secret",
                "properties": {"kind": {"const": "key", "description": "this is not a key file."},
                               "secret": {"type": "string"}},
                "patternProperties": {"^client$": {"not": {}, "description": "this is a client file: sign in instead."}}}}}}]}
DISTINCT = "q9-DISTINCT-SECRET-VALUE"


@pytest.mark.parametrize("given, expected", [
    ({"account": "a", "secret": DISTINCT}, None),
    ({"account": "a"}, "The credentials are not valid: key lacks secret (expected: the key file with account and secret)."),
    ({"account": "a", "secret": 7}, "key.secret must be a string (expected: the key file with account and secret)."),
    ([DISTINCT], "key must be a JSON object (expected: the key file with account and secret)."),
    ({"kind": DISTINCT, "account": "a", "secret": DISTINCT}, "The credentials are not valid: key: this is not a key file."),
    ({"client": {"id": "x", "secret": DISTINCT}}, "The credentials are not valid: key: this is a client file: sign in instead."),
])
def test_json_text_is_checked_against_its_content_schema_without_values(given, expected):
    import json

    credentials = {"type": "key_file", "key": json.dumps(given)}
    if expected is None:
        assert validate_credentials(KEY_SCHEMA, credentials) == credentials
        return
    with pytest.raises(CredentialsInvalid) as err:
        validate_credentials(KEY_SCHEMA, credentials)
    assert expected in err.value.message and DISTINCT not in err.value.message
    assert "Ask the user" not in err.value.message  # 10.3: read by a person, in a terminal or on a page


def test_config_json_text_with_a_content_schema_is_invalid_arguments():
    schema = {"type": "object", "properties": {"rules": {
        "type": "string", "title": "Rules", "contentMediaType": "application/json",
        "contentSchema": {"type": "array", "items": {"type": "object", "required": ["pattern"]}}}}}
    assert validate_config(schema, {"rules": '[{"pattern": "x"}]'})
    with pytest.raises(InvalidArguments, match=r"rules\.0 lacks pattern"):
        validate_config(schema, {"rules": '[{"mode": "full"}]'})


def test_credentials_without_their_discriminator_say_so():
    with pytest.raises(CredentialsInvalid) as err:
        validate_credentials(CREDS_SCHEMA, {"installed": {"client_secret": DISTINCT}})
    assert err.value.message == "The credentials have no type: it must be one of api_key, service_account."


def test_path_fields_follow_the_variant_and_absolute_paths_join_the_base(tmp_path):
    from analytics_acp.schemas import absolute_paths, path_fields

    schema = {"oneOf": [
        {"title": "File", "type": "object", "properties": {
            "type": {"const": "file"}, "path": {"type": "string", "format": "path", "title": "File"},
            "note": {"type": "string", "title": "Note"}}},
        {"title": "URL", "type": "object", "properties": {"type": {"const": "url"}, "url": {"type": "string", "title": "URL"}}},
    ]}
    assert path_fields(schema, {"type": "file", "path": "data/x.db", "note": "n"}) == ["path"]
    assert path_fields(schema, {"type": "file", "path": {"file": "ref"}}) == ["path"]  # a host reference is still the field
    assert path_fields(schema, {"type": "file"}) == []  # absent: nothing to resolve
    assert path_fields(schema, {"type": "url", "path": "x"}) == []  # the url variant has no path field
    assert path_fields(schema, {"type": "other", "path": "x"}) == [] and path_fields(schema, None) == []
    flat = {"type": "object", "properties": {"exe": {"type": "string", "format": "path", "title": "Exe"}}}
    assert path_fields(flat, {"exe": "/usr/bin/x"}) == ["exe"] and path_fields({"type": "object"}, {"exe": "x"}) == []
    given = {"type": "file", "path": "data/../data/x.db", "note": "keep/me"}
    assert absolute_paths(schema, given, tmp_path) == {"type": "file", "path": str(tmp_path / "data" / "x.db"), "note": "keep/me"}
    assert absolute_paths(schema, {"type": "file", "path": "/abs/x.db"}, tmp_path)["path"] == "/abs/x.db"
    assert absolute_paths(schema, {"type": "file", "path": {"file": "k"}}, tmp_path)["path"] == {"file": "k"}
    from pathlib import Path

    assert absolute_paths(schema, {"type": "file", "path": "~/x.db"}, tmp_path)["path"] == str(Path.home() / "x.db")


def test_check_offline_is_what_a_host_checks_without_the_server():
    from analytics_acp.setup_check import check_offline

    cap = {"credentials_schema": CREDS_SCHEMA, "config_schema": {"type": "object", "properties": {
        "n": {"type": "integer", "title": "N", "minimum": 1}}}, "table_catalog": [{"name": "events", "title": "E"}]}
    good = {"type": "api_key", "api_key": "0123456789" + DISTINCT}
    assert check_offline(cap, {"credentials": good, "row_limit": 10, "tables": ["events"]}) is None
    cases = [({}, "ACP_CREDENTIALS_MISSING", "one of: Key, Service account"),
             ({"credentials": good, "row_limit": 5001}, "ACP_INVALID_LIMIT", "row_limit"),
             ({"credentials": {"type": "api_key", "api_key": DISTINCT[:5]}}, "ACP_CREDENTIALS_INVALID", "api_key"),
             ({"credentials": good, "config": {"n": 0}}, "ACP_INVALID_ARGUMENTS", "n must be at least 1"),
             ({"credentials": good, "tables": ["nope"]}, "ACP_INVALID_ARGUMENTS", "Valid tables: events")]
    for setup, name, needle in cases:
        error = check_offline(cap, setup)
        assert error is not None and error.name == name and needle in error.message, (setup, error)
        assert DISTINCT not in error.message
    assert check_offline({"credentials_schema": {"type": "object", "properties": {}}}, {}) is None  # nothing needed


def test_validated_configs_are_remembered_per_schema_object_and_never_shared():
    """Issue 39 (bench case 4b): every tools/call validates the session's config again; valid configs are
    remembered per schema object. A remembered answer never stands for another schema, never for an invalid
    config, and a caller changing the dict it got changes nothing for the next call."""
    import pytest
    from analytics_acp.errors import InvalidArguments
    from analytics_acp.schemas import validate_config

    loose = {"type": "object", "properties": {"n": {"type": "integer", "default": 3}, "mode": {"type": "string"}}}
    strict = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 5}}, "required": ["n"]}
    assert validate_config(loose, {"mode": "a"}) == {"mode": "a", "n": 3}
    got = validate_config(loose, {"mode": "a"})
    assert got == {"mode": "a", "n": 3}
    got["n"] = 99
    assert validate_config(loose, {"mode": "a"}) == {"mode": "a", "n": 3}
    assert validate_config(loose, {"n": 9}) == {"n": 9}
    with pytest.raises(InvalidArguments, match="n"):  # the same config, another schema: checked again
        validate_config(strict, {"n": 9})
    for _ in range(2):  # an invalid config is refused every time, never remembered
        with pytest.raises(InvalidArguments):
            validate_config(loose, {"n": "x"})
    with pytest.raises(InvalidArguments):  # not plain JSON (past 64 bits): validated without the memo
        validate_config(strict, {"n": 2**70})
