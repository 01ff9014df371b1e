"""Suite-wide fixtures: network fence for this process and every subprocess, private ACP dirs."""

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
NETGUARD = ROOT / "tests" / "netguard"

# Subprocesses (ACP servers under test) inherit these and load the same fence.
os.environ["ANALYTICS_ACP_NETGUARD"] = "1"
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(NETGUARD), os.environ.get("PYTHONPATH", "")) if p)
# This process: load the fence now (sitecustomize only runs at interpreter start).
_spec = importlib.util.spec_from_file_location("analytics_acp_netguard", NETGUARD / "sitecustomize.py")
_spec.loader.exec_module(importlib.util.module_from_spec(_spec))


@pytest.fixture(autouse=True)
def _acp_dirs(tmp_path_factory, monkeypatch):
    """Each test gets its own ACP_CACHE_DIR and ACP_TMP_DIR, so no state leaks between tests."""
    base = tmp_path_factory.mktemp("acp")
    monkeypatch.setenv("ACP_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("ACP_TMP_DIR", str(base / "tmp"))
    yield
