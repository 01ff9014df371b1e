"""The CLI finds its subcommands through entry points (issue 13 item 4): the core names no tool."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from analytics_acp.cli import COMMAND_GROUP, installed_commands

CORE = Path(__file__).resolve().parents[1] / "core" / "src" / "analytics_acp"


def test_help_lists_the_installed_commands():
    out = subprocess.run([sys.executable, "-m", "analytics_acp", "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    for name in ("serve", "connectors", "new", "bridge", "build", "install", "uninstall", "check", "bench"):
        assert f"    {name}" in out.stdout, out.stdout
    assert "Freeze connectors into dist/<id>/" in out.stdout  # the help is the command's own docstring


def test_commands_come_from_entry_points_and_the_core_names_no_tool():
    commands = installed_commands()
    assert {"bridge", "build", "install", "uninstall", "check", "bench"} <= set(commands)
    assert all(ep.group == COMMAND_GROUP for ep in commands.values())
    for path in CORE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for tool in ("analytics_acp_bridge", "analytics_acp_build", "analytics_acp_bench"):
            assert tool not in text, f"{path.relative_to(CORE)} names {tool}"


def test_unknown_command_is_a_usage_error():
    out = subprocess.run([sys.executable, "-m", "analytics_acp", "no_such_command"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and "invalid choice" in out.stderr


def test_serve_imports_no_tool_package():
    # Cold start (bench case 4): `serve` must not load the bridge, build or bench modules to describe them.
    code = ("import sys; from analytics_acp import cli; cli.main(['serve', 'no_such_connector']); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('analytics_acp_bridge', 'analytics_acp_build', 'analytics_acp_bench')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout + out.stderr
