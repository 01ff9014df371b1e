"""Fixtures of the ga4 tests: the Google fakes (googlefakes + ga4fake) with three properties, credentials, contexts.

Helpers and data live in ga4support.py (a uniquely named module: `conftest` is ambiguous when several
test folders run together).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "google" / "tests"))
sys.path.insert(0, str(HERE))

from analytics_acp import CallContext  # noqa: E402
from analytics_acp.kit import make_ctx as kit_make_ctx  # noqa: E402
from analytics_acp.state import ConnectorState  # noqa: E402
from ga4fake import GA4Fake  # noqa: E402
from ga4support import OTHER_EMAIL, SA_EMAIL, build_fake  # noqa: E402
from googlefakes import keys  # noqa: E402
from googlefakes.oauth import TokenEndpoint  # noqa: E402
from googlefakes.server import FakeServer  # noqa: E402


@pytest.fixture(autouse=True)
def short_google_deadlines(monkeypatch):
    """Retry budget 2 s, one request 1 s: a hung fake ends a call within seconds (not Google's 600 s)."""
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_DEADLINE_S", "4")
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_TIMEOUT_S", "2")


@pytest.fixture
def server():
    with FakeServer(hang_s=10) as srv:
        srv.oauth = TokenEndpoint(srv)
        srv.oauth.register_service_account(SA_EMAIL, keys.public_key_pem(0))
        srv.oauth.register_service_account(OTHER_EMAIL, keys.public_key_pem(1))
        yield srv


@pytest.fixture
def fake(server) -> GA4Fake:
    return build_fake(server)


@pytest.fixture
def sa_credentials(server) -> dict[str, Any]:
    return keys.service_account_credentials(server.oauth.token_uri, SA_EMAIL)


@pytest.fixture
def connector_state():
    """What the connector keeps between calls (clients, metadata), shared by a test's contexts as a server's are."""
    state = ConnectorState("ga4")
    yield state
    state.close()


@pytest.fixture
def make_ctx(server, sa_credentials, connector_state):
    """A CallContext from the kit's make_ctx (issue 13); the fake's URL as api_endpoint."""

    def make(tool: str = "run_report", resource_id: str | None = "123456789", credentials: dict[str, Any] | None = None,
             **kw: Any) -> CallContext:
        kw.setdefault("connector_state", connector_state)
        return kit_make_ctx("ga4", tool, credentials=credentials or sa_credentials, config={"api_endpoint": server.url},
                            resource_id=resource_id, **kw)

    return make
