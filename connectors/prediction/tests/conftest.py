"""Fixtures for the prediction connector: real tables served by a fake host resolver (8.8)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analytics_acp import CallContext, HostTable
from analytics_acp.kit import make_ctx as kit_make_ctx


def daily_sales(n: int = 90, start: str = "2026-07-01", seed: int = 3, scale: float = 1.0) -> pd.DataFrame:
    """Trend + weekly season + noise, one row per day (like the 16.7 example base)."""
    rng = np.random.default_rng(seed)
    i = np.arange(n)
    values = (100 + 0.5 * i + 10 * np.sin(2 * np.pi * i / 7) + rng.normal(0, 3, n)) * scale
    return pd.DataFrame({"fecha": pd.date_range(start, periods=n, freq="D").strftime("%Y-%m-%d"), "pedidos": values})


def drifting_sales(n: int = 120, seed: int = 7) -> pd.DataFrame:
    """A wandering level (random walk) + weekly season + noise: forecasts get less certain with the horizon."""
    rng = np.random.default_rng(seed)
    i = np.arange(n)
    values = 200 + np.cumsum(rng.normal(0, 4, n)) + 15 * np.sin(2 * np.pi * i / 7) + rng.normal(0, 2, n)
    return pd.DataFrame({"fecha": pd.date_range("2026-03-01", periods=n, freq="D").strftime("%Y-%m-%d"), "pedidos": values})


def host_table(ref: str, frame: pd.DataFrame, types: dict[str, str] | None = None) -> HostTable:
    """A HostTable as the host would deliver it (typed headers, JSON-ish row dicts)."""
    types = types or {}
    headers = [{"name": c, "type": types.get(c, "number" if pd.api.types.is_numeric_dtype(frame[c]) else "string")}
               for c in frame.columns]
    rows = [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in row.items()}
            for row in frame.to_dict(orient="records")]
    return HostTable(ref, headers, rows)


@pytest.fixture
def make_ctx(tmp_path: Path):
    """Build the kit's CallContext whose acp/read_table is a FakeHost over the given tables."""

    def build(tables: dict[str, HostTable], *, host_tables: bool = True, tool: str = "forecast") -> CallContext:
        return kit_make_ctx("prediction", tool, tables=tables, host_tables=host_tables, tmp_dir=tmp_path / "acp-tmp")

    return build


@pytest.fixture
def sales_table() -> HostTable:
    return host_table("ventas_execute_sql_20261012_101630", daily_sales(), {"fecha": "date"})


@pytest.fixture
def tabledata():
    """The table builders above, for tests (conftest modules are not importable under importlib mode)."""
    from types import SimpleNamespace

    return SimpleNamespace(daily_sales=daily_sales, drifting_sales=drifting_sales, host_table=host_table)
