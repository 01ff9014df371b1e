"""Paths people can predict (issue 34.2): a literal relative path in a source starts at the sources.json folder.

``{"file": ...}`` always did (16.3); a literal path the ACP reads itself (a SQLite ``path``) used to start at
whatever folder the bridge was started in, which under a desktop client nobody knows. Which values are paths
the bridge learns from the ACP, never from ACP-specific code (14.3): its setup schemas mark them
``"format": "path"`` (a format a host that does not know it paints as text, 5.5.4). Such a value, when
relative, is made absolute from the sources.json folder before anything is sent; ``{"projectPath": ...}``
stays relative to the project (16.3) and is absolute already.

A set-up written for the old rule (the path exists from the start folder, not from the sources.json folder)
gets a message that says what changed and the full path to write.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analytics_acp.schemas import absolute_paths, path_fields

from .entries import Source


@dataclass(frozen=True)
class MovedPath:
    """One literal relative path of a source, made absolute from the sources.json folder."""

    where: str  # "credentials.path"
    written: str  # as written in sources.json
    full: str  # the absolute path the ACP receives


def resolve_source_paths(source: Source, capability: dict[str, Any], base: Path) -> list[MovedPath]:
    """Make the source's literal relative ``format: path`` values absolute from ``base`` (in place); what moved."""
    moved: list[MovedPath] = []
    for what, schema_key in (("credentials", "credentials_schema"), ("config", "config_schema")):
        values = getattr(source, what)
        schema = capability.get(schema_key)
        if not isinstance(values, dict) or not isinstance(schema, dict):
            continue
        fields = [k for k in path_fields(schema, values) if isinstance(values[k], str) and values[k].strip()]
        if not fields:
            continue
        resolved = absolute_paths(schema, values, base)
        for key in fields:
            written = values[key].strip()
            if not Path(written).expanduser().is_absolute():
                moved.append(MovedPath(f"{what}.{key}", written, str(resolved[key])))
        setattr(source, what, resolved)
    return moved


def start_folder_note(source: Source, moved: list[MovedPath], base: Path, server_cwd: Path | None = None) -> str | None:
    """What changed, for a set-up that relied on the old rule: a relative path that exists from the folder its ACP
    server runs in (``server_cwd``, 13.2: an ``acps/`` folder ACP runs in its folder; else the folder the bridge
    was started in) and not from the sources.json folder. None when no such path."""
    start = Path(server_cwd or os.getcwd())
    where = "its ACP server runs in" if server_cwd is not None else "the bridge was started in"
    if start.resolve() == base.resolve():
        return None
    for path in moved:
        old = os.path.abspath(start / Path(path.written).expanduser())
        if not os.path.exists(path.full) and os.path.exists(old):
            return (f"Relative paths in sources.json now start at its folder ({base}), no longer at the folder "
                    f"{where} ({start}): {path.where} {path.written!r} of source «{source.id}» is "
                    f"{path.full}, which does not exist; from the start folder it was {old}. Write that full path in "
                    f"sources.json, or a path relative to {base}.")
    return None
