"""The ``analytics-acp`` command: ``serve``, ``connectors`` and ``new`` live here; every other
subcommand is found through the entry-point group ``analytics_acp.commands``, like connectors
(name = subcommand, value = ``module:function`` taking the remaining argv and returning the exit
code; the first line of its docstring is the help). ``--help`` lists what is installed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType

COMMAND_GROUP = "analytics_acp.commands"
BUILTIN = ("serve", "connectors", "new")


def installed_commands() -> dict[str, EntryPoint]:
    """Subcommands other packages register under ``analytics_acp.commands`` (name -> entry point)."""
    found = {ep.name: ep for ep in entry_points(group=COMMAND_GROUP) if ep.name not in BUILTIN}
    return dict(sorted(found.items()))


def _summary(ep: EntryPoint) -> str:
    # Loading imports the package's CLI module: only done for --help.
    try:
        doc = (ep.load().__doc__ or "").strip()
    except Exception as exc:  # a broken package must not hide the others
        return f"(failed to load: {type(exc).__name__})"
    return doc.splitlines()[0] if doc else ""


def _parser(summaries: bool = False, commands: bool = True) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="analytics-acp",
        description="Analytics Context Protocol (ACP 1.0) servers on MCP.",
    )
    sub = parser.add_subparsers(dest="command", metavar="<command>")
    serve = sub.add_parser("serve", help="Serve one connector (stdio by default).", description="Serve one connector as an ACP server.")
    serve.add_argument("connector", help="connector id (see 'analytics-acp connectors')")
    _transport_args(serve)
    sub.add_parser("connectors", help="List the installed connectors.", description="List the installed connectors.")
    new = sub.add_parser("new", help="Write a new connector folder connectors/<id>/ to start from.",
                         description="Write connectors/<id>/: pyproject, plugin with its hooks, one tool and one block, "
                                     "skills, icon, README and tests (kit + a make_ctx unit test).")
    new.add_argument("connector", help="the new connector id (lowercase letters, digits and _, starting with a letter)")
    new.add_argument("--root", default=".", help="repository root that holds connectors/ (default: the current folder)")
    # The installed commands need a read of every distribution's entry points: not on the way to a built-in
    # command such as `serve` (cold start, bench case 4). Summaries import each command's module: only for --help.
    for name, ep in (installed_commands() if commands else {}).items():
        sub.add_parser(name, help=_summary(ep) if summaries else None, add_help=False)
    return parser


def _transport_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    parser.add_argument("--port", type=int, default=None, help="HTTP port (default: ACP_PORT, else 7413)")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1; others need ACP_HTTP_TOKEN)")


def _serve(target: str | ModuleType, http: bool, host: str, port: int | None) -> int:
    from .call_cap import CapSettingError, settings_from_env
    from .plugins import ConnectorNotFound, ExtensionRefused, load_connector
    from .runtime import build_server, configure_logging

    configure_logging()
    try:
        cap = settings_from_env()
        acp = build_server(load_connector(target))
    except (ConnectorNotFound, CapSettingError, ExtensionRefused) as exc:
        print(f"analytics-acp: {exc}", file=sys.stderr)
        return 2
    from . import gcsettle

    gcsettle.enable()  # a serving process: its modules stay out of the collector's full passes (gcsettle.py)
    if http:
        from .http_app import InsecureBind, PortInUse, serve_http  # the HTTP stack only when serving HTTP

        try:
            serve_http(acp, host=host, port=port, cap=cap)
        except (InsecureBind, PortInUse) as exc:
            print(f"analytics-acp: {exc}", file=sys.stderr)
            return 2
        return 0
    import anyio

    from .runtime import serve_stdio
    from .stopping import EofExit, install_stop_handlers

    install_stop_handlers(acp.shutdown)
    eof_exit = EofExit(acp.shutdown)  # stdin closed: calls still waiting on an upstream cannot keep serve alive
    try:
        anyio.run(serve_stdio, acp, eof_exit, cap.max_calls)
    except KeyboardInterrupt:
        pass
    eof_exit.served()
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
    if argv and argv[0] not in BUILTIN:
        ep = installed_commands().get(argv[0])
        if ep is not None:
            command: Callable[[list[str]], int | None] = ep.load()
            return int(command(argv[1:]) or 0)
    parser = _parser(summaries=not argv or argv[0] in ("-h", "--help"), commands=not argv or argv[0] not in BUILTIN)
    args = parser.parse_args(argv)
    if args.command == "serve":
        return _serve(args.connector, args.http, args.host, args.port)
    if args.command == "connectors":
        return _list_connectors()
    if args.command == "new":
        from .scaffold import new_connector_main

        return new_connector_main(args.connector, args.root)
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
