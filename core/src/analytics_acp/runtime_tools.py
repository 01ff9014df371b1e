"""What initialize and tools/list publish: the ACP capability (4.2) and the tool list (6.2, 7, 8.7)."""

from __future__ import annotations

from typing import Any

from .constants import ACP_PROTOCOL_VERSION, ACP_TOOL_AUTOCONTEXT, ACP_TOOL_AUTOCONTEXT_DATA
from .runtime_state import RuntimeState
from .toolschemas import (
    AUTOCONTEXT_DATA_DESCRIPTION,
    AUTOCONTEXT_DATA_DESCRIPTION_NO_RESOURCE,
    AUTOCONTEXT_DESCRIPTION,
    AUTOCONTEXT_DESCRIPTION_NO_RESOURCE,
    autocontext_schemas,
    uses_resource,
)


def capability(runtime: RuntimeState) -> dict[str, Any]:
    """``capabilities.experimental.acp`` of 4.2, from the connector's declaration."""
    info = runtime.info
    cap: dict[str, Any] = {
        "version": ACP_PROTOCOL_VERSION,
        "defaults": info.defaults.to_json(),
        "credentials_schema": info.credentials_schema,
        "resource_id": info.resource_id.to_json(),
        "autocontext": {"cache_ttl_s": info.cache_ttl_s, "delivery": list(info.delivery)},
        "cost": info.cost.to_json(),
        "extraction_tools": runtime.loaded.extraction_tools,
    }
    if info.config_schema is not None:
        cap["config_schema"] = info.config_schema
    if info.table_catalog:
        cap["table_catalog"] = [entry.to_json() for entry in info.table_catalog]
    return cap


def tool_list(runtime: RuntimeState) -> list[dict[str, Any]]:
    """tools/list: autocontext and autocontext_data always, then the connector's tools (2, 7.2, 7.3)."""
    ac_schema, data_schema = autocontext_schemas(runtime.info, runtime.loaded.blocks)
    resources = uses_resource(runtime.info)
    tools: list[dict[str, Any]] = [
        {
            "name": ACP_TOOL_AUTOCONTEXT,
            "title": "Autocontext",
            "description": AUTOCONTEXT_DESCRIPTION if resources else AUTOCONTEXT_DESCRIPTION_NO_RESOURCE,
            "inputSchema": ac_schema,
            "annotations": {"readOnlyHint": True},
        },
        {
            "name": ACP_TOOL_AUTOCONTEXT_DATA,
            "title": "Autocontext blocks",
            "description": AUTOCONTEXT_DATA_DESCRIPTION if resources else AUTOCONTEXT_DATA_DESCRIPTION_NO_RESOURCE,
            "inputSchema": data_schema,
            "annotations": {"readOnlyHint": True},
        },
    ]
    for tool in runtime.loaded.tools.values():
        entry: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "inputSchema": runtime.published_schema(tool),
            "annotations": {"readOnlyHint": tool.read_only_hint},
        }
        if tool.title:
            entry["title"] = tool.title
        tools.append(entry)
    return tools
