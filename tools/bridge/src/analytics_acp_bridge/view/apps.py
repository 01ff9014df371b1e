"""MCP Apps (extension ``io.modelcontextprotocol/ui``, 2026-01-26) in the bridge: the dataset view, for clients
that negotiate it (issue 36.3).

A client whose initialize capabilities list the extension with ``text/html;profile=mcp-app`` gets, on its
connection only: the extension in the server's capabilities; ``_meta.ui.resourceUri`` on the tools whose
results are datasets (every extraction, a source's tools that read a dataset through ``table_ref``, and
acp_query); the two app-only tools (``_meta.ui.visibility: ["app"]``: hosts never offer them to the model,
and the bridge's texts and skills never name them); the ``ui://analytics-acp/dataset`` resource; and
``_meta["analytics-acp/view"]`` on such results, naming the datasets the view shows. The text blocks of
every result are the same for both kinds of client. A client that does not negotiate it sees nothing new:
no extension, no ``_meta.ui``, no app-only tool (calling one is an unknown tool), no ``ui://`` resource.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path
from typing import Any

import anyio
from analytics_acp.errors import InvalidArguments
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

from .pages import DatasetView

VIEW_URI = "ui://analytics-acp/dataset"
RESULT_KEY = "analytics-acp/view"  # the result _meta key naming the datasets to show
ASSET = Path(__file__).resolve().parent / "dataset.html"
_APP_ONLY = {"resourceUri": VIEW_URI, "visibility": ["app"]}
_DATASET_ID = {"type": "string"}

# Hosts keep these from the model (visibility ["app"]); short, like every tool (tools/list, issue 23.3).
APP_TOOLS: list[dict[str, Any]] = [
    {
        "name": "acp_dataset_page",
        "description": "Dataset view: a window of a dataset's typed rows (offset or cursor), sorted, filtered.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "dataset_id": _DATASET_ID,
                "offset": {"type": "integer"},
                "cursor": {"type": "string"},
                "limit": {"type": "integer"},
                "sort": {"type": "object", "properties": {"column": {"type": "string"}, "desc": {"type": "boolean"}}},
                "filter": {"type": "string"},
            },
            "required": ["dataset_id"],
        },
        "_meta": {"ui": _APP_ONLY},
    },
    {
        "name": "acp_dataset_summary",
        "description": "Dataset view: a dataset's card, typed columns and chart.",
        "inputSchema": {"type": "object", "properties": {"dataset_id": _DATASET_ID, "y": {"type": "string"}},
                        "required": ["dataset_id"]},
        "_meta": {"ui": _APP_ONLY},
    },
]
APP_NAMES = {t["name"] for t in APP_TOOLS}
_ARGUMENTS = {t["name"]: set(t["inputSchema"]["properties"]) for t in APP_TOOLS}


async def call(view: DatasetView, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The answer of an app-only tool (a page or a dataset's card), read in a worker thread; typed errors raise."""
    unknown = sorted(set(arguments) - _ARGUMENTS[name])
    if unknown:
        raise InvalidArguments(f"{name} takes {', '.join(sorted(_ARGUMENTS[name]))}; not {', '.join(unknown)}.")
    dataset_id = arguments.get("dataset_id")
    if name == "acp_dataset_summary":
        return await anyio.to_thread.run_sync(lambda: view.summary(dataset_id, y=arguments.get("y")))
    options = {k: arguments[k] for k in ("offset", "cursor", "limit", "sort", "filter") if arguments.get(k) is not None}
    return await anyio.to_thread.run_sync(lambda: view.page(dataset_id, **options))


def negotiated(capabilities: Any) -> bool:
    """True when the client's initialize ``capabilities`` (raw dict or the SDK's model) list the extension
    with the view's MIME type, as ``mcp.server.apps.client_supports_apps`` decides for a request context."""
    if capabilities is None:
        return False
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else getattr(capabilities, "extensions", None)
    settings = extensions.get(EXTENSION_ID) if isinstance(extensions, dict) else None
    mime_types = settings.get("mimeTypes") if isinstance(settings, dict) else None
    return isinstance(mime_types, list) and APP_MIME_TYPE in mime_types


def advertise(result: dict[str, Any]) -> dict[str, Any]:
    """An initialize result that declares the extension (no settings) beside the server's other capabilities."""
    out = dict(result)
    capabilities = dict(out.get("capabilities") or {})
    capabilities["extensions"] = {**(capabilities.get("extensions") or {}), EXTENSION_ID: {}}
    out["capabilities"] = capabilities
    return out


def tools_for_apps(tools: list[dict[str, Any]], viewed: set[str]) -> list[dict[str, Any]]:
    """The published tools as an MCP Apps client sees them: the view on ``viewed`` ones, then the app-only tools."""
    out = []
    for tool in tools:
        if tool["name"] in viewed:
            tool = {**tool, "_meta": {**(tool.get("_meta") or {}), "ui": {"resourceUri": VIEW_URI}}}
        out.append(tool)
    return out + copy.deepcopy(APP_TOOLS)


def result_meta(datasets: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``_meta`` of a viewed tool's result: the datasets to show, one tab each."""
    return {RESULT_KEY: {"datasets": datasets}}


@lru_cache(maxsize=1)
def view_html() -> str:
    """The view (one self-contained HTML file shipped in this package)."""
    return ASSET.read_text(encoding="utf-8")


def resource() -> dict[str, Any]:
    """The resources/list entry of the view."""
    return {"uri": VIEW_URI, "name": "dataset-view", "title": "Dataset view", "mimeType": APP_MIME_TYPE,
            "description": "The whole table of a dataset of acp-data: paged, sorted, filtered and charted."}


def read(uri: str) -> dict[str, Any] | None:
    """The resources/read content of the view, or None for any other URI. No ``ui.csp``: the view needs no
    network, so hosts apply the extension's restrictive default."""
    if uri != VIEW_URI:
        return None
    return {"uri": VIEW_URI, "mimeType": APP_MIME_TYPE, "text": view_html(), "_meta": {"ui": {"prefersBorder": True}}}
