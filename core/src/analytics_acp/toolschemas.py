"""Published tool schemas (6.2, 7.2, 7.3, 8.7) and validation of the model's arguments."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .arguments import CORE_ARGUMENTS, ToolArguments
from .declarations import BlockSpec, ConnectorInfo, ToolSpec
from .effective import NEVER_ARGUMENTS, SYSTEM_KEYS
from .errors import InvalidArguments
from .rulewords import rule_words

# Published on every server and, through a host such as the bridge, once per source: brief (issue 23.3).
AUTOCONTEXT_DESCRIPTION = (
    "Call this first: without resource_id, the resources you can use; with one, the schema, key fields, frequent "
    "values and date ranges a request needs."
)
AUTOCONTEXT_DATA_DESCRIPTION = "Lists the autocontext blocks (id, content), for resource_id if given."
# A server without resources (resource_id format "none", 6.1) has no resource list to offer.
AUTOCONTEXT_DESCRIPTION_NO_RESOURCE = "Call this first: the context this source offers (blocks in autocontext_data)."
AUTOCONTEXT_DATA_DESCRIPTION_NO_RESOURCE = "Lists the autocontext blocks (id, content)."


def uses_resource(info: ConnectorInfo) -> bool:
    """False for servers whose resource_id format is "none" (6.1)."""
    return info.resource_id.format != "none"


def resource_property(info: ConnectorInfo) -> dict[str, Any]:
    """The injected resource_id property: a string whose description repeats resource_id.description (6.2)."""
    return {"type": "string", "description": info.resource_id.description}


def autocontext_schemas(info: ConnectorInfo, blocks: dict[str, BlockSpec]) -> tuple[dict[str, Any], dict[str, Any]]:
    """inputSchemas of autocontext (7.3, with the optional ``query`` of 6.3) and autocontext_data (7.2)."""
    ac: dict[str, Any] = {"type": "object", "properties": {}}
    data: dict[str, Any] = {"type": "object", "properties": {}}
    if uses_resource(info):
        ac["properties"]["resource_id"] = resource_property(info)
        data["properties"]["resource_id"] = resource_property(info)
    items: dict[str, Any] = {"type": "string"}
    if blocks:
        items["enum"] = list(blocks)
    ac["properties"]["request_data"] = {
        "type": "array",
        "items": items,
        "description": "Autocontext blocks to return (see autocontext_data). Empty or omitted = all.",
    }
    if uses_resource(info):
        ac["properties"]["query"] = {
            "type": "string",
            "description": "Search resources by name, group or id.",
        }
    return ac, data


def publish_schema(info: ConnectorInfo, tool: ToolSpec, tables_property: dict[str, Any] | None) -> dict[str, Any]:
    """The tool's inputSchema as published: its argument model's schema, resource_id injected when needed,
    catalog ``tables`` when covered (6.2, 8.7)."""
    schema = tool.arguments.published_schema()
    props = schema.setdefault("properties", {})
    if tool.needs_resource and uses_resource(info):
        props["resource_id"] = resource_property(info)
    if tables_property is not None:
        props["tables"] = tables_property
    return schema


def parse_tool_arguments(schema: dict[str, Any], tool: ToolSpec,
                         arguments: dict[str, Any]) -> tuple[ToolArguments, dict[str, Any]]:
    """The model's arguments parsed once into the tool's typed object, and the core's own (resource_id, tables).

    ``schema`` is the published one: names outside it are refused first, then the injected arguments are checked
    against their published properties and the rest parsed by the tool's model (ACP_INVALID_ARGUMENTS, 12.1).
    """
    check_argument_names(schema, arguments)
    core = {k: arguments[k] for k in CORE_ARGUMENTS if k in arguments}
    if core:
        props = schema.get("properties", {})
        validate_arguments({"type": "object", "properties": {k: props[k] for k in core}}, core)
    return tool.arguments.parse({k: v for k, v in arguments.items() if k not in core}), core


@lru_cache(maxsize=256)
def _validator(schema_key: str) -> Any:
    import json

    import jsonschema

    schema = json.loads(schema_key)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def check_argument_names(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """Refuse limits and credentials in arguments (5.4) and unknown arguments, listing the accepted ones."""
    props = schema.get("properties", {})
    system = sorted(k for k in arguments if k in NEVER_ARGUMENTS or (k in SYSTEM_KEYS and k not in props))
    if system:
        raise InvalidArguments(
            f"{', '.join(system)} cannot be passed as tool arguments: limits, credentials and configuration "
            "are set by the host, not by the model. Remove them and call again."
        )
    unknown = sorted(k for k in arguments if k not in props)
    if unknown and schema.get("additionalProperties", False) is not True:
        raise InvalidArguments(
            f"Unknown argument(s) {', '.join(unknown)}. Accepted arguments: {', '.join(props) or 'none'}."
        )


def validate_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """Check arguments against a schema the core itself publishes (the reserved tools, resource_id, tables);
    raise ACP_INVALID_ARGUMENTS (12.1). A connector tool's own arguments are parsed by its model instead."""
    import json

    check_argument_names(schema, arguments)
    validator = _validator(json.dumps(schema, sort_keys=True))
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        where = ".".join(str(p) for p in first.absolute_path) or "arguments"
        raise InvalidArguments(f"Invalid {where}: {_describe(first)}")


def _describe(error: Any) -> str:
    # Our own wording (rulewords.py, as a model's refusal): jsonschema messages echo whole values, which may be long.
    if error.validator == "required":
        missing = [m for m in error.validator_value if m not in (error.instance or {})]
        return f"missing required argument(s) {', '.join(missing)}."
    return f"{rule_words(error.validator, error.validator_value)}."
