import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from googlefakes import keys  # noqa: E402
from googlefakes.oauth import TokenEndpoint  # noqa: E402
from googlefakes.server import FakeServer  # noqa: E402


@pytest.fixture
def fake():
    with FakeServer(hang_s=10) as server:
        server.oauth = TokenEndpoint(server)
        server.oauth.register_service_account("acp-test@fake-project.iam.gserviceaccount.com", keys.public_key_pem(0))
        yield server


@pytest.fixture(autouse=True)
def short_google_deadlines(monkeypatch):
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_DEADLINE_S", "2")
    monkeypatch.setenv("ANALYTICS_ACP_GOOGLE_TIMEOUT_S", "1")
