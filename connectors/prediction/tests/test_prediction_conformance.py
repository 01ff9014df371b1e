"""The conformance kit (spec 14.2) against the prediction server, with real host tables (8.8)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from analytics_acp.kit import conformance_tests


def _sales_wire() -> dict:
    rng = np.random.default_rng(3)
    days = pd.date_range("2026-07-01", periods=60, freq="D")
    rows = [{"fecha": d.strftime("%Y-%m-%d"), "pedidos": round(float(100 + i + 10 * np.sin(i) + rng.normal(0, 2)), 3)}
            for i, d in enumerate(days)]
    return {"format": "inline", "row_count": len(rows),
            "headers": [{"name": "fecha", "type": "date"}, {"name": "pedidos", "type": "number"}], "table": rows}


# No allow_fail: the kit treats a host-tables-only server (6.1 format "none", 8.8) as such, so
# plain MCP clients get ACP_HOST_TABLES_UNSUPPORTED and the per-resource autocontext items are n/a.
test_conformance = conformance_tests(
    "prediction",
    host_tables={"kit_sales": _sales_wire()},
    sample_calls=[
        ("forecast", {"table_ref": "kit_sales", "time_column": "fecha", "value_column": "pedidos", "horizon": 7,
                      "method": "holt_winters"}),
        ("forecast", {"table_ref": "kit_numbers", "time_column": "day", "value_column": "value", "horizon": 2,
                      "method": "seasonal_naive"}),
        ("plot", {"table_ref": "kit_sales", "x": "fecha", "y": "pedidos", "width": 640, "height": 400}),
    ],
    package_dir=Path(__file__).resolve().parents[1],
)
