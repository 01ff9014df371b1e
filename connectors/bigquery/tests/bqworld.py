"""The world of the bigquery tests: 15.3's project seeded into the fake BigQuery API, the queries it knows,
throwaway credentials of both variants. Imported by conftest.py and the tests (a plain module, not a conftest)."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "google" / "tests"))
sys.path.insert(0, str(HERE))

from fakebq import FakeBigQuery, FakeTable, QuerySpec  # noqa: E402
from googlefakes import keys  # noqa: E402
from googlefakes.oauth import TokenEndpoint  # noqa: E402
from googlefakes.server import FakeServer  # noqa: E402

PROJECT = "mi-proyecto"
DATASET = "analytics_123"
SA_EMAIL = "acp-test@fake-project.iam.gserviceaccount.com"
REFRESH = "1//fake-refresh-token"
CLIENT_ID = "fake-client.apps.googleusercontent.com"
CLIENT_SECRET = "fake-client-secret-value"
FIRST_SHARD = dt.date(2025, 8, 8)
SHARDS = 412  # 15.3: events_* with 412 shards, the latest events_20260923

EVENTS_SCHEMA: list[dict[str, Any]] = [
    {"name": "event_date", "type": "STRING", "mode": "NULLABLE"},
    {"name": "event_name", "type": "STRING", "mode": "NULLABLE"},
    {"name": "event_params", "type": "RECORD", "mode": "REPEATED", "fields": [
        {"name": "key", "type": "STRING", "mode": "NULLABLE"},
        {"name": "value", "type": "RECORD", "mode": "NULLABLE", "fields": [
            {"name": "string_value", "type": "STRING", "mode": "NULLABLE"},
            {"name": "int_value", "type": "INTEGER", "mode": "NULLABLE"},
        ]},
    ]},
    {"name": "user_pseudo_id", "type": "STRING", "mode": "NULLABLE"},
]

SQL_ALL = "SELECT event_name, COUNT(*) n FROM `mi-proyecto.analytics_123.events_*` GROUP BY 1"
SQL_WEEK = ("SELECT event_date, event_name, user_pseudo_id FROM `mi-proyecto.analytics_123.events_*` "
            "WHERE _TABLE_SUFFIX BETWEEN '20260901' AND '20260907'")
SQL_DELETE = "DELETE FROM `mi-proyecto.analytics_123.tmp` WHERE true"


def shard_names(prefix: str = "events_", n: int = SHARDS) -> list[str]:
    return [f"{prefix}{(FIRST_SHARD + dt.timedelta(days=i)):%Y%m%d}" for i in range(n)]


def seed(bq: FakeBigQuery) -> None:
    """15.3's project: analytics_123 (EU) with 412 daily shards, an intraday shard, a partitioned table and tmp."""
    bq.add_dataset(PROJECT, DATASET, location="EU", description="GA4 export of property 123")
    bq.add_dataset(PROJECT, "sandbox", location="EU")
    bq.add_dataset("otro-proyecto", "ventas", location="US")
    for i, name in enumerate(shard_names()):
        bq.add_table(FakeTable(PROJECT, DATASET, name, schema=EVENTS_SCHEMA, num_rows=20_000 + i, num_bytes=1_600_000_000 + i))
    bq.add_table(FakeTable(PROJECT, DATASET, "events_intraday_20260924", schema=EVENTS_SCHEMA, num_rows=900, num_bytes=70_000))
    bq.add_table(FakeTable(PROJECT, DATASET, "pseudonymous_users_20260923", schema=[{"name": "user_pseudo_id", "type": "STRING"}]))
    bq.add_table(FakeTable(PROJECT, DATASET, "daily", schema=[{"name": "day", "type": "DATE"}, {"name": "sessions", "type": "INTEGER"}],
                           num_rows=90, num_bytes=2048, time_partitioning={"type": "DAY", "field": "day"}, clustering=["day"],
                           description="Sessions per day"))
    bq.add_table(FakeTable(PROJECT, DATASET, "tmp", schema=[{"name": "x", "type": "INTEGER"}]))
    bq.add_table(FakeTable(PROJECT, "sandbox", "targets", schema=[{"name": "day", "type": "DATE"}, {"name": "value", "type": "INTEGER"},
                                                                  {"name": "label", "type": "STRING"}]))
    refs = [f"{PROJECT}.{DATASET}.{n}" for n in shard_names()]
    bq.on_query(SQL_ALL, QuerySpec(
        total_bytes_processed=674810580992, referenced_tables=refs, location="EU",
        schema=[{"name": "event_name", "type": "STRING", "mode": "NULLABLE"}, {"name": "n", "type": "INTEGER", "mode": "NULLABLE"}],
        total_rows=3, row=lambda i: [["page_view", "scroll", "purchase"][i], [900, 300, 12][i]]))
    week = [r for r in refs if "20260901" <= r[-8:] <= "20260907"]
    bq.on_query(SQL_WEEK, QuerySpec(
        total_bytes_processed=9663676416, referenced_tables=week, location="EU",
        schema=[{"name": f, "type": "STRING", "mode": "NULLABLE"} for f in ("event_date", "event_name", "user_pseudo_id")],
        total_rows=181022, wire_row=lambda i: [f"202609{1 + i % 7:02d}", ("page_view", "scroll", "click")[i % 3], f"{1000 + i}.{i % 1800}"]))
    bq.on_query(SQL_DELETE, QuerySpec(statement_type="DELETE", total_bytes_processed=0,
                                      referenced_tables=[f"{PROJECT}.{DATASET}.tmp"], location="EU"))


class World:
    """The running fakes and ready-made credentials."""

    def __init__(self, server: FakeServer, bq: FakeBigQuery, oauth: TokenEndpoint):
        self.server, self.bq, self.oauth = server, bq, oauth

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def config(self) -> dict[str, Any]:
        return {"api_endpoint": self.server.url}

    def service_account(self) -> dict[str, Any]:
        return keys.service_account_credentials(self.oauth.token_uri, SA_EMAIL)

    def oauth_credentials(self) -> dict[str, Any]:
        return keys.oauth(access_token=None, refresh_token=REFRESH, client_id=CLIENT_ID, client_secret=CLIENT_SECRET,
                          token_uri=self.oauth.token_uri)
