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
    assert "api_key" in err.value.message and "minLength" in err.value.message and "tiny-S" not in err.value.message
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
