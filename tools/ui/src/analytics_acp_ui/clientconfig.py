"""Connect a client (issue 35.6): the bridge's entry written or merged into an MCP client's configuration file.

The entry is the bridge's own (``mcp_servers_config``). A file is merged, never replaced: every other
server and setting stays; a backup is written first; a file that cannot be read as JSON (or as JSON
with comments, where the client allows them) is never overwritten — the page shows the snippet instead.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analytics_acp.secret_store import write_atomic
from analytics_acp_bridge.cli import mcp_servers_config
from analytics_acp_bridge.paths import Paths

SERVER_NAME = "acp-bridge"


@dataclass(frozen=True)
class Client:
    """An MCP client and where its configuration lives."""

    id: str
    name: str
    key: str  # "mcpServers", or "servers" for VS Code
    comments: bool  # the client reads JSON with comments (JSONC)
    typed: bool  # each entry names its transport ("type": "stdio")
    scope: str  # "user" or "project"

    def path(self, project: Path) -> Path:
        """The configuration file on this machine."""
        home = Path.home()
        if self.id == "claude-desktop":
            if sys.platform == "darwin":
                return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
            if sys.platform == "win32":
                return Path(os.environ.get("APPDATA", str(home))) / "Claude" / "claude_desktop_config.json"
            return home / ".config" / "Claude" / "claude_desktop_config.json"
        if self.id == "cursor":
            return home / ".cursor" / "mcp.json"
        if self.id == "vscode":
            return project / ".vscode" / "mcp.json"
        return project / ".mcp.json"


CLIENTS = (
    Client("claude-desktop", "Claude Desktop", "mcpServers", False, False, "user"),
    Client("cursor", "Cursor", "mcpServers", False, False, "user"),
    Client("vscode", "VS Code", "servers", True, True, "project"),
    Client("claude-code", "Claude Code", "mcpServers", False, False, "project"),
)


class ClientConfigError(Exception):
    """The client's file cannot be merged safely (the message names the path and the position, never content)."""


def entry(paths: Paths, client: Client) -> dict[str, Any]:
    """The bridge's entry for ``client``."""
    value = dict(mcp_servers_config(paths)["mcpServers"][SERVER_NAME])
    return {"type": "stdio", **value} if client.typed else value


def snippet(paths: Paths, client: Client) -> str:
    """The JSON to paste by hand."""
    return json.dumps({client.key: {SERVER_NAME: entry(paths, client)}}, indent=2)


def strip_jsonc(text: str) -> tuple[str, bool]:
    """JSON with comments (// and /* */) and trailing commas as plain JSON (strings untouched); and whether it had comments."""
    out: list[str] = []
    comments = False
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            comments = True
            while i < n and text[i] not in "\r\n":
                i += 1
        elif text.startswith("/*", i):
            comments = True
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif ch == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "]}":
                i += 1  # a trailing comma
            else:
                out.append(ch)
                i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out), comments


def read(path: Path, client: Client) -> tuple[dict[str, Any], bool]:
    """(the file's JSON object, whether it had comments); ``({}, False)`` when it does not exist."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}, False
    except OSError as exc:
        raise ClientConfigError(f"Cannot read {path}: {exc.strerror or type(exc).__name__}.") from None
    if not text.strip():
        return {}, False
    plain, comments = strip_jsonc(text) if client.comments else (text, False)
    try:
        data = json.loads(plain)
    except json.JSONDecodeError as exc:
        kind = "JSON with comments" if client.comments else "JSON"
        raise ClientConfigError(f"{path} cannot be read as {kind} ({exc.msg} at line {exc.lineno}): it was not changed. "
                                "Fix it, or paste the snippet by hand.") from None
    if not isinstance(data, dict) or not isinstance(data.get(client.key, {}), dict):
        raise ClientConfigError(f"{path} is not an object with a \"{client.key}\" object: it was not changed.")
    return data, comments


@dataclass
class Status:
    """What the client's file holds now."""

    client: Client
    path: Path
    exists: bool
    state: str  # "absent" | "current" | "different" | "missing" | "unreadable"
    problem: str | None = None


def status(paths: Paths, client: Client) -> Status:
    """Whether the client's file already starts this bridge."""
    path = client.path(paths.project)
    try:
        data, _ = read(path, client)
    except ClientConfigError as exc:
        return Status(client, path, True, "unreadable", str(exc))
    if not path.exists():
        return Status(client, path, False, "absent")
    found = (data.get(client.key) or {}).get(SERVER_NAME)
    if found is None:
        return Status(client, path, True, "missing")
    return Status(client, path, True, "current" if found == entry(paths, client) else "different")


def write(paths: Paths, client: Client) -> tuple[Path, Path | None, bool]:
    """Merge the bridge's entry into the client's file; returns (path, backup or None, comments dropped)."""
    path = client.path(paths.project)
    data, comments = read(path, client)
    backup = None
    if path.exists():
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        backup = path.with_name(f"{path.name}.bak-{stamp}")
        try:
            shutil.copy2(path, backup)
        except OSError as exc:
            raise ClientConfigError(f"Cannot write the backup {backup}: {exc.strerror or type(exc).__name__}; "
                                    "nothing was changed.") from None
    servers = dict(data.get(client.key) or {})
    servers[SERVER_NAME] = entry(paths, client)
    data = {**data, client.key: servers}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
        write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode)
    except OSError as exc:
        raise ClientConfigError(f"Cannot write {path}: {exc.strerror or type(exc).__name__}.") from None
    return path, backup, comments
