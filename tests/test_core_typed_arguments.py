"""Typed tool arguments (issue 38.1): one model per tool, its schema published small, parsed once by the core.

- the core parses the arguments once and the tool, the cost estimate and around_tool_call get the same typed object;
- a cross-field validator's refusal is ACP_INVALID_ARGUMENTS (-32017, 12.1) with the validator's words;
- refusals name the field and the rule, never the value;
- a published schema has no titles, $defs/$ref or null unions and keeps its x-acp-* annotations (every connector);
- a ToolSpec written the old way (a hand-written input_schema) is a load error naming the change, for a connector's
  own tools and for an extension plugin's alike.
"""

from __future__ import annotations

import types
from typing import Any, Literal

import anyio
import pytest
from analytics_acp import (
    NO_RESOURCE,
    ConnectorInfo,
    CostEstimate,
    CostSpec,
    EndDate,
    Extraction,
    InvalidArguments,
    NotBlank,
    SqlText,
    StartDate,
    TableRef,
    ToolArguments,
    ToolSpec,
    WriteTableArguments,
    hookimpl,
)
from analytics_acp.calls import ConnectorRuntime
from analytics_acp.constants import ACP_URL_ANNOTATION
from analytics_acp.context import ClientInfo
from analytics_acp.effective import SessionConfig
from analytics_acp.plugins import available_connectors, load_connector
from analytics_acp.runtime_tools import tool_list
from core_helpers import InstalledEntryPoints
from pydantic import BaseModel, Field, model_validator

ACP = ClientInfo(acp=True, version="1.0", stores_system_data=True)
SECRET = "sk-live-4f9a1c77e2"
PARSES: list[str] = []  # one entry per validation of Window (the model validator runs once per parse)
SEEN: dict[str, Any] = {}


class Step(ToolArguments):
    kind: Literal["click", "wait"]
    ms: int | None = Field(None, ge=0, le=1000)


class Window(ToolArguments):
    start_date: StartDate | None = Field(None, description="First day.")
    end_date: EndDate | None = Field(None, description="Last day.")
    sql: SqlText | None = Field(None, description="A query.")
    source: TableRef | None = Field(None, description="A host table.")
    url: str | None = Field(None, description="A page.", json_schema_extra={ACP_URL_ANNOTATION: ["^https?://"]})
    limit: int = Field(10, ge=1, le=100, description="Rows.")
    steps: list[Step] = Field(default_factory=list, max_length=3, description="Steps.")
    label: NotBlank | None = None

    @model_validator(mode="after")
    def _both_or_neither(self) -> Window:
        PARSES.append("Window")
        if bool(self.start_date) != bool(self.end_date):
            raise ValueError("Give both start_date and end_date, or neither.")
        return self


def _run(arguments: Window, ctx: Any) -> Extraction:
    SEEN["run"] = arguments
    return Extraction(rows=[{"limit": arguments.limit, "steps": len(arguments.steps)}], description="Rows.")


class _Connector:
    """A connector module: one paid tool (so estimate_cost sees the arguments too)."""

    @staticmethod
    @hookimpl
    def connector_declaration() -> ConnectorInfo:
        return ConnectorInfo(id="typed", name="Typed", version="0", description="d", resource_id=NO_RESOURCE,
                             cost=CostSpec(model="per_query"),
                             tools=[ToolSpec(name="rows", description="Rows.", run=_run, arguments=Window,
                                             kind="extraction", paid=True, needs_resource=False, needs_credentials=False)])

    @staticmethod
    @hookimpl
    def estimate_cost(tool: ToolSpec, arguments: Window, ctx: Any) -> CostEstimate:
        SEEN["estimate"] = arguments
        return CostEstimate(usd=0)

    @staticmethod
    @hookimpl(wrapper=True)
    def around_tool_call(tool: ToolSpec, arguments: Window, ctx: Any) -> Any:
        SEEN["around"] = arguments
        return (yield)


