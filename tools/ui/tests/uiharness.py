"""The set-up page under test: served in this process (one uvicorn per test module), driven by Chromium or httpx.

A uniquely named module (``conftest`` is ambiguous when several test folders run together). The page
runs in a thread so a module pays one start; the command itself (the URL line, Ctrl-C) is tested as a
process in test_ui_cli.py.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
GOOGLE_TESTS = REPO / "connectors" / "google" / "tests"
GA4_TESTS = REPO / "connectors" / "ga4" / "tests"
FIXTURE_ACP = REPO / "tools" / "bridge" / "tests" / "fixture_acp"
for extra in (GOOGLE_TESTS, GA4_TESTS, HERE):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

SECRET = "sk-DISTINCTIVE-ui-secret-7f3a9c"  # a literal secret searched for in every page, answer and log


@dataclass
class Served:
    """A running page: its URL (with the token), port, state and the thread serving it."""

    url: str
    port: int
    state: Any
    server: Any
    thread: threading.Thread

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextlib.contextmanager
def serve_page(project: Path, root: Path | None = None, sources: Path | None = None) -> Iterator[Served]:
    """``analytics-acp ui`` in a thread of this process, bound to a free port; stopped (bounded) at the end."""
    import uvicorn
    from analytics_acp_bridge.paths import Paths
    from analytics_acp_ui.app import build_app
    from analytics_acp_ui.cli import GRACE_S, bind
    from analytics_acp_ui.security import Security
    from analytics_acp_ui.state import UiState

    root = root or project
    paths = Paths(project=project, sources=sources or root / "sources.json", root=root)
    sock = bind(0)
    state = UiState(paths=paths, security=Security(port=sock.getsockname()[1]))
    app = build_app(state)
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on", timeout_graceful_shutdown=GRACE_S)
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]  # not the main thread
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="ui-page", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise AssertionError("the page did not start within 30 s")
        time.sleep(0.02)
    try:
        yield Served(url=state.security.url(), port=state.security.port, state=state, server=server, thread=thread)
    finally:
        server.should_exit = True
        thread.join(timeout=15)


@contextlib.contextmanager
def server_starts() -> Iterator[list[list[str]]]:
    """The commands of the ACP server processes (stdio) started in this process, the page's thread included, while
    the block runs."""
    from analytics_acp.host import AcpClient

    original = AcpClient.__dict__["stdio"]
    started: list[list[str]] = []

    def counting(cls: Any, command: list[str], *args: Any, **kwargs: Any) -> Any:
        started.append(list(command))
        return original.__func__(cls, command, *args, **kwargs)

    AcpClient.stdio = classmethod(counting)  # type: ignore[method-assign,assignment]
    try:
        yield started
    finally:
        AcpClient.stdio = original  # type: ignore[method-assign]


def module_env(config_dir: Path) -> dict[str, str]:
    """Environment of a module: a private config folder, plain-http fake OAuth endpoints allowed, short Google bounds."""
    return {"ANALYTICS_ACP_CONFIG_DIR": str(config_dir), "OAUTHLIB_INSECURE_TRANSPORT": "1",
            "ANALYTICS_ACP_GOOGLE_DEADLINE_S": "4", "ANALYTICS_ACP_GOOGLE_TIMEOUT_S": "2"}


@contextlib.contextmanager
def environ(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables for a block (module fixtures cannot use monkeypatch)."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def shot(page: Any, name: str) -> None:
    """A screenshot for the README when ANALYTICS_ACP_SCREENSHOT_DIR is set (`make screenshots`)."""
    folder = os.environ.get("ANALYTICS_ACP_SCREENSHOT_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.wait_for_load_state("load")  # images included (a string predicate would be eval, which the page's CSP refuses)
        # The whole page in the viewport: Chromium paints a sandboxed frame (another process) only where the viewport
        # shows it, so a full-page shot of a scrolled page left the dataset view's top (or bottom) blank.
        size = page.viewport_size
        height = page.evaluate("() => document.documentElement.scrollHeight")
        page.set_viewport_size({"width": size["width"], "height": max(size["height"], height)})
        try:
            page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)
        finally:
            page.set_viewport_size(size)


def make_sqlite(path: Path, rows: int = 90) -> Path:
    """The spec's example database (16.7's ventas: days of sales by channel)."""
    import sqlite3

    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE ventas (fecha TEXT, canal TEXT, pedidos INTEGER, importe REAL)")
        db.executemany("INSERT INTO ventas VALUES (?, ?, ?, ?)",
                       [(f"2026-07-{1 + i % 28:02d}", ("web", "tienda")[i % 2], 10 + i % 7, 100.5 + i) for i in range(rows)])
    return path
