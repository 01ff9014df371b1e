"""Serve the bridge's test connector over stdio (launched by acp.json: ``python serve_fixture.py``)."""

import os
import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bridgefixture  # noqa: E402
from analytics_acp.plugins import load_connector  # noqa: E402
from analytics_acp.runtime import build_server, serve_stdio  # noqa: E402

server = build_server(load_connector(bridgefixture))
if "--http" in sys.argv:  # python serve_fixture.py --http --port N (token from ACP_HTTP_TOKEN)
    from analytics_acp.http_app import serve_http

    serve_http(server, port=int(sys.argv[sys.argv.index("--port") + 1]), token=os.environ.get("ACP_HTTP_TOKEN"))
else:  # --max-calls N: a cap on calls in progress of its own, not the one the bridge's environment gives
    max_calls = int(sys.argv[sys.argv.index("--max-calls") + 1]) if "--max-calls" in sys.argv else None
    anyio.run(lambda: serve_stdio(server, max_calls=max_calls))
