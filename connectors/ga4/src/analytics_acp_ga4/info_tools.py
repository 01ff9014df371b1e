"""check_compatibility and get_metadata (info tools)."""

from __future__ import annotations

from typing import Any

from analytics_acp import CallContext, Info

from . import names
from .arguments import CompatibilityArguments, MetadataArguments
from .report import incompatible_fields

MAX_RESULTS = 60


def check_compatibility(arguments: CompatibilityArguments, ctx: CallContext) -> Info:
    """Which of the given fields can be requested together (checkCompatibility), after alias mapping and name checks."""
    warnings: list[str] = []
    metrics = names.apply_aliases(list(arguments.metrics), "metric", warnings)
    dimensions = names.apply_aliases(list(arguments.dimensions), "dimension", warnings)
    meta = names.metadata(ctx, ctx.require_resource_id())
    unknown = names.unknown_names_error(metrics, dimensions, meta)
    if unknown is not None:
        raise unknown
    clash = incompatible_fields(ctx, ctx.require_resource_id(), metrics, dimensions)
    data = {"compatible": not clash, "incompatible": clash,
            "compatible_fields": [n for n in [*dimensions, *metrics] if n not in clash],
            "metrics": metrics, "dimensions": dimensions}
    return Info(data=data, warnings=warnings, arguments={**arguments.given(), "metrics": metrics, "dimensions": dimensions},
                source={"property": f"properties/{ctx.resource_id}", "api": "analyticsdata.v1beta.checkCompatibility"})


def get_metadata(arguments: MetadataArguments, ctx: CallContext) -> Info:
    """Dimensions and metrics of the property (custom included), filtered by ``query`` over names and descriptions."""
    query = (arguments.query or "").strip().lower()
    kind, custom_only = arguments.kind, arguments.custom_only
    meta = names.metadata(ctx, ctx.require_resource_id())
    words = query.split()

    def pick(table: dict[str, Any], with_type: bool) -> list[dict[str, Any]]:
        out = []
        for entry in table.values():
            if custom_only and not entry["custom"]:
                continue
            text = f"{entry['api_name']} {entry['ui_name']} {entry['description']}".lower()
            if words and not all(w in text for w in words):
                continue
            item = {"api_name": entry["api_name"], "ui_name": entry["ui_name"], "description": entry["description"],
                    "category": entry["category"]}
            if with_type:
                item["type"] = entry["type"]
            if entry["custom"]:
                item["custom"] = True
            out.append(item)
        # Names starting with the query first, then the rest alphabetically.
        out.sort(key=lambda i: (not i["api_name"].lower().startswith(words[0]) if words else False, i["api_name"]))
        return out

    data: dict[str, Any] = {}
    warnings: list[str] = []
    for key, with_type in (("dimensions", False), ("metrics", True)):
        if kind in ("all", key):
            found = pick(meta[key], with_type)
            data[f"{key}_found"] = len(found)
            data[key] = found[:MAX_RESULTS]
            if len(found) > MAX_RESULTS:
                warnings.append(f"{len(found)} {key} match; showing {MAX_RESULTS}. Narrow the query.")
    return Info(data=data, warnings=warnings, arguments={**arguments.given(), "kind": kind},
                source={"property": f"properties/{ctx.resource_id}", "api": "analyticsdata.v1beta.getMetadata"})
