"""The form generator (5.5.1-5.5.5): schema -> fields -> typed values, with no ACP-specific code.

The saved-query editor (issue 37) reuses it for a tool's inputSchema (``lists=True``: arrays of primitives as
comma-separated lists, objects as JSON).
"""

from __future__ import annotations

import json

from analytics_acp_ui.forms import build_variants, parse
from analytics_acp_ui.forms.display import show_defaults, show_stored

SCHEMA = {"oneOf": [
    {"title": "Key", "type": "object", "required": ["type", "key"], "properties": {
        "type": {"const": "key"},
        "key": {"type": "string", "title": "API key", "writeOnly": True},
        "region": {"type": "string", "enum": ["eu", "us"], "enumNames": ["Europe", "United States"], "default": "eu"},
        "port": {"type": "integer", "title": "Port", "minimum": 1, "maximum": 65535},
        "ratio": {"type": "number", "title": "Ratio", "minimum": 0},
        "debug": {"type": "boolean", "title": "Debug", "default": False},
        "rules": {"type": "string", "title": "Rules", "contentMediaType": "application/json", "examples": ["[]"]},
        "mail": {"type": "string", "title": "Mail", "format": "email"},
        "name": {"type": "string", "title": "Name", "minLength": 2, "x-unknown": {"a": 1}},
    }},
    {"title": "Sign-in", "type": "object", "x-acp-login": {"provider": "google", "scopes": ["s1"]}, "properties": {
        "type": {"const": "oauth"},
        "refresh_token": {"type": "string", "writeOnly": True, "x-acp-filled": True},
        "email": {"type": "string", "title": "Account", "x-acp-filled": True},
        "note": {"type": "string", "title": "Note"},
    }},
    {"title": "Other login", "type": "object", "x-acp-login": {"provider": "somewhere"}, "properties": {
        "type": {"const": "other"}, "token": {"type": "string", "title": "Token", "x-acp-filled": True}}},
]}


def _get(values):
    return lambda name: values.get(name)


def test_fields_follow_the_schema_order_titles_and_keywords():
    key, signin, other = build_variants(SCHEMA, "credentials")
    assert [f.key for f in key.fields] == ["key", "region", "port", "ratio", "debug", "rules", "mail", "name"]
    assert key.consts == {"type": "key"} and key.selected and not signin.selected
    by = {f.key: f for f in key.fields}
    assert by["key"].kind == "password" and by["key"].secret and by["key"].required
    assert by["region"].title == "region" and by["region"].choices == [("eu", "Europe"), ("us", "United States")]
    assert (by["port"].kind, by["port"].minimum, by["port"].maximum, by["port"].step) == ("integer", 1, 65535, "1")
    assert by["rules"].kind == "json" and by["rules"].placeholder == "[]" and by["rules"].long_text
    assert by["mail"].html_type == "email" and by["name"].kind == "text" and by["name"].min_length == 2
    # 5.5.5: a provider this host implements hides the filled fields; another provider is ignored (fields painted)
    assert signin.login == {"provider": "google", "scopes": ["s1"]} and [f.key for f in signin.fields] == ["note"]
    assert signin.filled == ["refresh_token", "email"]
    assert other.login is None and [f.key for f in other.fields] == ["token"]
    show_defaults([key])
    assert by["region"].value == "eu" and not by["debug"].checked


def test_typed_values_only_the_chosen_variant_and_clear_errors():
    parsed = parse(SCHEMA, "credentials", _get({
        "credentials.variant": "0", "credentials.0.key": "abcd", "credentials.0.port": "5432", "credentials.0.ratio": "2",
        "credentials.0.rules": '[{"a": 1}]', "credentials.0.region": "us", "credentials.1.note": "not sent"}))
    assert parsed.errors == {}
    assert parsed.value == {"type": "key", "key": "abcd", "region": "us", "port": 5432, "ratio": 2.0, "debug": False,
                            "rules": '[{"a": 1}]'}  # 5.5.3: JSON travels as a string; empty optional fields omitted
    assert parsed.new_secrets == ["key"]
    bad = parse(SCHEMA, "credentials", _get({
        "credentials.0.port": "70000", "credentials.0.ratio": "x", "credentials.0.rules": "[1,", "credentials.0.mail": "nope",
        "credentials.0.name": "a", "credentials.0.region": "mars"}))
    assert bad.errors == {
        "credentials.0.key": "«API key» is required.",
        "credentials.0.region": "«region» must be one of: Europe, United States.",
        "credentials.0.port": "«Port» must be at most 65535.",
        "credentials.0.ratio": "«Ratio» must be a number.",
        "credentials.0.rules": "«Rules» is not valid JSON (line 1, column 4).",
        "credentials.0.mail": "«Mail» must be an email address.",
        "credentials.0.name": "«Name» must have at least 2 characters.",
    }


