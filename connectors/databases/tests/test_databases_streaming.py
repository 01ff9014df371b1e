"""Results stream (issue: 1M rows must not need 1M Python objects alive): live object counts, not time.

The count is ``sys.getallocatedblocks()`` (every Python object is at least one block), sampled
while the rows flow and compared with the count before the query ran, so a driver that buffered
the whole result (a client-side cursor) is counted too. For PostgreSQL, whose client-side buffer
would live in libpq (C memory), the server itself also shows the session fetching from a cursor.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator

import pytest
from analytics_acp.results.extraction import build_extraction
from analytics_acp.results.settings import BuildSettings
from analytics_acp_databases.arguments import ExecuteSql
from analytics_acp_databases.execute import BATCH_ROWS, run_execute_sql


class Growth:
    """Highest number of extra allocated blocks seen since creation, sampled every ``every`` rows."""

    def __init__(self, every: int = 5000):
        gc.collect()
        self.base = sys.getallocatedblocks()
        self.peak = 0
        self.every = every

    def watch(self, rows) -> Iterator:
        """Pass the rows through, sampling the block count."""
        for k, row in enumerate(rows):
            if k % self.every == 0:
                self.peak = max(self.peak, sys.getallocatedblocks() - self.base)
            yield row


def test_a_million_rows_reach_the_core_file_writer_with_few_live_objects(duck_db, make_ctx, tmp_path):
    """execute_sql -> the core's table file (format file): 1M rows; live objects stay at batch scale."""
    n = 1_000_000
    growth = Growth()
    ex = run_execute_sql(ExecuteSql.parse({"sql": f"SELECT range AS i FROM range({n})"}), make_ctx({"type": "duckdb", "path": duck_db}, "tienda"))
    ex.rows = growth.watch(ex.rows)
    built = build_extraction(ex, BuildSettings(row_limit=5, inline_max_bytes=4096, tmp_dir=tmp_path))
    assert built.total_rows == n and built.system_data["format"] == "file"
    assert built.model_response["rows"][0] == {"i": 0}
    with open(built.files[0], "rb") as f:
        f.seek(-64, 2)
        assert b'{"i":999999}' in f.read()
    # 1M rows kept alive would be >= 2M blocks (a tuple and an int each); streaming stays near one batch.
    assert growth.peak < 200_000, growth.peak


def test_sqlite_streams_with_few_live_objects(sales_db, make_ctx):
    growth = Growth()
    sql = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 300000) SELECT n, n * 2 AS m FROM r"
    count = sum(1 for _ in growth.watch(run_execute_sql(ExecuteSql.parse({"sql": sql}), make_ctx({"type": "sqlite", "path": sales_db}, "ventas")).rows))
    assert count == 300_000
    assert growth.peak < 100_000, growth.peak  # 300k rows alive would be ~900k blocks


@pytest.mark.services
def test_pg_streams_from_a_server_side_cursor_in_batches(pg_schema, make_ctx):
    creds, schema, admin = pg_schema
    growth = Growth()
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT g AS n, g * 2 AS m FROM generate_series(1, 300000) g"}), make_ctx(creds, f"test.{schema}"))
    it = growth.watch(ex.rows)
    assert next(it) == (1, 2)
    with admin.connect() as conn:  # what the connector's session is doing right now, as the server sees it
        activity = conn.exec_driver_sql(
            "SELECT query FROM pg_stat_activity WHERE application_name = 'analytics-acp-databases' AND state = 'idle in transaction'"
        ).scalars().all()
    assert 1 + sum(1 for _ in it) == 300_000
    fetches = [q for q in activity if q.startswith("FETCH FORWARD")]
    assert fetches and all(int(q.split()[2]) <= BATCH_ROWS for q in fetches), activity
    assert growth.peak < 100_000, growth.peak


@pytest.mark.services
def test_maria_streams_unbuffered_with_few_live_objects(maria_db, make_ctx):
    creds, name, _ = maria_db
    growth = Growth()
    ex = run_execute_sql(ExecuteSql.parse({"sql": "SELECT seq AS n, seq * 2 AS m FROM seq_1_to_300000"}), make_ctx(creds, name))
    assert sum(1 for _ in growth.watch(ex.rows)) == 300_000
    assert growth.peak < 100_000, growth.peak  # a buffered pymysql cursor holds every row (~900k blocks)
