"""Setup schemas (5.5): variant choice, rule messages without values, defaults, schema checks, redaction."""

import pytest
from analytics_acp.errors import CredentialsInvalid, InvalidArguments
from analytics_acp.schemas import check_setup_schema, redact, secret_paths, validate_config, validate_credentials

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
