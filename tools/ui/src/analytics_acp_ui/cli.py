"""``analytics-acp ui [--project DIR] [--root DIR] [--sources FILE] [--port N] [--no-browser]`` (issue 35.1)."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import socket
import sys

GRACE_S = 0.2  # Ctrl-C: requests still running get this long, so the page ends within a second


def parser() -> argparse.ArgumentParser:
    """The page's argument parser (the bridge's defaults for project, root and sources)."""
    p = argparse.ArgumentParser(
        prog="analytics-acp ui",
        description="A local page to set up the ACP Bridge's sources, sign in, pick resources, connect an MCP client "
                    "and look at the datasets. Serves on 127.0.0.1 only and prints its URL (with a one-time token).")
    # The bridge's defaults (analytics_acp_bridge.cli.resolve_paths), imported only once the port is ours.
    p.add_argument("--project", help="Project folder whose acp-data/ the page shows (default: $ACP_BRIDGE_PROJECT or "
                                     "the current folder).")
    p.add_argument("--root", help="Folder that holds acps/ (default: $ACP_BRIDGE_ROOT or the project folder).")
    p.add_argument("--sources", help="sources.json to edit (default: <root>/sources.json; it need not exist yet).")
    p.add_argument("--port", type=int, default=0, help="Port on 127.0.0.1 (default: a free one).")
    p.add_argument("--no-browser", action="store_true", help="Print the URL without opening the browser.")
    return p


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (port 0: a free one); OSError with a clear message when taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if sys.platform != "win32":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.EADDRINUSE, 10048):
            raise OSError(f"port {port} on 127.0.0.1 is in use: pass another --port, or leave it out for a free one.") from None
        raise OSError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror or type(exc).__name__}).") from None
    sock.listen(64)
    sock.set_inheritable(False)
    return sock


def main(argv: list[str]) -> int:
    """Serve the set-up page on 127.0.0.1 (`analytics-acp ui`): sources, sign-in, client configuration, datasets."""
    args = parser().parse_args(argv)
    try:
        sock = bind(args.port)
    except OSError as exc:
        print(f"analytics-acp ui: {exc}", file=sys.stderr)
        return 2
    from analytics_acp_bridge.cli import resolve_paths

    from .security import Security

    paths = resolve_paths(args)

    security = Security(port=sock.getsockname()[1])
    # The URL first: the socket already listens, so a browser that opens it now waits for the server, not in vain.
    print(security.url(), flush=True)
    import uvicorn
    from analytics_acp_bridge.sources.redact import RedactingFilter

    from .app import build_app
    from .state import UiState

    state = UiState(paths=paths, security=security)
    logging.basicConfig(level=os.environ.get("ANALYTICS_ACP_UI_LOG", "WARNING"), stream=sys.stderr,
                        format="analytics-acp ui: %(message)s")
    for handler in logging.getLogger().handlers:  # no secret the page handled reaches its log
        handler.addFilter(RedactingFilter(state.redactor))
    app = build_app(state)
    if not args.no_browser:
        import webbrowser

        webbrowser.open(security.url(), new=2)
    # uvicorn types the grace as int; it waits with asyncio.wait_for, which takes a float.
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on",
                            timeout_graceful_shutdown=GRACE_S, timeout_keep_alive=2)  # type: ignore[arg-type]
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        return 130
    finally:
        state.cleanup()
    return 0
