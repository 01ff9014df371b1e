"""The top of README.md is for people with data (issue 34.5): the two commands first, then how to use
it with their own sources, then the protocol; and every command the top shows exists with its flags."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _top() -> str:
    text = README.read_text(encoding="utf-8")
    return text.split("\n## Repository", 1)[0]


def test_the_readme_opens_with_the_two_commands_then_own_data_then_the_protocol():
    text = _top()
    first_block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    assert [line.split()[:2] for line in first_block.strip().splitlines()] == [["make", "demo"], ["make", "test"]]
    own, how = text.index("## With your own data"), text.index("## How it works")
    assert text.index("make demo") < own < how
    # Protocol internals wait for "How it works" (and core/README.md).
    for internal in ("_meta.acp", "hookspec", "acp/configure"):
        assert internal not in text[:how], internal
    for product in ("Google Analytics 4", "Search Console", "BigQuery", "database"):
        assert product in text[:text.index("```")], product


def test_every_command_the_top_shows_exists_with_its_flags():
    commands = re.findall(r"`\.venv/bin/analytics-acp ([^`]+)`", _top())
    assert any(c.startswith("ui ") for c in commands) and any(c.startswith("bridge ") for c in commands)
    for command in commands:
        words = command.split()
        help_text = subprocess.run([sys.executable, "-m", "analytics_acp", words[0], "--help"], capture_output=True,
                                   text=True, timeout=120).stdout
        for flag in (w for w in words if w.startswith("--")):
            assert flag in help_text, f"README shows `{command}` but `{words[0]} --help` has no {flag}"
