"""Every Python package the repository ships (core, build, each connector, each tool), for the meta-tests that
read source text: import circles, private SDK names, silent broad excepts."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_roots() -> list[Path]:
    """The import roots (``<folder>/src/<package>``) of every package, sorted."""
    found = [*ROOT.glob("core/src/*/__init__.py"), *ROOT.glob("build/src/*/__init__.py"),
             *ROOT.glob("connectors/*/src/*/__init__.py"), *ROOT.glob("tools/*/src/*/__init__.py")]
    return sorted(path.parent for path in found)


def source_files() -> list[Path]:
    """Every ``.py`` file of every package."""
    return [path for root in package_roots() for path in sorted(root.rglob("*.py"))]
