"""Constants shared by the declaration (published schemas) and the tool modules of `gsc`: a leaf module, so tool
modules never import declaration.py and an enum the schema publishes is the one the request checks use."""

from __future__ import annotations

from typing import Literal, get_args

SCOPES = ["https://www.googleapis.com/auth/webmasters.readonly"]
# resource_id format (6.1). Here, not in resource_ids.py, whose host pattern (a Unicode range) takes longer to
# compile than the rest of the declaration: serve reads the format, the pattern waits for the first resource_id.
FORMAT = "<https://example.com/> | sc-domain:example.com"

Dimension = Literal["query", "page", "country", "device", "date", "hour", "searchAppearance"]
FilterDimension = Literal["query", "page", "country", "device", "searchAppearance"]  # also compare_periods' dimensions
Operator = Literal["equals", "notEquals", "contains", "notContains", "includingRegex", "excludingRegex"]
SearchType = Literal["web", "image", "video", "news", "discover", "googleNews"]
AggregationType = Literal["auto", "byPage", "byProperty", "byNewsShowcasePanel"]
DataState = Literal["final", "all", "hourly_all"]

FILTER_DIMENSIONS: list[str] = list(get_args(FilterDimension))
OPERATORS: list[str] = list(get_args(Operator))
METRICS = ["clicks", "impressions", "ctr", "position"]
