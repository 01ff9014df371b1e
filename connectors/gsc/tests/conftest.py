"""Fixtures of the gsc tests: the shared Google fakes plus a fake Search Console on 127.0.0.1, a fixed clock.

The clock: 2026-09-25 05:30 UTC, which is still 2026-09-24 in Pacific Time (22:30 PDT). The fake's
final data ends on 2026-09-22 (so 15.2's default window is 2026-08-22 .. 2026-09-22) and fresh data
goes on to 2026-09-24.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "google" / "tests"))
sys.path.insert(0, str(HERE))

from analytics_acp.kit import make_ctx as kit_make_ctx  # noqa: E402
from analytics_acp.state import ConnectorState  # noqa: E402
from gscfake import DOMAIN, NOW, running_fakes  # noqa: E402


@pytest.fixture
def env(monkeypatch) -> Any:
    """The fakes with final data through 2026-09-22 and a fixed clock (PT 2026-09-24)."""
    from analytics_acp_gsc import dates

    monkeypatch.setattr(dates, "now_utc", lambda: NOW)
    with running_fakes(dt.date(2026, 9, 22)) as fakes:
        yield fakes


@pytest.fixture
def connector_state() -> Any:
    """What the connector keeps between calls (credentials, site lists, the ledger): fresh per test, shared by its
    contexts as a server's are, released at the end as the server's stop would."""
    state = ConnectorState("gsc")
    yield state
    state.close()


@pytest.fixture
def served_env() -> Any:
    """The fakes for a served connector (a subprocess on the real clock): final data through 2 days ago, PT."""
    from analytics_acp_gsc import dates

    final = dates.today_pt() - dt.timedelta(days=2)
    with running_fakes(final) as fakes:
        fakes.final_through = final
        yield fakes


@pytest.fixture(autouse=True)
def short_google_deadlines(monkeypatch):
    """Seconds, not Google's minutes: retries and hangs end quickly in tests."""
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_DEADLINE_S", "4")
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_TIMEOUT_S", "2")


@pytest.fixture
def ctx_for(env, tmp_path, connector_state) -> Any:
    """ctx_for(tool, credentials=None, resource_id=DOMAIN, config=None, **fields) -> CallContext on the fakes."""

    def make(tool: str = "search_analytics", credentials: dict[str, Any] | None = None, resource_id: str | None = DOMAIN,
             config: dict[str, Any] | None = None, **fields: Any) -> Any:
        creds = credentials if credentials is not None else env.service_account()
        from analytics_acp_google.credentials import credential_identity

        fields.setdefault("credential_identity", str(credential_identity(creds)))
        fields.setdefault("cache_dir", tmp_path / "cache")
        fields.setdefault("connector_state", connector_state)
        return kit_make_ctx("gsc", tool, credentials=creds, config={**env.config, **(config or {})},
                            resource_id=resource_id, tmp_dir=tmp_path / "tmp", **fields)

    return make
