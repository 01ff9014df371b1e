"""``analytics-acp build``: freeze a connector into ``dist/<id>/`` and ``dist/<id>-<version>.zip``, then verify.

Stages (one spinner each, on stderr): build venv, declaration, freeze, assemble, zip, verify.
Everything is written next to ``dist`` under temporary names and renamed at the end, so a
failing build exits non-zero and leaves no half-written folder or zip.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .freeze import BuildFailed, ensure_venv, freeze, read_connector, read_declaration, repo_root
from .launch import ServerFailed, probe_sync, stdio_launch
from .manifest import ManifestError, load_manifest, manifest_problems
from .package import assemble, folder_size
from .settings import load_settings
from .ziprules import ZipRefused, extract_plan, read_plan, write_zip


@dataclass
class BuildResult:
    """One row of the final table."""

    connector: str
    version: str = ""
    folder: Path | None = None
    zip: Path | None = None
    folder_bytes: int = 0
    zip_bytes: int = 0
    seconds: float = 0.0
    verification: str = "not run"
    ok: bool = False
    error: str | None = None
    reused_venv: bool = False


def default_work_dir() -> Path:
    """Cache folder of build venvs and PyInstaller work (``build/work``, gitignored)."""
    env = os.environ.get("ANALYTICS_ACP_BUILD_WORK")
    return Path(env) if env else repo_root() / "build" / "work"


def verify_zip(zip_path: Path, *, timeout: float = 90.0) -> str:
    """The build's verification = check's quick subset on the zip as a host would install it (13.1.1)."""
    with tempfile.TemporaryDirectory(prefix="analytics-acp-verify-") as tmp:
        plan = read_plan(zip_path)
        folder = Path(tmp) / plan.manifest["id"]
        extract_plan(zip_path, plan, folder)
        manifest = load_manifest(folder)
        problems = manifest_problems(manifest, folder)
        if problems:
            raise ManifestError("acp.json: " + "; ".join(problems))
        env = {"ACP_CACHE_DIR": str(Path(tmp) / "cache"), "ACP_TMP_DIR": str(Path(tmp) / "tmp")}
        result = probe_sync(stdio_launch(folder, manifest), env=env, timeout=timeout, require_reserved=True)
    return f"ok: ACP {(result.capability or {}).get('version')}, {len(result.tools)} tools"


def _publish(staging: Path, final: Path) -> None:
    """Replace ``final`` with ``staging`` (old aside, new in, old removed)."""
    if final.exists():
        aside = final.with_name(f".{final.name}.old-{secrets.token_hex(4)}")
        os.rename(final, aside)
        try:
            os.rename(staging, final)
        except OSError:
            os.rename(aside, final)
            raise
        shutil.rmtree(aside, ignore_errors=True)
    else:
        os.rename(staging, final)


Stage = Callable[[str], Any]


def build_one(target: str, out: Path, *, work: Path | None = None, verify: bool = True,
              stage: Stage | None = None, timeout: float = 90.0) -> BuildResult:
    """Build one connector (id or folder path) into ``out``; never raises for build errors (see ``error``)."""
    started = time.monotonic()
    stage = stage or (lambda name: None)
    result = BuildResult(connector=target)
    out = Path(out).resolve()
    work = Path(work or default_work_dir()).resolve()
    staging: Path | None = None
    zip_tmp: Path | None = None
    try:
        out.mkdir(parents=True, exist_ok=True)
        work.mkdir(parents=True, exist_ok=True)
        source = read_connector(target)
        result.connector = source.id
        log = work / "logs" / f"{source.id}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("")
        settings = load_settings(source.id, source.folder)
        stage("build venv")
        venv, result.reused_venv = ensure_venv(source, settings, work, log)
        stage("declaration")
        declaration = read_declaration(venv, source, settings, log)
        result.version = declaration["version"]
        stage("freeze")
        frozen = freeze(source, settings, declaration, venv, work, log)
        stage("assemble")
        staging = out / f".{source.id}.build-{secrets.token_hex(4)}"
        assemble(frozen, staging, source.folder, declaration)
        stage("zip")
        zip_name = f"{source.id}-{declaration['version']}.zip"
        zip_tmp = out / f".{zip_name}.{secrets.token_hex(4)}.building"
        write_zip(staging, zip_tmp, root_name=source.id)
        if verify:
            stage("verify")
            result.verification = verify_zip(zip_tmp, timeout=timeout)
        else:
            result.verification = "skipped"
        final = out / source.id
        _publish(staging, final)
        staging = None
        os.replace(zip_tmp, out / zip_name)
        zip_tmp = None
        result.folder, result.zip = final, out / zip_name
        result.folder_bytes, result.zip_bytes = folder_size(final), result.zip.stat().st_size
        result.ok = True
    except (BuildFailed, ServerFailed, ManifestError, ZipRefused, ValueError, OSError) as exc:
        result.error = str(exc)
        if result.verification == "not run" and isinstance(exc, ServerFailed | ZipRefused | ManifestError):
            result.verification = "failed"
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        if zip_tmp is not None:
            zip_tmp.unlink(missing_ok=True)
        result.seconds = time.monotonic() - started
    return result


def human_size(n: float) -> str:
    """Bytes in binary units (KiB/MiB/GiB: the divisor is 1024, so the label says so)."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)