def test_a_stored_secret_is_shown_as_saved_and_kept_when_left_empty():
    stored = {"type": "key", "key": {"keyring": "src.key"}, "region": "us", "port": 5432}
    variants = build_variants(SCHEMA, "credentials")
    show_stored(variants, SCHEMA, stored)
    by = {f.key: f for f in variants[0].fields}
    assert by["key"].saved and by["key"].value == "" and by["port"].value == "5432"
    kept = parse(SCHEMA, "credentials", _get({"credentials.0.region": "us", "credentials.0.port": "5432"}), previous=stored)
    assert kept.value["key"] == {"keyring": "src.key"} and kept.new_secrets == []
    typed = parse(SCHEMA, "credentials", _get({"credentials.0.key": "new", "credentials.0.port": "1"}), previous=stored)
    assert typed.value["key"] == "new" and typed.new_secrets == ["key"]
    # another variant replaces the credentials: nothing of the old one is carried over
    other = parse(SCHEMA, "credentials", _get({"credentials.variant": "2", "credentials.2.token": "t"}), previous=stored)
    assert other.value == {"type": "other", "token": "t"}


def test_a_sign_in_fills_its_variant_and_is_required():
    missing = parse(SCHEMA, "credentials", _get({"credentials.variant": "1"}))
    assert "Sign in" in missing.errors["credentials.1.login"]
    filled = parse(SCHEMA, "credentials", _get({"credentials.variant": "1"}),
                   filled={"refresh_token": "r", "email": "a@b.c", "client_id": "not published by the variant"})
    assert filled.errors == {} and filled.value == {"type": "oauth", "refresh_token": "r", "email": "a@b.c"}
    assert filled.new_secrets == ["refresh_token"]


def test_an_input_schema_for_the_saved_query_editor():
    schema = {"type": "object", "required": ["sql"], "properties": {
        "sql": {"type": "string", "contentMediaType": "application/sql", "title": "SQL"},
        "metrics": {"type": "array", "items": {"type": "string", "enum": ["sessions", "users"]}},
        "days": {"type": "array", "items": {"type": "integer"}},
        "filter": {"type": "object"}}}
    (variant,) = build_variants(schema, "args", lists=True)
    kinds = {f.key: f.kind for f in variant.fields}
    assert kinds == {"sql": "textarea", "metrics": "list", "days": "list", "filter": "json"}
    parsed = parse(schema, "args", _get({"args.0.sql": "SELECT 1", "args.0.metrics": "sessions, users",
                                         "args.0.days": "1,2", "args.0.filter": '{"a": [1]}'}), lists=True)
    assert parsed.value == {"sql": "SELECT 1", "metrics": ["sessions", "users"], "days": [1, 2], "filter": {"a": [1]}}
    assert json.dumps(parsed.value)


def test_credentials_given_as_one_reference_are_kept_until_a_type_is_filled():
    stored = {"file": "/home/ana/.config/analytics-acp/google/ana@example.com.json"}  # what `login google` writes
    kept = parse(SCHEMA, "credentials", _get({"credentials.variant": "0"}), previous=stored)
    assert kept.kept and kept.value == stored and kept.errors == {}
    replaced = parse(SCHEMA, "credentials", _get({"credentials.0.key": "k"}), previous=stored)
    assert replaced.value == {"type": "key", "key": "k", "debug": False}
