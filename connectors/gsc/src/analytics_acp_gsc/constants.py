"""Constants shared by the declaration (published schemas) and the tool modules of `gsc`: a leaf module, so tool
modules never import declaration.py and an enum the schema publishes is the one the request checks use."""

from __future__ import annotations

SCOPES = ["https://www.googleapis.com/auth/webmasters.readonly"]

DIMENSIONS = ["query", "page", "country", "device", "date", "hour", "searchAppearance"]
FILTER_DIMENSIONS = ["query", "page", "country", "device", "searchAppearance"]
OPERATORS = ["equals", "notEquals", "contains", "notContains", "includingRegex", "excludingRegex"]
SEARCH_TYPES = ["web", "image", "video", "news", "discover", "googleNews"]
AGGREGATION_TYPES = ["auto", "byPage", "byProperty", "byNewsShowcasePanel"]
DATA_STATES = ["final", "all", "hourly_all"]
