"""``analytics-acp new <id>`` (issue 13 item 6): a complete connector that passes its own tests and the kit."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from analytics_acp.cli import main

EXPECTED = [
    "README.md",
    "icon.svg",
    "pyproject.toml",
    "skills/shop-stats-basics/SKILL.md",
    "src/analytics_acp_shop_stats/__init__.py",
    "src/analytics_acp_shop_stats/arguments.py",
    "src/analytics_acp_shop_stats/blocks.py",
    "src/analytics_acp_shop_stats/constants.py",
    "src/analytics_acp_shop_stats/declaration.py",
    "src/analytics_acp_shop_stats/plugin.py",
    "src/analytics_acp_shop_stats/resources.py",
    "src/analytics_acp_shop_stats/tools.py",
    "tests/test_shop_stats_conformance.py",
    "tests/test_shop_stats_tools.py",
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "connectors" / "existing").mkdir(parents=True)
    return tmp_path


@pytest.mark.parametrize("bad", ["Shop", "1shop", "shop-stats", "class", "shop stats", "", "existing"])
def test_new_refuses_invalid_or_existing_ids(repo, bad, capsys):
    assert main(["new", bad, "--root", str(repo)]) == 2
    assert "analytics-acp new:" in capsys.readouterr().err
    assert sorted(p.name for p in (repo / "connectors").iterdir()) == ["existing"]


def test_new_needs_a_connectors_folder(tmp_path, capsys):
    assert main(["new", "shop", "--root", str(tmp_path)]) == 2
    assert "no connectors/ folder" in capsys.readouterr().err


def _install_like_editable(folder: Path, site: Path) -> None:
    """What an editable install leaves behind, offline: the dist-info with the pyproject's entry points."""
    project = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    lines = []
    for group, entries in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


def test_new_writes_a_connector_that_passes_its_tests_and_the_kit(repo, tmp_path):
    assert main(["new", "shop_stats", "--root", str(repo)]) == 0
    folder = repo / "connectors" / "shop_stats"
    written = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert written == sorted(EXPECTED)
    assert not any("__ID__" in p.read_text() or "__NAME__" in p.read_text() for p in folder.rglob("*") if p.is_file())
    pyproject = tomllib.loads((folder / "pyproject.toml").read_text())
    assert pyproject["project"]["entry-points"]["analytics_acp.connectors"] == {"shop_stats": "analytics_acp_shop_stats.plugin"}
    config = Path(__file__).resolve().parents[1] / "pyproject.toml"  # the repository's ruff rules
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config", str(config), str(folder)],
                          capture_output=True, text=True, timeout=120)
    assert lint.returncode == 0, lint.stdout
    site = tmp_path / "site"
    _install_like_editable(folder, site)
    paths = [str(site), str(folder / "src"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder / "tests")],
                         cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "4 passed" in run.stdout
    # Issue 27.6: declared once with lazy references: loading the connector imports neither tools.py nor blocks.py
    # (only the argument models, issue 38.1).
    declaration = (folder / "src/analytics_acp_shop_stats/declaration.py").read_text()
    assert 'run=lazy("analytics_acp_shop_stats.tools:daily_values")' in declaration
    probe = ("import sys\nfrom analytics_acp.plugins import load_connector\nloaded = load_connector('shop_stats')\n"
             "print(sorted(m for m in sys.modules if m.startswith('analytics_acp_shop_stats')), sorted(loaded.tools))")
    loaded = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert loaded.stdout.split("] [")[0] == "['analytics_acp_shop_stats', 'analytics_acp_shop_stats.arguments', " \
        "'analytics_acp_shop_stats.constants', " \
        "'analytics_acp_shop_stats.declaration', 'analytics_acp_shop_stats.plugin', 'analytics_acp_shop_stats.resources'", \
        loaded.stdout + loaded.stderr[-2000:]


def test_new_last_line_and_readmes_name_the_same_test_command(repo, capsys):
    # Issue 23.6: what `analytics-acp new` says last, the README's block and the new connector's README agree.
    import re

    assert main(["new", "shop_stats", "--root", str(repo)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    found = re.search(r"\.venv/bin/pytest connectors/(\w+)", last)
    assert found and found.group(1) == "shop_stats", last
    assert "make test" not in last  # the whole suite is not how to test one connector
    readme = (Path(__file__).resolve().parents[1] / "core" / "README.md").read_text()
    assert ".venv/bin/pytest connectors/mysource" in readme and ".venv/bin/analytics-acp new mysource" in readme
    assert found.group(0) in (repo / "connectors" / "shop_stats" / "README.md").read_text()


def test_check_passes_the_untouched_scaffold_without_a_resource_id(repo, tmp_path):
    """Issue 34.4: `analytics-acp check` (its run_check, in this process) on what `analytics-acp new` wrote, as
    written and with no resource_id: the kit takes the first resource the server suggests (6.3), else its first
    declared example (4.2); before, handshake.plain_mcp, calls.progress and calls.cancel failed on
    ACP_RESOURCE_REQUIRED. Over Streamable HTTP (`check --url`): every probe's session on one server process."""
    from analytics_acp.kit import serve_http
    from analytics_acp_build.check import Target, run_check

    assert main(["new", "shop_stats", "--root", str(repo)]) == 0
    folder = repo / "connectors" / "shop_stats"
    site = tmp_path / "site"
    _install_like_editable(folder, site)
    paths = [str(site), str(folder / "src"), os.environ.get("PYTHONPATH", "")]
    steps: list[str] = []
    serve = [sys.executable, "-m", "analytics_acp", "serve", "shop_stats", "--http"]
    with serve_http(serve, env={"PYTHONPATH": os.pathsep.join(p for p in paths if p)}) as served:
        items = run_check(Target(url=served.url), timeout=120, on_step=steps.append)
    failed = [f"{i.item}: {i.evidence}" for i in items if i.status == "fail"]
    assert not failed, failed
    assert any(s.endswith(": the first resource the server suggests (--resource-id, or resource_id= in the kit, chooses another)")
               and s.startswith("resource_id ") for s in steps), steps
    status = {i.item: i.status for i in items}
    for item in ("handshake.plain_mcp", "calls.progress", "calls.cancel", "resources.default", "autocontext.all_blocks"):
        assert status[item] == "pass", item
