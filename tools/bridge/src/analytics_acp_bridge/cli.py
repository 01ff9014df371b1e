"""``analytics-acp bridge [--project DIR] [--sources FILE] [--root DIR] [--print-config | --check [--online]]`` (16.2)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from .paths import Paths

ENV_PROJECT = "ACP_BRIDGE_PROJECT"
ENV_ROOT = "ACP_BRIDGE_ROOT"


def parser() -> argparse.ArgumentParser:
    """The bridge's argument parser."""
    p = argparse.ArgumentParser(
        prog="analytics-acp bridge",
        description="ACP Bridge: an MCP stdio server that hosts ACP servers and stores every extraction in acp-data/.",
    )
    p.add_argument("--project", help=f"Project folder where acp-data/ is created (default: ${ENV_PROJECT} or the current folder).")
    p.add_argument("--root", help=f"Folder that holds acps/ (default: ${ENV_ROOT} or the project folder).")
    p.add_argument("--sources", help="sources.json (default: <root>/sources.json).")
    p.add_argument("--print-config", action="store_true",
                   help="Check sources.json offline (as --check), then print the mcpServers JSON snippet for desktop MCP "
                        "clients and exit (non-zero and no snippet when a source has an error).")
    p.add_argument("--check", action="store_true",
                   help="Check sources.json offline: references, each source's ACP, its credentials/config against the "
                        "ACP's setup schemas. One line per source; non-zero exit on any error.")
    p.add_argument("--online", action="store_true", help="With --check: also make one cheap authenticated call per source (autocontext).")
    return p


def resolve_paths(args: argparse.Namespace) -> Paths:
    """Apply the 16.2 defaults."""
    project = Path(args.project or os.environ.get(ENV_PROJECT) or os.getcwd()).expanduser().resolve()
    root = Path(args.root or os.environ.get(ENV_ROOT) or project).expanduser().resolve()
    sources = Path(args.sources).expanduser().resolve() if args.sources else root / "sources.json"
    return Paths(project=project, sources=sources, root=root)


def _registered_as_core_command() -> bool:
    """True when ``analytics-acp bridge`` reaches this package (its ``analytics_acp.commands`` entry point)."""
    return any(ep.value.split(":")[0] == __name__ for ep in entry_points(group="analytics_acp.commands", name="bridge"))


def mcp_servers_config(paths: Paths) -> dict[str, Any]:
    """The ``mcpServers`` entry that starts this bridge from Claude Desktop, Cursor or VS Code."""
    bindir = Path(sys.executable).parent
    core = bindir / "analytics-acp"
    own = bindir / "analytics-acp-bridge"
    if core.exists() and _registered_as_core_command():
        command, args = str(core), ["bridge"]
    elif own.exists():
        command, args = str(own), []
    else:
        command, args = sys.executable, ["-m", "analytics_acp_bridge"]
    args += ["--project", str(paths.project), "--sources", str(paths.sources), "--root", str(paths.root)]
    return {"mcpServers": {"acp-bridge": {"command": command, "args": args}}}


def main(argv: list[str]) -> int:
    """Run the ACP Bridge (an MCP server that is an ACP host).

    ``analytics-acp bridge [--project DIR] [--sources FILE] [--root DIR] [--print-config | --check [--online]]``;
    returns the exit code.
    """
    args = parser().parse_args(argv)
    paths = resolve_paths(args)
    # stdout is the MCP channel: logs go to stderr, and never carry a credential.
    logging.basicConfig(level=os.environ.get("ACP_BRIDGE_LOG", "WARNING"), stream=sys.stderr, format="acp-bridge: %(message)s")
    if args.check or args.print_config:
        from .sources.check import run_check

        # --print-config: the check goes to stderr, the snippet alone to stdout (and only when the check passes).
        code = run_check(paths, online=args.check and args.online, out=sys.stdout if args.check else sys.stderr)
        if args.print_config and code == 0:
            print(json.dumps(mcp_servers_config(paths), indent=2))
        return code
    import anyio
    from analytics_acp.call_cap import CapSettingError, settings_from_env

    from .serving.server import serve_stdio

    try:
        max_calls = settings_from_env().max_calls  # the bridge's own stdio has the ACP servers' cap (issue 38.6)
    except CapSettingError as exc:
        print(f"analytics-acp bridge: {exc}", file=sys.stderr)
        return 2
    try:
        anyio.run(serve_stdio, paths, max_calls)
    except KeyboardInterrupt:
        return 130
    return 0


def run() -> None:
    """Console script ``analytics-acp-bridge``."""
    sys.exit(main(sys.argv[1:]))
