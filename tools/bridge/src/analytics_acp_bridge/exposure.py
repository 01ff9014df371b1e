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
TABLE_REF_DESCRIPTION = (
    "Id of a dataset in acp-data (as listed by acp_datasets, for example "
    "ventas_execute_sql_20261012_101630). Not the rows, not a CSV and not a query: the bridge resolves the rows."
)
EXTRACTION_NOTE = (
    "The bridge saves the full table in acp-data as a new dataset; you receive a sample and the dataset id, "
    "to use with acp_query (SQL over all rows) or as a table_ref."
)
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
            prop["description"] = TABLE_REF_DESCRIPTION
        if prop.get(ACP_DATE_ANNOTATION) == "template":
            route.template_args.append(name)
            base = (prop.get("description") or "").rstrip()
            prop["description"] = (
                f"{base} Pass start_date and end_date: the bridge replaces {{{{start_date}}}} and {{{{end_date}}}}."
            ).strip()
    if route.template_args and not any(w in props for w in WINDOW_ARGS):
        route.window_added = True
        for bound in WINDOW_ARGS:
            props[bound] = {
                "type": "string",
                "description": f"{'Start' if bound == 'start_date' else 'End'} of the date window "
                f"(inclusive) for {{{{{bound}}}}}: {DATE_DESCRIPTION}",
            }
    description = (tool.get("description") or "").strip()
    text = f"[{label} · {acp_name}] {description}".rstrip()
    if extraction:
        text = f"{text}\n\n{EXTRACTION_NOTE}"
    out: dict[str, Any] = {"name": route.public, "description": text, "inputSchema": schema}
    for key in ("title", "annotations"):
        if tool.get(key) is not None:
            out[key] = tool[key]
    return out, route


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
