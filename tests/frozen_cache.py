"""Frozen builds for the tests: one PyInstaller build per connector, shared by every test, worker and run.

A build is the suite's largest fixed cost (20-75 s of PyInstaller each), so the build tests share it:
``frozen_build("databases")`` returns the BuildResult of a real ``build_one`` run, made once and kept in
the machine's cache, ``~/.cache/analytics-acp/test-frozen/<id>-<digest>/`` (``$XDG_CACHE_HOME`` is
honoured; ``ANALYTICS_ACP_TEST_FROZEN_CACHE`` names another folder), like pip's or uv's caches: a second
checkout of the same sources (a CI clone) reuses it. The digest is a content hash of everything the
frozen output depends on, never of where the checkout lies: the connector's folder (its tests excepted),
the workspace packages it depends on, the core, the build tool itself and its per-connector profile,
and what decides the build venv (pyproject files, PyInstaller pin, Python version). Any change there is
a new digest, hence a rebuild; a cached folder whose files differ from what the build wrote is rebuilt
too. Under pytest-xdist (or two checkouts at once) a file lock per connector id makes the first worker
build while the others wait and reuse it. ``ANALYTICS_ACP_TEST_REBUILD=1`` ignores the cache.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, fields
from pathlib import Path

from analytics_acp_build.build import BuildResult, build_one
from analytics_acp_build.freeze import (
    PYINSTALLER_REQUIREMENT,
    core_folder,
    list_connectors,
    read_connector,
    repo_root,
    workspace_dependencies,
)
from analytics_acp_build.settings import load_settings

SKIPPED_DIRS = {"tests", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache", "dist", "work"}


def _tree_files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).parts
        if path.is_file() and not any(p in SKIPPED_DIRS or p.endswith(".egg-info") for p in rel[:-1]) \
                and not path.name.endswith((".pyc", ".log")):
            yield path


def inputs_digest(target: str) -> str:
    """Content hash of what a frozen build of ``target`` (an id or a connector folder) is made from."""
    source = read_connector(target)
    h = hashlib.sha256()
    build_tool = repo_root() / "build"
    folders = [source.folder, *workspace_dependencies(source.folder), core_folder(), build_tool / "src"]
    for folder in folders:
        for path in _tree_files(folder):
            h.update(f"{path.relative_to(folder.parent)}\0".encode())
            h.update(path.read_bytes())
    h.update((build_tool / "pyproject.toml").read_bytes())
    # What decides the build venv (freeze.venv_inputs_hash), without the checkout's absolute path.
    for path in (core_folder() / "pyproject.toml", source.folder / "pyproject.toml",
                 *(dep / "pyproject.toml" for dep in workspace_dependencies(source.folder))):
        h.update(path.read_bytes())
    h.update(load_settings(source.id, source.folder).fingerprint().encode())
    # Other connectors' modules are excluded by name from the freeze, so the list is an input too.
    h.update(f"{PYINSTALLER_REQUIREMENT}|{sys.version}|{','.join(list_connectors())}".encode())
    return h.hexdigest()


def cache_root() -> Path:
    """Where cached frozen builds live (see the module doc)."""
    named = os.environ.get("ANALYTICS_ACP_TEST_FROZEN_CACHE")
    if named:
        return Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "analytics-acp" / "test-frozen"


@contextmanager
def build_lock(connector_id: str) -> Iterator[None]:
    """Exclusive lock on ``connector_id``'s cached build (shared by workers and checkouts)."""
    locks = cache_root() / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{connector_id}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _listing(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.lstat().st_size for p in folder.rglob("*") if not p.is_dir()}


def _cached(entry: Path) -> BuildResult | None:
    record = entry / "result.json"
    if not record.is_file():
        return None
    doc = json.loads(record.read_text())
    result = BuildResult(**{f.name: doc[f.name] for f in fields(BuildResult) if f.name in doc})
    result.folder, result.zip = Path(doc["folder"]), Path(doc["zip"])
    intact = (result.folder.is_dir() and result.zip.is_file() and result.zip.stat().st_size == result.zip_bytes
              and _listing(result.folder) == doc["listing"])
    return result if intact else None


def frozen_build(target: str) -> BuildResult:
    """The BuildResult of ``build_one(target)``, built once per input digest and reused (see the module doc)."""
    source = read_connector(target)
    digest = inputs_digest(target)
    root = cache_root()
    entry = root / f"{source.id}-{digest[:16]}"
    with build_lock(source.id):
        if os.environ.get("ANALYTICS_ACP_TEST_REBUILD") != "1":
            hit = _cached(entry)
            if hit is not None:
                return hit
        shutil.rmtree(entry, ignore_errors=True)
        result = build_one(target, entry / "dist")
        if result.ok:
            assert result.folder is not None
            doc = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(result).items()}
            doc["listing"] = _listing(result.folder)
            (entry / "result.json").write_text(json.dumps(doc))
            for stale in root.glob(f"{source.id}-*"):  # older digests of this connector
                if stale != entry:
                    shutil.rmtree(stale, ignore_errors=True)
        return result
