"""Install a server zip into a servers directory, as a host does (13.1.1); uninstall one (13.1).

The transaction: validate the zip and acp.json, extract into ``<dir>/.<id>.install-<rand>``
(next to the destination, so the final rename stays on one filesystem), start the server from
there and require ACP + tools/list, and only then swap folders (old aside, new in, old removed).
Any failure removes the staging folder and leaves the previous version untouched.
"""

from __future__ import annotations

import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from .launch import Progress, ServerFailed, probe_sync, stdio_launch
from .manifest import ID_PATTERN, ManifestError, load_manifest
from .ziprules import ZipRefused, extract_plan, read_plan

BUNDLE_MARK = ".bundle-hash"  # 13.1: bundled servers carry it and cannot be uninstalled


class InstallError(RuntimeError):
    """Installing or uninstalling failed; nothing was changed. The message says why."""


@dataclass
class Installed:
    """The result of a successful install."""

    id: str
    name: str
    version: str
    folder: Path
    replaced: bool
    tools: list[str]


def install_zip(zip_path: Path, servers_dir: Path, *, timeout: float = 60.0, env: dict[str, str] | None = None,
                progress: Progress | None = None, progress_every: float | None = None) -> Installed:
    """Install ``zip_path`` into ``servers_dir/<id>``; raises InstallError and keeps the old version on failure.

    ``progress``/``progress_every``: lines about the start-up wait (see :func:`launch.probe`).
    """
    zip_path, servers_dir = Path(zip_path), Path(servers_dir)
    try:
        plan = read_plan(zip_path)
    except (ZipRefused, ManifestError) as exc:
        raise InstallError(str(exc)) from None
    ident = plan.manifest["id"]
    servers_dir.mkdir(parents=True, exist_ok=True)
    dest = servers_dir / ident
    staging = servers_dir / f".{ident}.install-{secrets.token_hex(4)}"
    try:
        if progress is not None:
            progress(f"Extracting {len(plan.members)} entries of {zip_path.name} into {staging}.")
        extract_plan(zip_path, plan, staging)
        manifest = load_manifest(staging)
        if manifest["id"] != ident:
            raise InstallError(f"acp.json changed while extracting (id {manifest['id']!r} != {ident!r}).")
        # 13.1.1 step 3: the server must start from the staging folder and speak ACP.
        result = probe_sync(stdio_launch(staging, manifest), env=env, timeout=timeout, require_reserved=False,
                            progress=progress, progress_every=progress_every)
        replaced = _swap(staging, dest)
    except (ZipRefused, ManifestError, ServerFailed, OSError) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise InstallError(f"{ident}: {exc}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Installed(id=ident, name=str(manifest.get("name")), version=str(manifest.get("version", "")),
                     folder=dest, replaced=replaced, tools=result.tools)


def _swap(staging: Path, dest: Path) -> bool:
    """Old folder aside, new folder in, old removed; on a failed rename the old one comes back."""
    if not dest.exists():
        os.rename(staging, dest)
        return False
    aside = dest.with_name(f".{dest.name}.old-{secrets.token_hex(4)}")
    os.rename(dest, aside)
    try:
        os.rename(staging, dest)
    except OSError:
        os.rename(aside, dest)
        raise
    shutil.rmtree(aside, ignore_errors=True)
    return True


def uninstall(ident: str, servers_dir: Path) -> Path:
    """Remove ``servers_dir/<id>`` (renamed aside first, so it disappears at once); returns the removed path."""
    if not ID_PATTERN.match(ident or ""):
        raise InstallError(f"{ident!r} is not a server id (^[a-z][a-z0-9_-]*$).")
    folder = Path(servers_dir) / ident
    if not (folder / "acp.json").is_file():
        raise InstallError(f"No server {ident!r} is installed in {servers_dir} (no {ident}/acp.json).")
    if (folder / BUNDLE_MARK).exists():
        raise InstallError(f"{ident!r} is bundled with the host ({BUNDLE_MARK}); bundled servers cannot be uninstalled (13.1).")
    aside = folder.with_name(f".{ident}.uninstall-{secrets.token_hex(4)}")
    os.rename(folder, aside)
    shutil.rmtree(aside, ignore_errors=True)
    return folder
