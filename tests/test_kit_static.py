"""The kit's offline checks: setup schemas (5.5), English heuristics (5.5.0), wire value types (8.6),
normative notices (8.2) and the secret scan helpers (10.1)."""

import pytest
from analytics_acp.kit.responses import normative_notice
from analytics_acp.kit.static import leaked, mask, secret_strings, setup_schema_problems, spanish_hits, value_matches

API_KEY = {"type": "string", "title": "API key", "writeOnly": True}


def variant(const, **props):
    return {"title": const, "type": "object", "properties": {"type": {"type": "string", "const": const}, **props},
            "required": ["type"]}


def test_valid_setup_schemas_have_no_problems():
    assert setup_schema_problems({"oneOf": [variant("api_key", api_key=API_KEY), variant("public")]}, credentials=True) == []
    assert setup_schema_problems({"type": "object", "properties": {}}, credentials=True) == []
    config = {"type": "object", "properties": {"region": {"type": "string", "title": "Region", "enum": ["eu", "us"]}}}
    assert setup_schema_problems(config, credentials=False) == []


@pytest.mark.parametrize(
    "schema, credentials, fragment",
    [
        ({"type": "object", "properties": {"nested": {"type": "object", "title": "N"}}}, False, "no nested objects"),
        ({"type": "object", "properties": {"list": {"type": "array", "title": "L"}}}, False, "no nested objects"),
        ({"type": "object", "properties": {"region": {"type": "string"}}}, False, "has no title"),
        ({"type": "object", "properties": {"api_key": {"type": "string", "title": "Key"}}}, True, "not writeOnly"),
        ({"type": "object", "properties": {"password": {"type": "string", "title": "P"}}}, True, "not writeOnly"),
        ({"oneOf": [{"title": "A", "type": "object", "properties": {"key": API_KEY}}]}, True, "no const discriminator"),
        ({"oneOf": [variant("a"), variant("a")]}, True, "share a discriminator"),
        ({"oneOf": [variant("a")]}, False, "only allowed in credentials_schema"),
        ({"type": "object", "properties": {}, "required": ["x"]}, False, "required 'x' is not a property"),
    ],
)
def test_invalid_setup_schemas_are_reported(schema, credentials, fragment):
    problems = setup_schema_problems(schema, credentials=credentials)
    assert any(fragment in p for p in problems), problems


@pytest.mark.parametrize(
    "text",
    ["Showing 25 of 254 extracted rows.", "Orders of an account (one row per order) in a date window.",
     "Account id (acctNN), optionally followed by .table.", "Orders acct01 · 2026-01-01→2026-01-31", "Truncated…"],
)
def test_english_texts_pass(text):
    assert spanish_hits(text) == []


@pytest.mark.parametrize(
    "text",
    ["Mostrando 25 de 254 filas extraídas.", "Falta el recurso para la consulta", "¿Qué tabla?",
     "Devuelve las filas de la tabla"],
)
def test_spanish_texts_are_caught(text):
    assert spanish_hits(text)


@pytest.mark.parametrize(
    "value, column_type, ok",
    [
        (3, "integer", True), (3.5, "integer", False), (True, "integer", False), ("3", "integer", False),
        (3, "number", True), (2.5, "number", True), ("2.5", "number", False),
        ("2026-01-02", "date", True), ("20260102", "date", False),
        ("2026-01-02T10:00:00Z", "datetime", True), ("yesterday", "datetime", False),
        (False, "boolean", True), (0, "boolean", False), ("x", "string", True), (1, "string", False),
        (None, "integer", True), ({"a": 1}, "json", True),
    ],
)
def test_value_matches_the_declared_type(value, column_type, ok):
    assert value_matches(value, column_type) is ok


def test_normative_notices():
    assert normative_notice(0, 0) == "The query returned no rows."
    assert normative_notice(7, 7) == "Showing all 7 extracted rows."
    assert normative_notice(254, 25) == "Showing 25 of 254 extracted rows."


def test_secret_strings_and_masking():
    creds = {"type": "service_account", "service_account": '{"private_key": "-----KEY-----"}', "short": "abc"}
    secrets = secret_strings(creds)
    # No schema, so nothing is known to be safe: every long-enough string but the discriminator, JSON text included.
    assert secrets == ['{"private_key": "-----KEY-----"}', "-----KEY-----"]
    text = 'echo {"private_key": "-----KEY-----"}'
    assert leaked(text, secrets) == [mask(secrets[0]), mask(secrets[1])]
    assert "KEY" not in mask(secrets[0])


def test_secret_strings_follow_the_servers_write_only_fields():
    schema = {"oneOf": [{"title": "Server", "properties": {
        "type": {"const": "server"}, "host": {"type": "string"}, "user": {"type": "string"},
        "password": {"type": "string", "writeOnly": True}}}]}
    creds = {"type": "server", "host": "db.internal", "user": "analyst", "password": "s3cret-pw"}
    assert secret_strings(creds, schema) == ["s3cret-pw"]  # host and user name the resource; not secret (5.5.1)


def test_table_ref_rule_only_for_tools_that_work_on_a_host_table_alone():
    """6.1/8.8.2: a required table_ref with resource_id is flagged; an optional one (URLs as literals too) is not."""
    from analytics_acp.kit.handshake import _table_ref
    from analytics_acp.kit.model import Findings

    class _Run:
        findings = Findings()

    ref = {"type": "string", "x-acp-input": "table_ref"}
    props = {"resource_id": {"type": "string"}, "table_ref": ref, "urls": {"type": "array"}}
    optional = {"inputSchema": {"properties": props}}
    required = {"inputSchema": {"properties": props, "required": ["table_ref"]}}
    run = _Run()
    _table_ref(run, "inspect_urls", optional, props)
    _table_ref(run, "forecast", required, props)
    failed = [r.evidence for r in run.findings.results() if r.status == "fail"]
    assert failed == ["forecast only reads a host table but publishes resource_id (6.2, 8.8.2)"]
