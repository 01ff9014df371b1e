"""Shared helpers of the core runtime tests: serve tests/core_fixtures/mini_connector.py."""

import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

from analytics_acp.host import AcpClient

FIXTURES = Path(__file__).parent / "core_fixtures"
MINI = "mini_connector"
CREDS = {"type": "api_key", "api_key": "sk-test-SECRET-123456"}


def env(**extra):
    """Environment for a served fixture connector (inherits the netguard and ACP dirs)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(FIXTURES), e.get("PYTHONPATH", "")])
    e.update(extra)
    return e


def serve_command(*args):
    return [sys.executable, "-m", "analytics_acp", "serve", MINI, *args]


@asynccontextmanager
async def mini_client(**kwargs):
    async with AcpClient.stdio(serve_command(), env=env(), **kwargs) as client:
        yield client
