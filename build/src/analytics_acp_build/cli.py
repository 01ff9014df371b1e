"""Command line of build, install, uninstall and check.

``analytics-acp build|install|uninstall|check`` (the core CLI dispatches here) and the standalone
``analytics-acp-build <subcommand>``. Each ``*_main(argv)`` returns an exit status.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _console():
    from rich.console import Console

    return Console(stderr=True)


# --- build ---------------------------------------------------------------------------------------

def _build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="analytics-acp build",
        description="Freeze one connector (PyInstaller --onedir, from a venv with only the core and that connector) "
                    "into DIST/<id>/ and DIST/<id>-<version>.zip, then verify the zip as a host would install it.",
    )
    p.add_argument("connectors", nargs="*", metavar="ID|PATH", help="connector id (connectors/<id>) or connector folder")
    p.add_argument("--all", action="store_true", help="build every connector in connectors/")
    p.add_argument("--out", default="dist", help="output folder (default: dist)")
    p.add_argument("--work", default=None, help="cache folder for build venvs and PyInstaller work (default: build/work)")
    p.add_argument("--no-verify", action="store_true", help="skip starting the built server from its zip")
    p.add_argument("--timeout", type=float, default=90.0, help="seconds the built server has to answer (default 90)")
    p.add_argument("--json", action="store_true", help="print the results as JSON on stdout")
    return p


class _Stages:
    """One spinner line per build stage; the previous one is marked done when the next starts."""

    def __init__(self, progress: Any, target: str):
        self.progress, self.target, self.task = progress, target, None

    def start(self, name: str) -> None:
        self.finish(True)
        self.task = self.progress.add_task(f"{self.target}: {name}", total=None)

    def finish(self, ok: bool) -> None:
        if self.task is not None:
            desc = self.progress.tasks[-1].description + ("" if ok else "  [red]failed[/red]")
            self.progress.update(self.task, completed=1, total=1, description=desc)
            self.task = None


def build_main(argv: list[str] | None = None) -> int:
    """Freeze connectors into dist/<id>/ and a .zip.

    ``analytics-acp build <id>... | --all [--out dist]``.
    """
    args = _build_parser().parse_args(argv)
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from .build import build_one, human_size
    from .freeze import BuildFailed, list_connectors

    try:
        targets = list_connectors() if args.all else list(args.connectors)
    except BuildFailed as exc:
        print(f"analytics-acp build: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not targets:
        print("analytics-acp build: name a connector (or --all).", file=sys.stderr)
        return EXIT_USAGE
    console = _console()
    results = []
    for target in targets:
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                      console=console, transient=False) as progress:
            stages = _Stages(progress, target)
            result = build_one(target, Path(args.out), work=Path(args.work) if args.work else None,
                               verify=not args.no_verify, stage=stages.start, timeout=args.timeout)
            stages.finish(result.ok)
        if not result.ok:
            console.print(f"[red]{result.connector}: build failed[/red]\n{result.error}")
        results.append(result)
    if args.json:
        print(json.dumps([{"connector": r.connector, "version": r.version, "ok": r.ok, "folder": str(r.folder or ""),
                           "zip": str(r.zip or ""), "folder_bytes": r.folder_bytes, "zip_bytes": r.zip_bytes,
                           "seconds": round(r.seconds, 1), "verification": r.verification, "error": r.error}
                          for r in results], indent=2))
    from rich.table import Table

    table = Table(title="analytics-acp build")
    for col in ("connector", "version", "folder size", "zip size", "build seconds", "verification"):
        table.add_column(col)
    for r in results:
        table.add_row(r.connector, r.version, human_size(r.folder_bytes) if r.ok else "-",
                      human_size(r.zip_bytes) if r.ok else "-", f"{r.seconds:.1f}",
                      r.verification if r.ok else f"FAILED ({r.verification})")
    console.print(table)
    return EXIT_OK if all(r.ok for r in results) else EXIT_FAIL


# --- install / uninstall ---------------------------------------------------------------------------

PROGRESS_EVERY_S = 5.0  # install's "still waiting" lines on a terminal


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return seconds


def install_main(argv: list[str] | None = None) -> int:
    """Install an ACP .zip into a servers directory.

    ``analytics-acp install <zip> --dir <servers-dir>`` (13.1.1).
    """
    p = argparse.ArgumentParser(
        prog="analytics-acp install",
        description="Install an ACP server .zip into a servers directory (13.1.1): validate, extract next to the "
                    "destination, start the server and require ACP + tools/list, then replace the old folder atomically.",
    )
    p.add_argument("zip", help="the server .zip")
    p.add_argument("--dir", required=True, help="servers directory (e.g. <userData>/acp/servers or <project>/.analytika/acp)")
    p.add_argument("--timeout", type=_seconds, default=60.0,
                   help="seconds the server has to answer initialize and tools/list (default 60)")
    args = p.parse_args(argv)
    from .install import InstallError, install_zip

    def progress(line: str) -> None:
        print(f"analytics-acp install: {line}", file=sys.stderr, flush=True)

    # On a terminal a line every few seconds says what is still awaited; in a log, only the first one.
    every = PROGRESS_EVERY_S if sys.stderr.isatty() else None
    try:
        done = install_zip(Path(args.zip), Path(args.dir), timeout=args.timeout, progress=progress, progress_every=every)
    except InstallError as exc:
        print(f"analytics-acp install: refused: {exc}\nNothing was changed.", file=sys.stderr)
        return EXIT_FAIL
    verb = "Replaced" if done.replaced else "Installed"
    print(f"{verb} {done.id} {done.version} ({done.name}) in {done.folder} ({len(done.tools)} tools).")
    return EXIT_OK


def uninstall_main(argv: list[str] | None = None) -> int:
    """Remove an installed ACP from a servers directory.

    ``analytics-acp uninstall <id> --dir <servers-dir>``.
    """
    p = argparse.ArgumentParser(prog="analytics-acp uninstall", description="Remove an installed ACP server folder (13.1).")
    p.add_argument("id", help="server id (the folder name)")
    p.add_argument("--dir", required=True, help="servers directory")
    args = p.parse_args(argv)
    from .install import InstallError, uninstall

    try:
        removed = uninstall(args.id, Path(args.dir))
    except (InstallError, OSError) as exc:
        print(f"analytics-acp uninstall: {exc}", file=sys.stderr)
        return EXIT_FAIL
    print(f"Removed {removed}.")
    return EXIT_OK


# --- check -----------------------------------------------------------------------------------------

def _json_arg(value: str) -> Any:
    path = Path(value)
    text = path.read_text(encoding="utf-8") if not value.lstrip().startswith(("{", "[")) and path.is_file() else value
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON (or a JSON file): {exc.msg}") from None


def _from_here(value: Any, cwd: Path) -> Any:
    """Relative file paths inside --credentials name files where the user runs ``check``, not in the
    server's folder (its working directory, 13.2): each string naming an existing file under ``cwd``
    becomes absolute."""
    if isinstance(value, dict):
        return {k: _from_here(v, cwd) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_here(v, cwd) for v in value]
    if isinstance(value, str) and value and "://" not in value and "\n" not in value and len(value) < 4096:
        try:
            path = Path(value).expanduser()
            if not path.is_absolute() and (cwd / path).is_file():
                return str((cwd / path).resolve())
        except (OSError, ValueError):  # not a path at all
            return value
    return value


def check_main(argv: list[str] | None = None) -> int:
    """Run the 14.2 server checklist against any ACP server.

    ``analytics-acp check <folder|zip|-- command…> [--json]``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    command = None
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
    p = argparse.ArgumentParser(
        prog="analytics-acp check",
        description="Run the ACP 14.2 server checklist against any ACP server, as a host would: "
                    "a server folder, a .zip, a stdio command after '--', or --url. One line per item "
                    "(pass / fail / n/a with evidence); exit status 1 when any item fails.",
        epilog="examples: analytics-acp check dist/databases | analytics-acp check dist/databases-0.1.0.zip | "
               "analytics-acp check -- analytics-acp serve example",
    )
    p.add_argument("target", nargs="?", help="server folder or .zip")
    p.add_argument("--url", help="Streamable HTTP endpoint of a running server")
    p.add_argument("--token", help="Bearer token for --url")
    p.add_argument("--credentials", type=_json_arg, help="credentials JSON (or a JSON file) sent in _meta.acp")
    p.add_argument("--config", type=_json_arg, help="config JSON (or a JSON file)")
    p.add_argument("--resource-id", help="resource_id for the resource, autocontext and sample probes")
    p.add_argument("--sample", action="append", default=[], metavar='TOOL=JSON',
                   help='a sample call, e.g. execute_sql=\'{"sql": "SELECT 1"}\' (repeatable)')
    p.add_argument("--quick", action="store_true", help="only the build's verification subset (start, ACP, tools/list)")
    p.add_argument("--json", action="store_true", help="JSON on stdout instead of lines")
    p.add_argument("--timeout", type=float, default=90.0, help="seconds the server has to answer one request (default 90)")
    p.add_argument("--max-time", type=float, default=None, metavar="SECONDS",
                   help="bound of the whole run (default 600): past it the check stops its server and says at which item it gave up")
    args = p.parse_args(argv)
    from .check import MAX_TIME_S, Target, run_command

    samples = []
    for raw in args.sample:
        tool, sep, body = raw.partition("=")
        if not sep:
            p.error(f"--sample {raw!r}: expected TOOL=JSON")
        samples.append((tool, _json_arg(body)))
    try:
        target = Target.parse(args.target, command=command, url=args.url, token=args.token)
    except ValueError as exc:
        p.error(str(exc))
    credentials = _from_here(args.credentials, Path.cwd())
    # Each item is printed as it is decided, the run is bounded, and no server outlives it (issue 26.5).
    return run_command(target, max_time=args.max_time or MAX_TIME_S, json_out=args.json, quick=args.quick,
                       credentials=credentials, config=args.config, resource_id=args.resource_id,
                       sample_calls=samples or None, timeout=args.timeout)


# --- standalone ------------------------------------------------------------------------------------

COMMANDS = {"build": build_main, "install": install_main, "uninstall": uninstall_main, "check": check_main}


def main(argv: list[str] | None = None) -> int:
    """``analytics-acp-build <build|install|uninstall|check> ...``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print("usage: analytics-acp-build {build,install,uninstall,check} ... (each has --help)", file=sys.stderr)
        return EXIT_OK if argv and argv[0] in ("-h", "--help") else EXIT_USAGE
    return COMMANDS[argv[0]](argv[1:])


def run() -> None:
    """Console-script entry."""
    sys.exit(main())
