"""The ``analytics-acp`` command: serve and list connectors here; bridge, build, install,
uninstall, check and bench are delegated to their packages (each with its own --help)."""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType

# subcommand -> (module, function, what it does, package that provides it)
DELEGATED = {
    "bridge": ("analytics_acp_bridge.cli", "main", "Run the ACP Bridge (an MCP server that is an ACP host).", "analytics-acp-bridge"),
    "build": ("analytics_acp_build.cli", "build_main", "Freeze a connector into dist/<id>/ and a .zip.", "analytics-acp-build"),
    "install": ("analytics_acp_build.cli", "install_main", "Install an ACP .zip into a servers directory.", "analytics-acp-build"),
    "uninstall": ("analytics_acp_build.cli", "uninstall_main", "Remove an installed ACP from a servers directory.", "analytics-acp-build"),
    "check": ("analytics_acp_build.cli", "check_main", "Run the 14.2 server checklist against any ACP server.", "analytics-acp-build"),
    "bench": ("analytics_acp_bench.cli", "main", "Run the benchmarks.", "analytics-acp-bench"),
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="analytics-acp",
        description="Analytics Context Protocol (ACP 1.0) servers on MCP.",
    )
    sub = parser.add_subparsers(dest="command", metavar="<command>")
    serve = sub.add_parser("serve", help="Serve one connector (stdio by default).", description="Serve one connector as an ACP server.")
    serve.add_argument("connector", help="connector id (see 'analytics-acp connectors')")
    _transport_args(serve)
    sub.add_parser("connectors", help="List the installed connectors.", description="List the installed connectors.")
    for name, (_, _, text, _) in DELEGATED.items():
        sub.add_parser(name, help=text, add_help=False)
    return parser


def _transport_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    parser.add_argument("--port", type=int, default=None, help="HTTP port (default: ACP_PORT, else 7413)")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1; others need ACP_HTTP_TOKEN)")


def _serve(target: str | ModuleType, http: bool, host: str, port: int | None) -> int:
    from .http_app import InsecureBind
    from .plugins import ConnectorNotFound, load_connector
    from .runtime import build_server, configure_logging

    configure_logging()
    try:
        acp = build_server(load_connector(target))
    except ConnectorNotFound as exc:
        print(f"analytics-acp: {exc}", file=sys.stderr)
        return 2
    if http:
        from .http_app import serve_http

        try:
            serve_http(acp, host=host, port=port)
        except InsecureBind as exc:
            print(f"analytics-acp: {exc}", file=sys.stderr)
            return 2
        return 0
    import anyio

    from .runtime import serve_stdio

    try:
        anyio.run(serve_stdio, acp)
    except KeyboardInterrupt:
        pass
    return 0


def serve_module_main(plugin_module: ModuleType, argv: list[str] | None = None) -> int:
    """Entry of a frozen build: serve ``plugin_module`` explicitly (entry points do not survive freezing)."""
    parser = argparse.ArgumentParser(prog=getattr(plugin_module, "__name__", "acp-server"), description="ACP server.")
    _transport_args(parser)
    args = parser.parse_args(argv)
    return _serve(plugin_module, args.http, args.host, args.port)


def main(argv: list[str] | None = None) -> int:
    """Dispatch the subcommands."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DELEGATED:
        module_name, func, _, package = DELEGATED[argv[0]]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:
            print(f"analytics-acp {argv[0]}: the package {package} is not installed (run 'make venv').", file=sys.stderr)
            return 2
        return int(getattr(module, func)(argv[1:]) or 0)
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "serve":
        return _serve(args.connector, args.http, args.host, args.port)
    if args.command == "connectors":
        return _list_connectors()
    parser.print_help()
    return 0 if not argv else 2


def _list_connectors() -> int:
    from .plugins import available_connectors, load_connector

    table = available_connectors()
    if not table:
        print("No connectors installed.")
        return 0
    for cid in table:
        try:
            info = load_connector(cid).info
            print(f"{cid:<14} {info.version:<8} {info.name} - {info.description}")
        except Exception as exc:  # a broken plugin must not hide the others
            print(f"{cid:<14} (failed to load: {type(exc).__name__}: {exc})")
    return 0


def run() -> None:
    """Console-script entry."""
    sys.exit(main())
