"""Which ACP servers the bridge can launch (13.1, 13.2, 13.3).

Two places: ``<root>/acps/<id>/acp.json`` folders (dot-folders ignored, the folder name is the
id) and the connectors installed in this Python environment (entry points of the core's plugin
group, launched with ``analytics-acp serve <id>``). A folder in ``acps/`` wins over an installed
connector with the same id, like a project ACP over a system one (13.1).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analytics_acp.manifest import ID_PATTERN, ManifestError, load_manifest

# acp.json written for a generic machine may say "python"; the bridge's own interpreter is the
# one that has analytics_acp installed, so it is used instead of whatever is first on PATH.
PYTHON_COMMANDS = {"python", "python3", f"python3.{sys.version_info.minor}"}


@dataclass
class AcpLaunch:
    """How to start one ACP server."""

    id: str
    name: str
    origin: str  # "folder" | "installed"
    transport: str = "stdio"  # "stdio" | "http"
    command: list[str] = field(default_factory=list)
    cwd: Path | None = None
    url: str | None = None
    token: str | None = None
    folder: Path | None = None
    description: str | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)

    def public(self) -> dict[str, Any]:
        """What acp_sources shows about this ACP (no headers, no tokens)."""
        out: dict[str, Any] = {"id": self.id, "name": self.name, "origin": self.origin, "transport": self.transport}
        if self.folder is not None:
            out["folder"] = str(self.folder)
        if self.description:
            out["description"] = self.description
        if self.error:
            out["error"] = self.error
        if self.warnings:
            out["warnings"] = self.warnings
        return out


def serve_command(connector_id: str) -> list[str]:
    """The command that serves an installed connector over stdio."""
    script = Path(sys.executable).with_name("analytics-acp")
    if script.exists():
        return [str(script), "serve", connector_id]
    found = shutil.which("analytics-acp")
    if found:
        return [found, "serve", connector_id]
    return [sys.executable, "-m", "analytics_acp", "serve", connector_id]


def _folder_launch(folder: Path) -> AcpLaunch:
    """Parse one acp.json; an invalid one gives an AcpLaunch with ``error`` set."""
    launch = AcpLaunch(id=folder.name, name=folder.name, origin="folder", folder=folder, cwd=folder)
    try:
        data = load_manifest(folder)  # the core's 13.1.1/13.2 rules: BOM tolerated, id and name checked
    except ManifestError as exc:
        launch.error = str(exc)
        return launch
    if isinstance(data.get("name"), str) and data["name"].strip():
        launch.name = data["name"]
    if isinstance(data.get("description"), str):
        launch.description = data["description"]
    declared = data.get("id")
    if declared != folder.name:
        launch.warnings.append(f"acp.json id {declared!r} differs from the folder name; the folder name {folder.name!r} is used.")
    transport = data.get("transport")
    if not isinstance(transport, dict):
        launch.error = "acp.json has no transport object (13.2)."
        return launch
    kind = transport.get("type", "stdio")
    if kind == "stdio":
        command = transport.get("command")
        args = transport.get("args") or []
        if not isinstance(command, str) or not command or not isinstance(args, list):
            launch.error = "acp.json transport needs a command string and an args array (13.2)."
            return launch
        launch.command = [_command(command, folder), *[_arg(str(a), folder) for a in args]]
    elif kind == "http":
        url = transport.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            launch.error = "acp.json http transport needs a url (13.2)."
            return launch
        launch.transport, launch.url = "http", url
        auth = (transport.get("headers") or {}).get("Authorization", "")
        if isinstance(auth, str) and auth.lower().startswith("bearer "):
            launch.token = auth[7:].strip()
    else:
        launch.error = f"Unknown transport type {kind!r} in acp.json (stdio or http)."
    return launch


def _command(command: str, folder: Path) -> str:
    if command in PYTHON_COMMANDS:
        return sys.executable
    local = folder / command
    if ("/" in command or "\\" in command) and local.exists():
        return str(local.resolve())
    if local.is_file():
        return str(local.resolve())
    return command


def _arg(arg: str, folder: Path) -> str:
    # 13.2: paths in args are relative to the folder; flags and module names stay as written.
    if arg.startswith("-") or Path(arg).is_absolute():
        return arg
    local = folder / arg
    return str(local.resolve()) if local.exists() else arg


def discover(root: Path | None) -> dict[str, AcpLaunch]:
    """Every launchable ACP: installed connectors, overridden by ``<root>/acps/*`` folders."""
    found: dict[str, AcpLaunch] = {}
    try:
        from analytics_acp.plugins import available_connectors

        installed = available_connectors()
    except Exception:  # a broken entry point must not stop the bridge
        installed = {}
    for cid in installed:
        found[cid] = AcpLaunch(id=cid, name=cid, origin="installed", command=serve_command(cid))
    acps = root / "acps" if root is not None else None
    if acps is not None and acps.is_dir():
        for folder in sorted(acps.iterdir()):
            if folder.name.startswith(".") or not folder.is_dir() or not (folder / "acp.json").is_file():
                continue
            if not ID_PATTERN.match(folder.name):
                continue
            found[folder.name] = _folder_launch(folder)
    return dict(sorted(found.items()))
