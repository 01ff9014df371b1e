"""The setup of the third-party client tests: tools/setup/npm-deps.sh reinstalls exactly when the
committed lock file changed, and the external tests skip (or, under CI, fail) without node_modules."""

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "external"))
import acp_external  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "setup" / "npm-deps.sh"
FAKE_NPM = """#!/usr/bin/env bash
# Stands in for `npm ci`: records the call and lays out node_modules like the real install.
echo "$@" >> "$NPM_CALLS"
[ "$1" = "ci" ] || exit 2
rm -rf node_modules && mkdir -p node_modules/.bin
printf '#!/usr/bin/env bash\\necho v22.0.0\\n' > node_modules/.bin/node && chmod +x node_modules/.bin/node
"""


@pytest.fixture
def checkout(tmp_path):
    """A copy of the script in a fake checkout, with a fake npm on PATH."""
    (tmp_path / "tools" / "setup").mkdir(parents=True)
    (tmp_path / "tests" / "external").mkdir(parents=True)
    shutil.copy(SCRIPT, tmp_path / "tools" / "setup" / "npm-deps.sh")
    (tmp_path / "tests" / "external" / "package-lock.json").write_text('{"lockfileVersion": 3}\n')
    tools = tmp_path / "tools-bin"  # only what the script uses besides npm, so "no npm" is real
    tools.mkdir()
    for name in ("bash", "dirname", "sha256sum", "cut", "cat", "mv", "rm", "mkdir", "chmod"):
        (tools / name).symlink_to(shutil.which(name))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM)
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    return tmp_path


def run_script(checkout, *, with_npm=True, ci=False):
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["NPM_CALLS"] = str(checkout / "npm-calls.log")
    env["PATH"] = os.pathsep.join(([str(checkout / "bin")] if with_npm else []) + [str(checkout / "tools-bin")])
    if ci:
        env["CI"] = "1"
    return subprocess.run(["/bin/bash", str(checkout / "tools" / "setup" / "npm-deps.sh")], env=env,
                          capture_output=True, text=True, timeout=60)


def npm_calls(checkout):
    log = checkout / "npm-calls.log"
    return log.read_text().splitlines() if log.exists() else []


def test_installs_once_and_again_when_the_lock_changes(checkout):
    assert run_script(checkout).returncode == 0
    assert [c.split()[0] for c in npm_calls(checkout)] == ["ci"]
    assert run_script(checkout).returncode == 0
    assert len(npm_calls(checkout)) == 1  # lock unchanged: nothing to do
    (checkout / "tests" / "external" / "package-lock.json").write_text('{"lockfileVersion": 3, "x": 1}\n')
    assert run_script(checkout).returncode == 0
    assert len(npm_calls(checkout)) == 2  # lock changed: npm ci again


def test_reinstalls_a_deleted_node_modules(checkout):
    run_script(checkout)
    shutil.rmtree(checkout / "tests" / "external" / "node_modules")
    assert run_script(checkout).returncode == 0
    assert len(npm_calls(checkout)) == 2


def test_without_npm_warns_locally_and_fails_in_ci(checkout):
    local = run_script(checkout, with_npm=False)
    assert local.returncode == 0 and "will skip" in local.stderr
    ci = run_script(checkout, with_npm=False, ci=True)
    assert ci.returncode == 1 and "required in CI" in ci.stderr


def test_missing_clients_skip_locally_and_fail_in_ci(monkeypatch, tmp_path):
    monkeypatch.setattr(acp_external, "NODE", tmp_path / "no-node")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="make npm-deps"):
        acp_external.require_npm_clients()
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="make npm-deps"):
        acp_external.require_npm_clients()
