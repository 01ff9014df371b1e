"""Connectors declare once (issue 27.6): declaration.py is read by plugin.py only (tool modules take shared values
from constants.py), and every lazy ``run``/``fetch`` reference names a function that exists, imported on first call,
never at load."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p for p in ROOT.glob("connectors/*/src/analytics_acp_*") if (p / "declaration.py").is_file())
PACKAGES.append(ROOT / "tests/plugins/acpexample/src/acpexample")  # the kit's reference connector, same rule
CONNECTORS = ["bigquery", "browser", "databases", "ga4", "gsc", "prediction", "example"]


def _imports_of_declaration(path: Path, package: str) -> list[int]:
    """Line numbers where ``path`` imports its package's declaration module (relative or absolute, any form)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            absolute = module if node.level == 0 else f"{package}.{module}".rstrip(".")
            names = {a.name for a in node.names}
            if absolute == f"{package}.declaration" or (absolute == package and "declaration" in names):
                lines.append(node.lineno)
        elif isinstance(node, ast.Import) and any(a.name == f"{package}.declaration" for a in node.names):
            lines.append(node.lineno)
    return lines


def test_every_connector_package_is_checked():
    assert {p.name for p in PACKAGES} >= {f"analytics_acp_{c}" for c in CONNECTORS if c != "example"}


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_only_plugin_py_imports_the_declaration(package):
    offenders = {str(path.relative_to(ROOT)): lines for path in sorted(package.rglob("*.py"))
                 if path.name != "plugin.py" and (lines := _imports_of_declaration(path, package.name))}
    assert offenders == {}, "move what these modules need into constants.py"


def test_the_check_sees_each_import_form(tmp_path):
    probe = tmp_path / "mod.py"
    probe.write_text("from .declaration import X\nfrom . import declaration\nimport pkg.declaration\n"
                     "from pkg.declaration import Y\nfrom .constants import Z\nfrom . import constants\n")
    assert _imports_of_declaration(probe, "pkg") == [1, 2, 3, 4]


PROBE = """
import inspect, json, sys
from analytics_acp.lazy import LazyRef
from analytics_acp.plugins import load_connector

loaded = load_connector(sys.argv[1], extensions=False)
refs = {f"tool {t.name}": t.run for t in loaded.tools.values()}
refs.update({f"block {b.id}": b.fetch for b in loaded.blocks.values()})
refs = {k: v for k, v in refs.items() if isinstance(v, LazyRef)}
imported_at_load = sorted({r.module for r in refs.values() if r.module in sys.modules})
targets = {k: r.resolve() for k, r in refs.items()}
print(json.dumps({"refs": len(refs), "imported_at_load": imported_at_load,
                  "async": sorted(k for k, f in targets.items() if inspect.iscoroutinefunction(f)),
                  "all_callable": all(callable(f) for f in targets.values())}))
"""

# What each connector declares lazily, and which targets are async (they must stay async: awaited on the loop).
EXPECTED = {
    "bigquery": (6, ["tool load_rows"]),
    "browser": (5, ["block page_overview", "block robots_sitemap", "block tag_setup", "tool capture", "tool screenshot"]),
    "databases": (9, ["tool insert_rows"]),
    "ga4": (19, []),
    "gsc": (12, []),
    "prediction": (2, ["tool forecast", "tool plot"]),
    "example": (12, ["tool table_stats"]),
}


@pytest.mark.parametrize("connector", CONNECTORS)
def test_lazy_references_resolve_and_are_not_imported_at_load(connector):
    out = subprocess.run([sys.executable, "-c", PROBE, connector], capture_output=True, text=True, timeout=300,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["imported_at_load"] == [] and seen["all_callable"]
    assert (seen["refs"], seen["async"]) == EXPECTED[connector]
