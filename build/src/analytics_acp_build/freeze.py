"""Freeze one connector with PyInstaller ``--onedir`` from a venv holding only the core and that connector.

The build venv lives under the cache folder (``build/work/venvs/<id>-<folder hash>``) and is reused while the
hash of its inputs (core, connector and workspace-dependency pyproject.toml, extra packages, PyInstaller pin,
Python version) is unchanged; the packages are installed editable, so source edits need no reinstall.
Workspace packages a connector depends on (analytics-acp-google) are not on PyPI: they are installed
editable from their folders too.
The frozen entry imports the connector's plugin module explicitly and serves it through
``analytics_acp.cli.serve_module_main`` (PyInstaller does not carry entry points).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .settings import BuildSettings

PYINSTALLER_REQUIREMENT = "pyinstaller>=6.22,<7"
CONNECTOR_GROUP = "analytics_acp.connectors"
# Distributions of the build tool itself: never copied into a frozen server.
TOOLING_DISTS = {"pyinstaller", "pyinstaller-hooks-contrib", "altgraph", "pip", "setuptools", "wheel", "uv"}


class BuildFailed(RuntimeError):
    """A build stage failed; the message says which and why (with the tail of the tool's output)."""


@dataclass
class ConnectorSource:
    """A connector folder as the build sees it."""

    id: str
    folder: Path
    distribution: str
    plugin_module: str


def core_folder() -> Path:
    """The core's source folder (``core/``, holding pyproject.toml), from the installed analytics_acp."""
    import analytics_acp

    folder = Path(analytics_acp.__file__).resolve().parents[2]
    if not (folder / "pyproject.toml").is_file():
        raise BuildFailed(f"The core is not installed from source (no pyproject.toml in {folder}); run 'make venv'.")
    return folder


def repo_root() -> Path:
    """The monorepo root (the folder holding core/ and connectors/)."""
    return core_folder().parent


def read_connector(target: str) -> ConnectorSource:
    """A connector from an id (``connectors/<id>``) or a path to a connector folder."""
    path = Path(target)
    folder = path if (path / "pyproject.toml").is_file() else repo_root() / "connectors" / target
    pyproject = folder / "pyproject.toml"
    if not pyproject.is_file():
        known = ", ".join(list_connectors()) or "none"
        raise BuildFailed(f"No connector {target!r}: {pyproject} does not exist. Connectors here: {known}.")
    try:
        doc = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise BuildFailed(f"{pyproject}: {exc}") from None
    project = doc.get("project") or {}
    eps = ((project.get("entry-points") or {}).get(CONNECTOR_GROUP)) or {}
    if len(eps) != 1:
        raise BuildFailed(f"{pyproject} must declare exactly one [project.entry-points.\"{CONNECTOR_GROUP}\"] entry (found {len(eps)}).")
    (ident, module), = eps.items()
    return ConnectorSource(id=ident, folder=folder.resolve(), distribution=project.get("name", ident),
                           plugin_module=module.split(":")[0])


def _project(pyproject: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project") or {}
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def list_connectors() -> list[str]:
    """Ids of the connectors in ``connectors/*``: folders whose pyproject.toml declares a connector entry point.

    Shared workspace packages there (connectors/google: no entry point) are not connectors.
    """
    root = repo_root() / "connectors"
    if not root.is_dir():
        return []
    return sorted(p.parent.name for p in root.glob("*/pyproject.toml")
                  if ((_project(p).get("entry-points") or {}).get(CONNECTOR_GROUP)))


def _dist_key(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def workspace_dependencies(folder: Path) -> list[Path]:
    """Workspace members (connectors/*, tools/*) that the package in ``folder`` depends on, transitively.

    They are not on PyPI (e.g. analytics-acp-google), so the build venv installs them editable from here.
    """
    root = repo_root()
    members: dict[str, Path] = {}
    for pyproject in [*root.glob("connectors/*/pyproject.toml"), *root.glob("tools/*/pyproject.toml")]:
        name = _project(pyproject).get("name")
        if name:
            members[_dist_key(name)] = pyproject.parent.resolve()
    found: list[Path] = []
    todo = [folder.resolve()]
    while todo:
        current = todo.pop()
        for req in _project(current / "pyproject.toml").get("dependencies") or []:
            match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
            dep = members.get(_dist_key(match.group(1))) if match else None
            if dep is not None and dep != folder.resolve() and dep not in found:
                found.append(dep)
                todo.append(dep)
    return found


def _uv() -> list[str]:
    for candidate in (Path(sys.executable).with_name("uv"), shutil.which("uv")):
        if candidate and Path(candidate).is_file():
            return [str(candidate)]
    return [sys.executable, "-m", "uv"]


def _run(cmd: list[str], what: str, log: Path, *, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run ``cmd``; append its output to ``log``; raise BuildFailed with the tail on failure."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}\n")
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
        raise BuildFailed(f"{what} failed (exit {proc.returncode}):\n" + "\n".join(tail) + f"\n(full log: {log})")
    return proc.stdout


def _clean_env() -> dict[str, str]:
    # The suite's network fence and similar PYTHONPATH additions must not leak into the build tools.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return env


def venv_inputs_hash(source: ConnectorSource, settings: BuildSettings) -> str:
    """Hash of what decides the build venv's contents."""
    h = hashlib.sha256()
    for path in (core_folder() / "pyproject.toml", source.folder / "pyproject.toml",
                 *(dep / "pyproject.toml" for dep in workspace_dependencies(source.folder))):
        h.update(path.read_bytes())
    h.update(f"{PYINSTALLER_REQUIREMENT}|{sys.version}|{settings.fingerprint()}|{source.folder}".encode())
    return h.hexdigest()


def venv_python(venv: Path) -> Path:
    """The interpreter of a venv."""
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def venv_dir(source: ConnectorSource, work: Path) -> Path:
    """Where the connector's build venv lives under the cache folder ``work``."""
    # Keyed by id and folder, so a test copy of a connector does not evict the real one's venv.
    return work / "venvs" / f"{source.id}-{hashlib.sha256(str(source.folder).encode()).hexdigest()[:8]}"


def ensure_venv(source: ConnectorSource, settings: BuildSettings, work: Path, log: Path) -> tuple[Path, bool]:
    """Create (or reuse) the connector's build venv; returns (venv, reused)."""
    venv = venv_dir(source, work)
    stamp = venv / ".analytics-acp-build-inputs"
    digest = venv_inputs_hash(source, settings)
    if stamp.is_file() and stamp.read_text().strip() == digest and venv_python(venv).is_file():
        return venv, True
    if venv.exists():
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    env = _clean_env()
    _run([*_uv(), "venv", "-q", "--python", sys.executable, str(venv)], "Creating the build venv", log, env=env)
    _run([*_uv(), "pip", "install", "-q", "--no-sources", "--python", str(venv_python(venv)),
          "-e", str(core_folder()), *(arg for dep in workspace_dependencies(source.folder) for arg in ("-e", str(dep))),
          "-e", str(source.folder), PYINSTALLER_REQUIREMENT, *settings.extra_packages],
         "Installing the core, the connector (with its workspace dependencies) and PyInstaller into the build venv",
         log, env=env)
    stamp.write_text(digest)
    return venv, False


_DECLARATION_SCRIPT = r"""
import importlib, json, sys
from importlib.metadata import distributions
from analytics_acp.lazy import LazyRef
from analytics_acp.plugins import load_connector
module = importlib.import_module(sys.argv[1])
loaded = load_connector(module, extensions=False)
info = loaded.info
# Lazy references name modules PyInstaller cannot see (imported on first use, possibly from another
# workspace package such as analytics_acp_google): each becomes a hidden import.
refs = [info.check_setup, *(t.run for t in loaded.tools.values()), *(b.fetch for b in loaded.blocks.values())]
lazy_modules = sorted({r.module for r in refs if isinstance(r, LazyRef)})
groups = set(sys.argv[2].split(",")) if sys.argv[2] else set()
dists, hidden, mypyc = [], [], []
for dist in distributions():
    name = dist.metadata["Name"]
    if name:
        dists.append(name)
    for ep in dist.entry_points:
        if ep.group in groups:
            hidden.append(ep.value.split(":")[0])
    # A module compiled by mypyc (sqlglotc's) is a small extension that imports its code from a sibling
    # extension, "<module>__mypyc", from C: PyInstaller collects the first and never sees the second.
    for file in dist.files or ():
        folder, _, leaf = str(file).replace("\\", "/").rpartition("/")
        stem, dot, _ = leaf.partition(".")
        if folder and dot and stem.endswith("__mypyc") and leaf.endswith((".so", ".pyd")):
            mypyc.append(folder.replace("/", ".") + "." + stem)
print(json.dumps({"id": info.id, "name": info.name, "version": info.version, "publisher": info.publisher,
                  "description": info.description, "icon": info.icon,
                  "package_dir": str(info.package_dir) if info.package_dir else None,
                  "distributions": sorted(set(dists)), "entry_point_modules": sorted(set(hidden)),
                  "lazy_modules": lazy_modules, "mypyc_modules": sorted(set(mypyc))}))
"""


def read_declaration(venv: Path, source: ConnectorSource, settings: BuildSettings, log: Path) -> dict[str, Any]:
    """Load the connector inside its build venv: its identity (for acp.json) and the venv's distributions."""
    out = _run([str(venv_python(venv)), "-c", _DECLARATION_SCRIPT, source.plugin_module, ",".join(settings.entry_point_groups)],
               f"Loading the {source.id} declaration in its build venv", log, env=_clean_env())
    try:
        info = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise BuildFailed(f"The {source.id} declaration could not be read (see {log}).") from None
    if info["id"] != source.id:
        raise BuildFailed(f"The entry point is named {source.id!r} but the declaration's id is {info['id']!r}; they must match.")
    return info


ENTRY_TEMPLATE = '''"""Frozen entry of the {id} ACP server (generated by analytics-acp build; do not edit)."""

import multiprocessing
import sys

import {module} as plugin  # explicit: entry points do not survive freezing

from analytics_acp.cli import serve_module_main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(serve_module_main(plugin, sys.argv[1:]))
'''


def executable_name(connector_id: str) -> str:
    """File name of the frozen server inside its folder."""
    return f"{connector_id}-server" + (".exe" if os.name == "nt" else "")


def pyinstaller_args(source: ConnectorSource, settings: BuildSettings, declaration: dict[str, Any],
                     entry: Path, stage: Path) -> list[str]:
    """The PyInstaller command line (without the interpreter)."""
    name = executable_name(source.id).removesuffix(".exe")
    args = ["-m", "PyInstaller", "--onedir", "--noconfirm", "--log-level", "WARN", "--name", name,
            "--distpath", str(stage / "dist"), "--workpath", str(stage / "pyi"), "--specpath", str(stage),
            "--hidden-import", source.plugin_module,
            # The connector's own lazily imported modules (heavy imports happen on first use).
            "--collect-submodules", source.plugin_module.rsplit(".", 1)[0],
            # ijson picks its backend with importlib (the core's table-file reader, foreign layouts).
            "--hidden-import", "ijson.backends.yajl2_c", "--hidden-import", "ijson.backends.python"]
    others = [f"analytics_acp_{c}" for c in list_connectors() if c != source.id]
    for mod in [*settings.excludes, *others]:
        args += ["--exclude-module", mod]
    for mod in [*settings.hidden_imports, *declaration.get("entry_point_modules", []),
                *declaration.get("lazy_modules", []), *declaration.get("mypyc_modules", [])]:
        args += ["--hidden-import", mod]
    for pkg in settings.collect_submodules:
        args += ["--collect-submodules", pkg]
    for pkg in settings.collect_data:
        args += ["--collect-data", pkg]
    # Keep every runtime distribution's metadata: importlib.metadata.version() and entry points
    # (SQLAlchemy dialects, extension plugins) keep working when frozen.
    keep = [d for d in declaration.get("distributions", []) if d.lower().replace("_", "-") not in TOOLING_DISTS]
    for dist in dict.fromkeys([*keep, *settings.copy_metadata]):
        args += ["--copy-metadata", dist]
    for pair in settings.add_data:
        src, _, dest = pair.partition(":")
        args += ["--add-data", f"{(source.folder / src).resolve()}{os.pathsep}{dest or '.'}"]
    args.append(str(entry))
    return args


def freeze(source: ConnectorSource, settings: BuildSettings, declaration: dict[str, Any], venv: Path,
           work: Path, log: Path) -> Path:
    """Run PyInstaller; returns the onedir output folder (executable + _internal/)."""
    stage = work / "freeze" / source.id
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    entry = stage / f"{source.id.replace('-', '_')}_acp_entry.py"
    entry.write_text(ENTRY_TEMPLATE.format(id=source.id, module=source.plugin_module), encoding="utf-8")
    env = _clean_env()
    env["PYINSTALLER_CONFIG_DIR"] = str(work / "pyinstaller-cache")
    _run([str(venv_python(venv)), *pyinstaller_args(source, settings, declaration, entry, stage)],
         f"PyInstaller ({source.id})", log, cwd=stage, env=env)
    out = stage / "dist" / executable_name(source.id).removesuffix(".exe")
    if not (out / executable_name(source.id)).is_file():
        raise BuildFailed(f"PyInstaller finished but {out / executable_name(source.id)} is missing (see {log}).")
    prune_discovery(out, settings.discovery_keep)
    return out


def prune_discovery(frozen: Path, keep: list[str] | None) -> int:
    """Drop googleapiclient discovery documents other than ``keep`` (e.g. "searchconsole.v1"); returns bytes freed."""
    if keep is None:
        return 0
    freed = 0
    for docs in frozen.rglob("googleapiclient/discovery_cache/documents"):
        for doc in docs.glob("*.json"):
            if doc.stem not in keep:
                freed += doc.stat().st_size
                doc.unlink()
    return freed
