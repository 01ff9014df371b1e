"""Per-connector build settings: a built-in profile merged with the connector's optional ``build.toml``.

``build.toml`` (in the connector folder) may hold::

    [pyinstaller]
    hidden_imports = ["sqlalchemy.dialects.postgresql.psycopg"]
    collect_submodules = []       # packages whose submodules are all frozen
    collect_data = []             # packages whose data files are frozen
    copy_metadata = []            # distributions whose metadata is kept (importlib.metadata)
    excludes = []                 # modules the connector never imports
    add_data = []                 # "relative/source:dest" pairs, relative to the connector folder
    entry_point_groups = []       # entry-point groups whose targets are frozen as hidden imports
    [venv]
    extra_packages = []           # extra requirements for the build venv
    [googleapiclient]
    discovery = ["searchconsole.v1"]   # keep only these discovery documents (size hygiene)

Lists from the profile and from build.toml are concatenated (duplicates dropped).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

# What no connector needs in a frozen server (GUI toolkits, test runners, notebooks).
DEFAULT_EXCLUDES = [
    "tkinter", "_tkinter", "turtle", "turtledemo", "idlelib", "pydoc_data", "lib2to3", "test",
    "pytest", "_pytest", "IPython", "ipykernel", "jupyter_client", "notebook",
    "PyQt5", "PyQt6", "PySide2", "PySide6", "wx", "gi",
    "analytics_acp.kit", "analytics_acp_build", "analytics_acp_bridge", "analytics_acp_bench",
]
DEFAULT_ENTRY_POINT_GROUPS = ["analytics_acp.plugins", "sqlalchemy.dialects"]
LIST_KEYS = ("hidden_imports", "collect_submodules", "collect_data", "copy_metadata", "excludes", "add_data",
             "entry_point_groups")


@dataclass
class BuildSettings:
    """Everything the freeze step takes from settings."""

    hidden_imports: list[str] = field(default_factory=list)
    collect_submodules: list[str] = field(default_factory=list)
    collect_data: list[str] = field(default_factory=list)
    copy_metadata: list[str] = field(default_factory=list)
    excludes: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDES))
    add_data: list[str] = field(default_factory=list)
    entry_point_groups: list[str] = field(default_factory=lambda: list(DEFAULT_ENTRY_POINT_GROUPS))
    extra_packages: list[str] = field(default_factory=list)
    discovery_keep: list[str] | None = None  # None = googleapiclient documents untouched

    def merge(self, doc: dict[str, Any], where: str) -> None:
        """Append the lists of one settings document."""
        pyi = doc.get("pyinstaller") or {}
        for key in LIST_KEYS:
            value = pyi.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{where}: [pyinstaller].{key} must be a list of strings.")
            setattr(self, key, list(dict.fromkeys([*getattr(self, key), *value])))
        extra = (doc.get("venv") or {}).get("extra_packages", [])
        if not isinstance(extra, list):
            raise ValueError(f"{where}: [venv].extra_packages must be a list of strings.")
        self.extra_packages = list(dict.fromkeys([*self.extra_packages, *extra]))
        keep = (doc.get("googleapiclient") or {}).get("discovery")
        if keep is not None:
            self.discovery_keep = list(dict.fromkeys([*(self.discovery_keep or []), *keep]))

    def fingerprint(self) -> str:
        """Stable text of the settings that shape the build venv (part of its inputs hash)."""
        return repr(sorted(self.extra_packages))


def load_settings(connector_id: str, connector_dir: Path) -> BuildSettings:
    """The built-in profile of ``connector_id`` (if any) plus ``connector_dir/build.toml`` (if any)."""
    settings = BuildSettings()
    profile = resources.files("analytics_acp_build") / "profiles" / f"{connector_id}.toml"
    if profile.is_file():
        settings.merge(tomllib.loads(profile.read_text(encoding="utf-8")), f"profile {connector_id}.toml")
    own = Path(connector_dir) / "build.toml"
    if own.is_file():
        try:
            doc = tomllib.loads(own.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{own}: {exc}") from None
        settings.merge(doc, str(own))
    return settings
