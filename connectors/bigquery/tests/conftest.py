"""Fixtures of the bigquery tests: the fake BigQuery REST API on 127.0.0.1 (bqworld), short Google deadlines,
contexts built with kit.make_ctx."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from analytics_acp.kit import make_ctx as _make_ctx  # noqa: E402
from analytics_acp.state import ConnectorState  # noqa: E402
from bqworld import (  # noqa: E402
    CLIENT_ID,
    CLIENT_SECRET,
    DATASET,
    PROJECT,
    REFRESH,
    SA_EMAIL,
    FakeBigQuery,
    FakeServer,
    TokenEndpoint,
    World,
    keys,
    seed,
)


@pytest.fixture
def world():
    with FakeServer(hang_s=10) as server:
        oauth = TokenEndpoint(server)
        oauth.register_service_account(SA_EMAIL, keys.public_key_pem(0))
        oauth.register_refresh_token(REFRESH, CLIENT_ID, CLIENT_SECRET, "person@example.com")
        bq = FakeBigQuery(server)
        seed(bq)
        yield World(server, bq, oauth)


@pytest.fixture(autouse=True)
def short_google_deadlines(monkeypatch):
    """Seconds, not Google's 600 s: a failing test fails fast (the server subprocesses inherit it)."""
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_DEADLINE_S", "4")
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_TIMEOUT_S", "2")


@pytest.fixture
def connector_state():
    """What the connector keeps between calls (its clients), shared by a test's contexts as a server's are;
    closed at the end as the server's stop would (every client closed)."""
    state = ConnectorState("bigquery")
    yield state
    state.close()


@pytest.fixture
def ctx_for(world, tmp_path, connector_state):
    """ctx_for(tool, resource_id=..., config=..., cost_limit_usd=..., credentials=..., tables=...) -> CallContext."""

    def build(tool: str = "execute_query", resource_id: str | None = f"{PROJECT}.{DATASET}", *, config: dict[str, Any] | None = None,
              credentials: dict[str, Any] | None = None, **fields: Any):
        fields.setdefault("connector_state", connector_state)
        return _make_ctx("bigquery", tool, credentials=credentials or world.service_account(),
                         config={**world.config, **(config or {})}, resource_id=resource_id, tmp_dir=tmp_path, **fields)

    return build