def _module(name: str, *objects: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    for obj in objects:
        for attr in dir(obj):
            if not attr.startswith("_"):
                setattr(module, attr, getattr(obj, attr))
    return module


@pytest.fixture(scope="module")
def runtime() -> ConnectorRuntime:
    return ConnectorRuntime(load_connector(_module("typed_connector", _Connector), extensions=False))


def _call(runtime: ConnectorRuntime, arguments: dict[str, Any]) -> dict[str, Any]:
    return anyio.run(lambda: runtime.call("rows", arguments, {}, SessionConfig(), ACP))


def test_the_core_parses_once_and_every_hook_gets_the_same_typed_object(runtime):
    PARSES.clear()
    SEEN.clear()
    result = _call(runtime, {"start_date": "2026-01-01", "end_date": "today", "steps": [{"kind": "wait", "ms": 5}]})
    assert result["isError"] is False, result
    assert PARSES == ["Window"]  # validated once, in the core
    assert isinstance(SEEN["run"], Window) and SEEN["run"].limit == 10  # typed, defaults applied
    assert isinstance(SEEN["run"].steps[0], Step) and SEEN["run"].steps[0].ms == 5
    assert SEEN["estimate"] is SEEN["run"] and SEEN["around"] is SEEN["run"]  # the one object, not parsed again


def test_a_cross_field_refusal_is_typed_and_the_tool_never_runs(runtime):
    SEEN.clear()
    result = _call(runtime, {"start_date": "2026-01-01"})
    error = result["_meta"]["acp"]["error"]
    assert result["isError"] and error["code"] == -32017 and error["name"] == "ACP_INVALID_ARGUMENTS"
    assert error["message"] == "Give both start_date and end_date, or neither."
    assert SEEN == {}  # neither the estimate nor the tool ran


@pytest.mark.parametrize("arguments, message", [
    ({"limit": 0}, "Invalid limit: must be at least 1."),
    ({"limit": 101}, "Invalid limit: must be at most 100."),
    ({"limit": "7"}, "Invalid limit: must be of type integer."),  # JSON types, strictly
    ({"limit": 3.0}, "Invalid limit: must be of type integer."),
    ({"limit": True}, "Invalid limit: must be of type integer."),
    ({"steps": [{"ms": 5}]}, "Invalid steps.0: missing required argument(s) kind."),
    ({"steps": [{"kind": "hover"}]}, "Invalid steps.0.kind: must be one of click, wait."),
    ({"steps": [{"kind": "wait", "js": SECRET}]}, "Invalid steps.0: unknown key js. Accepted: kind, ms."),
    ({"steps": [{"kind": "wait"}] * 4}, "Invalid steps: must have at most 3 item(s)."),
    ({"steps": "click"}, "Invalid steps: must be of type array."),
    ({"start_date": SECRET, "end_date": "today"}, "Invalid start_date: is not a valid date. Use YYYY-MM-DD"),
    ({"sql": "   "}, "Invalid sql: must not be empty."),
    ({"label": ""}, "Invalid label: must not be empty."),
    ({"limit": SECRET}, "Invalid limit: must be of type integer."),
    ({"bogus": SECRET}, "Unknown argument(s) bogus. Accepted arguments: start_date, end_date, sql, source, url, limit"),
    ({"credentials": {"api_key": SECRET}}, "credentials cannot be passed as tool arguments"),
    # JSON numbers the core cannot carry (orjson stops at 64-bit integers and writes NaN as null): refused by name,
    # with the field's own rule where it has one, never a TypeError turned ACP_UPSTREAM_ERROR or a silent null.
    ({"limit": 2**70}, "Invalid limit: must be at most 100."),
    ({"steps": [{"kind": "wait", "ms": -(2**64)}]}, "Invalid steps.0.ms: must be at least 0."),
    ({"label": 2**64}, "Invalid label: must be of type string."),
    ({"limit": float("nan")}, "Invalid limit: must be a finite number."),
    ({"steps": [{"kind": "wait", "ms": float("inf")}]}, "Invalid steps.0.ms: must be a finite number."),
])
def test_refusals_name_the_field_and_the_rule_never_the_value(runtime, arguments, message):
    result = _call(runtime, arguments)
    error = result["_meta"]["acp"]["error"]
    assert error["name"] == "ACP_INVALID_ARGUMENTS" and error["message"].startswith(message), error["message"]
    assert SECRET not in error["message"]


def test_a_top_level_null_is_an_omitted_argument():
    assert Window.parse({"limit": None, "steps": None, "start_date": None}).limit == 10
    with pytest.raises(InvalidArguments, match=r"^Invalid steps\.0\.ms: must be of type integer"):  # nested: not omitted
        Window.parse({"steps": [{"kind": "wait", "ms": "5"}]})


def test_an_integer_past_64_bits_is_refused_where_no_rule_bounds_it():
    class Count(ToolArguments):
        n: int
        tags: list[int] = []

    assert Count.parse({"n": 2**63 - 1}).n == 2**63 - 1
    with pytest.raises(InvalidArguments, match=r"^Invalid n: must be at most 9223372036854775807\.$"):
        Count.parse({"n": 2**63})
    with pytest.raises(InvalidArguments, match=r"^Invalid tags\.1: must be at least -9223372036854775808\.$"):
        Count.parse({"n": 1, "tags": [1, -(2**63) - 1]})


def test_a_union_refusal_names_the_accepted_types():
    class OneOrMany(ToolArguments):
        y: str | list[str]

    with pytest.raises(InvalidArguments, match=r"^Invalid y: must be of type string or array\.$"):
        OneOrMany.parse({"y": 3})


def _walk(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every schema node (not the property-name maps) with its path."""
    out: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        out.append((path, node))
        for key, value in node.items():
            if key == "properties":
                for name, prop in value.items():
                    out += _walk(prop, f"{path}.{name}")
            elif key in ("items", "anyOf", "oneOf", "allOf"):
                out += _walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            out += _walk(item, f"{path}[{i}]")
    return out


def _assert_small(schema: dict[str, Any], where: str) -> None:
    for path, node in _walk(schema):
        assert not {"title", "$defs", "$ref", "additionalProperties"} & node.keys(), (where, path, node)
        assert node.get("default", 0) is not None, (where, path)
        assert {"type": "null"} not in node.get("anyOf", []), (where, path)


def test_the_published_schema_is_small_and_keeps_the_acp_annotations(runtime):
    (tool,) = [t for t in tool_list(runtime.state) if t["name"] == "rows"]
    schema = tool["inputSchema"]
    _assert_small(schema, "rows")
    props = schema["properties"]
    assert props["start_date"] == {"type": "string", "description": "First day.", "x-acp-date": "start"}
    assert props["end_date"]["x-acp-date"] == "end"
    assert props["sql"] == {"type": "string", "description": "A query.", "contentMediaType": "application/sql",
                            "x-acp-date": "template"}
    assert props["source"] == {"type": "string", "description": "A host table.", "x-acp-input": "table_ref"}
    assert props["url"][ACP_URL_ANNOTATION] == ["^https?://"]
    assert props["limit"] == {"type": "integer", "maximum": 100, "minimum": 1, "default": 10, "description": "Rows."}
    assert props["steps"]["items"] == {"type": "object", "properties": {
        "kind": {"enum": ["click", "wait"], "type": "string"}, "ms": {"type": "integer", "maximum": 1000, "minimum": 0}},
        "required": ["kind"]}  # the nested model inlined, no docstring, no title
    assert "required" not in schema and "description" not in schema


@pytest.mark.parametrize("connector", sorted(available_connectors(include_tests=True)))
def test_every_connector_publishes_small_schemas(connector):
    loaded = load_connector(connector, extensions=False)
    for tool in tool_list(ConnectorRuntime(loaded).state):
        _assert_small(tool["inputSchema"], f"{connector}.{tool['name']}")


def _old_style_tool() -> ToolSpec:
    return ToolSpec(name="legacy", description="d", run=lambda a, c: None,
                    input_schema={"type": "object", "properties": {"n": {"type": "integer"}}})


def test_a_hand_written_input_schema_is_a_load_error_naming_the_change():
    def connector_declaration() -> ConnectorInfo:
        return ConnectorInfo(id="legacy", name="L", version="0", description="d", resource_id=NO_RESOURCE,
                             tools=[_old_style_tool()])

    module = types.ModuleType("legacy_connector")
    module.connector_declaration = hookimpl(connector_declaration)  # type: ignore[attr-defined]
    with pytest.raises(TypeError) as info:
        load_connector(module, extensions=False)
    text = str(info.value)
    assert "ToolSpec(name='legacy') declares input_schema by hand" in text
    assert "declare `arguments=<a ToolArguments model>` instead" in text and "typed tool arguments" in text


def test_a_hook_reading_the_arguments_as_a_dict_gets_an_error_naming_the_change():
    class OldStyle:
        """An extension written before typed arguments: its estimate reads a dict."""

        @staticmethod
        @hookimpl
        def estimate_cost(tool: ToolSpec, arguments: Any, ctx: Any) -> float:
            return 0.01 * int(arguments.get("limit", 10))

    loaded = load_connector(_module("typed_connector_old_hook", _Connector), extensions=False)
    loaded.pm.register(_module("old_style_extension", OldStyle))
    result = _call(ConnectorRuntime(loaded), {"limit": 3})
    error = result["_meta"]["acp"]["error"]
    assert error["name"] == "ACP_UPSTREAM_ERROR" and (
        "Tool arguments are a typed Window since analytics-acp 0.1, typed tool arguments, not a dict: read "
        "arguments.limit instead of arguments.get('limit')") in error["message"]
    parsed = Window.parse({"limit": 3})
    with pytest.raises(TypeError, match=r"read ctx\.resource_id \(the core resolves resource_id\) instead of "
                                        r"arguments\['resource_id'\]"):
        parsed["resource_id"]
    with pytest.raises(TypeError, match=r"read arguments\.sql instead of 'sql' in arguments"):
        "sql" in parsed  # noqa: B015
    assert parsed.limit == 3 and parsed.given() == {"limit": 3}


def test_a_tool_spec_can_be_copied_with_dataclasses_replace():
    import dataclasses

    tool = ToolSpec(name="rows", description="Rows.", run=_run, arguments=Window)
    copy = dataclasses.replace(tool, title="Rows again")  # was the "declares input_schema by hand" TypeError
    assert copy.title == "Rows again" and copy.arguments is Window and copy.input_schema is None
    assert copy == dataclasses.replace(copy)
    with pytest.raises(TypeError, match="declares input_schema by hand"):
        dataclasses.replace(tool, input_schema={"type": "object"})


def test_an_extension_plugin_tool_follows_the_same_rule(monkeypatch):
    """Decision (issue 38.1): an extension's tools are published and called like a connector's, so they declare an
    argument model too; the old form fails the load the same way."""
    from analytics_acp import plugins

    extension = types.ModuleType("legacy_extension")
    extension.register_tools = hookimpl(lambda register: register(_old_style_tool()))  # type: ignore[attr-defined]

    class EntryPoint:
        name = "legacy"
        group = plugins.PLUGIN_GROUP

        def load(self) -> types.ModuleType:
            return extension

    monkeypatch.setattr(plugins, "entry_points", lambda: InstalledEntryPoints(EntryPoint()))
    with pytest.raises(TypeError, match="declares input_schema by hand"):
        load_connector(_module("typed_connector_ext", _Connector))


@pytest.mark.parametrize("connector, tool", [("databases", "insert_rows"), ("bigquery", "load_rows")])
def test_tools_that_write_a_host_dataset_share_one_argument_model(connector, tool):
    model = load_connector(connector, extensions=False).tools[tool].arguments
    assert issubclass(model, WriteTableArguments)
    assert list(model.published_schema()["properties"])[:3] == ["table_ref", "table", "create_if_missing"]


def test_arguments_must_be_a_tool_arguments_model_without_the_core_s_own_names():
    class Plain(BaseModel):
        n: int

    with pytest.raises(TypeError, match="arguments must be a subclass of analytics_acp.ToolArguments"):
        ToolSpec(name="plain", description="d", run=_run, arguments=Plain)  # type: ignore[arg-type]

    class Clash(ToolArguments):
        resource_id: str

    with pytest.raises(TypeError, match="resource_id must not be declared in the argument model"):
        ToolSpec(name="clash", description="d", run=_run, arguments=Clash)


# tools/list of each connector as the SDK serializes it, in bytes, measured on main before typed arguments
# (2026-12-06, hand-written schemas). Generated schemas must not make it larger (issue 38.1).
TOOLS_LIST_BYTES_BEFORE = {"databases": 3471, "prediction": 3811, "browser": 3941, "ga4": 8403, "gsc": 6187,
                           "bigquery": 3668, "example": 5395}


@pytest.mark.parametrize("connector", sorted(TOOLS_LIST_BYTES_BEFORE))
def test_tools_list_is_no_larger_than_with_hand_written_schemas(connector):
    import mcp_types

    tools = tool_list(ConnectorRuntime(load_connector(connector, extensions=False)).state)
    listed = mcp_types.ListToolsResult(tools=[mcp_types.Tool.model_validate(t) for t in tools])
    size = len(listed.model_dump_json(by_alias=True, exclude_none=True).encode())
    assert size <= TOOLS_LIST_BYTES_BEFORE[connector], (connector, size)
