"""How each source's tools are shown to the model (16.4, 11.5) and how calls map back.

``<source>__<tool>``, a ``[<label> · <ACP name>]`` description prefix, table_ref arguments
described as acp-data dataset ids, ``start_date``/``end_date`` added to tools with a template
argument (8.9: the bridge resolves and substitutes them, and never forwards them), and a line
on extraction tools saying the full table lands in acp-data.
"""

from __future__ import annotations

import copy
import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

from analytics_acp.constants import ACP_DATE_ANNOTATION, ACP_INPUT_ANNOTATION, ACP_INPUT_TABLE_REF
from analytics_acp.dates import DATE_DESCRIPTION, has_template, resolve_window, substitute_template
from analytics_acp.errors import InvalidArguments

SEPARATOR = "__"
# Every text here is repeated in tools/list for each source's tools: short (issue 23.3).
TABLE_REF_DESCRIPTION = "acp-data dataset id (acp_datasets), not rows or a query."
EXTRACTION_NOTE = "Full table saved in acp-data."
TEMPLATE_NOTE = "start_date/end_date fill {{start_date}}/{{end_date}}."
WINDOW_DESCRIPTIONS = {
    "start_date": f"First day: {DATE_DESCRIPTION}",
    "end_date": "Last day (inclusive), same forms.",
}
WINDOW_ARGS = ("start_date", "end_date")


@dataclass
class Route:
    """Where a published tool goes: the source, the ACP tool, and the bridge's own arguments."""

    public: str
    source: str
    tool: str
    extraction: bool = False
    template_args: list[str] = field(default_factory=list)
    window_added: bool = False
    table_args: list[str] = field(default_factory=list)  # arguments naming an acp-data dataset (8.8 table_ref)

    @property
    def datasets_shown(self) -> bool:
        """True when the tool's result is about datasets (it saves or reads one): the dataset view shows them."""
        return self.extraction or bool(self.table_args)


def public_name(source_id: str, tool: str) -> str:
    """The published name of a source's tool (16.4)."""
    return f"{source_id}{SEPARATOR}{tool}"


def rewrite_tool(tool: dict[str, Any], source_id: str, label: str, acp_name: str, extraction: bool) -> tuple[dict[str, Any], Route]:
    """The tool as the model sees it, and its route back to the ACP."""
    schema = copy.deepcopy(tool.get("inputSchema") or {"type": "object", "properties": {}})
    props: dict[str, Any] = schema.setdefault("properties", {})
    route = Route(public=public_name(source_id, tool["name"]), source=source_id, tool=tool["name"], extraction=extraction)
    for name, prop in props.items():
        if not isinstance(prop, dict):
            continue
        if prop.get(ACP_INPUT_ANNOTATION) == ACP_INPUT_TABLE_REF:
            route.table_args.append(name)
            # A second table argument (plot's forecast_ref) keeps the ACP's words for its role.
            role = (prop.get("description") or "").strip() if name != "table_ref" else ""
            prop["description"] = f"acp-data dataset id: {role}" if role else TABLE_REF_DESCRIPTION
        if prop.get(ACP_DATE_ANNOTATION) == "template":
            route.template_args.append(name)
    if route.template_args and not any(w in props for w in WINDOW_ARGS):
        route.window_added = True
        for name in route.template_args:
            prop = props[name]
            prop["description"] = f"{(prop.get('description') or '').rstrip()} {TEMPLATE_NOTE}".strip()
        for bound in WINDOW_ARGS:
            props[bound] = {"type": "string", "description": WINDOW_DESCRIPTIONS[bound]}
    _drop_acp_annotations(schema)
    description = (tool.get("description") or "").strip()
    text = f"[{label} · {acp_name}] {description}".rstrip()
    if extraction:
        text = f"{text}\n\n{EXTRACTION_NOTE}"
    out: dict[str, Any] = {"name": route.public, "description": text, "inputSchema": schema}
    for key in ("title", "annotations"):
        if tool.get(key) is not None:
            out[key] = tool[key]
    return out, route


def _drop_acp_annotations(node: Any) -> None:
    """Remove the ``x-acp-*`` keywords: they tell an ACP host (the bridge, which has acted on them) what to do,
    while the bridge's own clients are plain MCP (16.1); they only lengthened tools/list (issue 23.3)."""
    if isinstance(node, dict):
        for key in [k for k in node if isinstance(k, str) and k.startswith("x-acp-")]:
            del node[key]
        for value in node.values():
            _drop_acp_annotations(value)
    elif isinstance(node, list):
        for value in node:
            _drop_acp_annotations(value)


def forward_arguments(route: Route, arguments: dict[str, Any], today: _dt.date | None = None) -> dict[str, Any]:
    """The arguments the ACP receives: window resolved and substituted, the bridge's own keys removed."""
    args = dict(arguments or {})
    if not route.window_added:
        return args
    start, end = args.pop("start_date", None), args.pop("end_date", None)
    templated = [n for n in route.template_args if isinstance(args.get(n), str) and has_template(args[n])]
    if not templated:
        return args  # no markers: the query has no window (8.9), the dates are not needed
    missing = [start in (None, ""), end in (None, "")]
    if all(missing) and not route.extraction:
        return args  # an info tool (e.g. validate_sql) may take the markers as they are
    if any(missing):
        raise InvalidArguments(
            f"{templated[0]} uses {{{{start_date}}}}/{{{{end_date}}}}: pass start_date and end_date ({DATE_DESCRIPTION})"
        )
    s, e = resolve_window(str(start), str(end), today=today)
    for name in templated:
        args[name] = substitute_template(args[name], s, e)
    return args
