"""Constants shared by the declaration and the tool modules of `bigquery`: a leaf module, so the declaration
imports no tool module (client.py, costs.py) and no tool module imports declaration.py."""

from __future__ import annotations

SCOPES = ["https://www.googleapis.com/auth/bigquery"]
LEVELS = ["project", "dataset", "table"]  # resource_id levels (6.1); resource_ids.py parses them
DEFAULT_PRICE_PER_TIB_USD = 6.25  # on-demand USD per TiB processed (9.1); config.price_per_tib_usd overrides it
