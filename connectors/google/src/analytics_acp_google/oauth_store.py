"""Where `analytics-acp login google` keeps sign-ins: private files, atomic writes, sources.json updates.

A sign-in is one JSON file in the gcloud ``authorized_user`` shape (plus ``token_uri``, ``email``,
``scopes``), which every Google connector's credentials_schema accepts. Files are written whole
through a temp file in the same private folder and renamed, so a failure never leaves half a file.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# The config folder and its private-file rules are the core's secret store's (issue 35.4): sign-ins
# live in the same home as the secrets the set-up page keeps.
from analytics_acp.secret_store import config_dir, write_atomic
from analytics_acp.secret_store import private_dir as _private_dir

# Never printed by --list: the values that let someone act as the user.
SECRET_FIELDS = ("refresh_token", "access_token", "client_secret")


class StoreError(Exception):
    """A sign-in file or sources.json could not be read or written (the message names paths, never values)."""


def signins_dir() -> Path:
    """The folder holding one file per Google sign-in."""
    return config_dir() / "google"


def git_work_tree(path: Path) -> Path | None:
    """The git work tree that contains ``path`` (a parent with ``.git``), or None."""
    for parent in [path, *path.parents]:
        if (parent / ".git").exists():
            return parent
    return None


def signin_path(email: str | None, out: Path | None = None) -> Path:
    """Where a sign-in is written: ``out`` if given, else ``<config>/google/<email>.json``."""
    if out is not None:
        return out.expanduser().resolve()
    name = re.sub(r"[^A-Za-z0-9@._+-]", "_", email or "") or "account-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return signins_dir() / f"{name}.json"


def check_location(path: Path, explicit: bool) -> None:
    """Refuse a default location inside a git work tree (a token must not end up in a commit)."""
    if explicit:
        return
    tree = git_work_tree(path.parent)
    if tree is not None:
        raise StoreError(f"The config folder {path.parent} is inside the git work tree {tree}: "
                         "pass --out FILE to choose where the sign-in is written.")


def save_signin(path: Path, credentials: dict[str, Any], explicit: bool) -> None:
    """Write the credentials file (mode 0600; its folder 0700 when it is ours)."""
    check_location(path, explicit)
    try:
        if explicit:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        else:
            _private_dir(path.parent.parent)
            _private_dir(path.parent)
        write_atomic(path, json.dumps(credentials, indent=2) + "\n", 0o600)
    except OSError as exc:
        raise StoreError(f"Cannot write {path}: {exc.strerror or type(exc).__name__}.") from None


def scopes_dropped(path: Path, scopes: list[str]) -> list[str]:
    """Scopes an existing sign-in at ``path`` had that ``scopes`` lacks (overwriting it loses them)."""
    try:
        old = read_signin(path).get("scopes") or []
    except StoreError:
        return []
    return [str(s) for s in old if s not in scopes]


def read_signin(path: Path) -> dict[str, Any]:
    """A stored sign-in (a JSON object with ``type`` authorized_user)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise StoreError(f"Cannot read {path}: {exc.strerror or type(exc).__name__}.") from None
    except ValueError:
        raise StoreError(f"{path} is not valid JSON.") from None
    if not isinstance(data, dict) or data.get("type") != "authorized_user":
        raise StoreError(f"{path} is not a sign-in written by analytics-acp login google.")
    return data


def list_signins() -> list[tuple[Path, dict[str, Any]]]:
    """Stored sign-ins of the config folder, by file name; unreadable files are skipped."""
    folder = signins_dir()
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            found.append((path, read_signin(path)))
        except StoreError:
            continue
    return found


def public_view(data: dict[str, Any]) -> dict[str, Any]:
    """A sign-in without its secrets (what --list may show)."""
    return {k: v for k, v in data.items() if k not in SECRET_FIELDS}


def load_sources(path: Path) -> dict[str, Any]:
    """sources.json as a dict (checked before the browser opens, so a typo costs nothing)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise StoreError(f"{path} not found: create sources.json first or drop --sources.") from None
    except OSError as exc:
        raise StoreError(f"Cannot read {path}: {exc.strerror or type(exc).__name__}.") from None
    except ValueError as exc:
        line = getattr(exc, "lineno", "?")
        raise StoreError(f"{path} is not valid JSON (line {line}): fix it before signing in.") from None
    if not isinstance(data, dict) or not isinstance(data.get("sources"), list):
        raise StoreError(f"{path} must be an object with a \"sources\" array.")
    return data


def find_source(data: dict[str, Any], source_id: str, path: Path) -> dict[str, Any]:
    """The entry of ``sources`` with that id."""
    for entry in data["sources"]:
        if isinstance(entry, dict) and entry.get("id") == source_id:
            return entry
    ids = [str(e.get("id")) for e in data["sources"] if isinstance(e, dict)]
    raise StoreError(f"No source {source_id!r} in {path} (sources: {', '.join(ids) or 'none'}).")


def point_source_at(sources: Path, source_id: str, credentials_file: Path) -> None:
    """Set that source's ``credentials`` to ``{"file": credentials_file}``; the rest of sources.json is kept as it was."""
    data = load_sources(sources)
    find_source(data, source_id, sources)["credentials"] = {"file": str(credentials_file)}
    try:
        mode = sources.stat().st_mode & 0o777
        write_atomic(sources, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode)
    except OSError as exc:
        raise StoreError(f"Cannot write {sources}: {exc.strerror or type(exc).__name__}.") from None
