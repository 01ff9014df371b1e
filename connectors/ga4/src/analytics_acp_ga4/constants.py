"""Constants shared by the declaration and the tool modules of `ga4` (a leaf: tool modules import this, never
declaration.py, so what is declared and what the tools use cannot drift apart)."""

from __future__ import annotations

SCOPES = ["https://www.googleapis.com/auth/analytics.readonly"]
SETTINGS_TTL_S = 24 * 3600  # property settings change rarely (15.1 blocks)
TRAFFIC_TTL_S = 6 * 3600  # 28-day traffic summaries; also the capability's cache_ttl_s (4.2: 21600)
