"""``serve_http``: one local HTTP server for many checklist runs (many sessions on one process)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# Readiness wait: the server imports the SDK (and its connector) before it binds.
START_TIMEOUT_S = 120.0


@dataclass
class ServedHttp:
    """A running local HTTP server: its ``/mcp`` URL and what it writes (log, cache and temp folders)."""

    url: str
    log: Path
    files: list[Path]
    pid: int  # the server process (a test may read its CPU time or signal it)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def serve_http(command: list[str], *, env: dict[str, str] | None = None,
               folder: str | Path | None = None) -> Iterator[ServedHttp]:
    """Run ``command --port N`` (an HTTP ACP server, e.g. ``serve_command(id) + ["--http"]``) on loopback.

    Yields a ``ServedHttp``; pass ``url=served.url, server_files=served.files`` to ``run_checklist`` so
    the secret scan (10.1) reads the server's stdout/stderr log and its ACP_CACHE_DIR/ACP_TMP_DIR as it
    does for a stdio server. Every run against it opens its own sessions on the one process, so one
    start serves several credential variants. ``folder`` (default: a temporary one, removed at exit)
    holds the log and those folders; ``env`` is added to the server's environment.
    """
    own = folder is None
    base = Path(tempfile.mkdtemp(prefix="analytics-acp-served-")) if own else Path(folder)  # type: ignore[arg-type]
    base.mkdir(parents=True, exist_ok=True)
    extra = dict(env or {})
    extra.setdefault("ACP_CACHE_DIR", str(base / "cache"))
    extra.setdefault("ACP_TMP_DIR", str(base / "tmp"))
    log = base / "server.log"
    port = _free_port()
    try:
        with open(log, "w", encoding="utf-8") as out:
            proc = subprocess.Popen([*command, "--port", str(port)], stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, env={**os.environ, **extra})
            try:
                deadline = time.monotonic() + START_TIMEOUT_S
                while not _listening(port):
                    if proc.poll() is not None:
                        raise RuntimeError(f"server exited with {proc.returncode}: {log.read_text()[-2000:]}")
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"server did not listen on {port}: {log.read_text()[-2000:]}")
                    threading.Event().wait(0.05)
                yield ServedHttp(url=f"http://127.0.0.1:{port}/mcp", log=log,
                                 files=[log, Path(extra["ACP_CACHE_DIR"]), Path(extra["ACP_TMP_DIR"])], pid=proc.pid)
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    finally:
        if own:
            shutil.rmtree(base, ignore_errors=True)
