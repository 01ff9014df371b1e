"""Serve the bridge's test connector over stdio (launched by acp.json: ``python serve_fixture.py``)."""

import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bridgefixture  # noqa: E402
from analytics_acp.plugins import load_connector  # noqa: E402
from analytics_acp.runtime import build_server, serve_stdio  # noqa: E402

anyio.run(serve_stdio, build_server(load_connector(bridgefixture)))
