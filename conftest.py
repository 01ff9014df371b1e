"""Suite-wide fixtures: network fence for this process and every subprocess, private ACP dirs, frozen
builds shared by every worker and run, and the `slow` marks of `make test-fast` (tests/README.md)."""

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
NETGUARD = ROOT / "tests" / "netguard"
SLOW_LIST = ROOT / "tests" / "slow_tests.txt"

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


@pytest.fixture(scope="session")
def frozen_build():
    """``frozen_build(id_or_folder) -> BuildResult``: the connector's frozen build, made once (content-hash
    cache under build/work/test-frozen, shared by xdist workers and later runs; tests/frozen_cache.py)."""
    spec = importlib.util.spec_from_file_location("analytics_acp_frozen_cache", ROOT / "tests" / "frozen_cache.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.frozen_build


def _slow_costs() -> dict[str, float]:
    """nodeid -> seconds of the tests profiled as slow (tests/slow_tests.txt: seconds, a tab, the node id)."""
    if not SLOW_LIST.is_file():
        return {}
    costs = {}
    for line in SLOW_LIST.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            seconds, _, nodeid = line.partition("\t")
            costs[nodeid.strip()] = float(seconds)
    return costs


def pytest_collection_modifyitems(config, items):
    """Mark the tests profiled as slow ``slow`` (`make test-fast` leaves them out). Under xdist (--dist loadfile,
    --no-loadscope-reorder: files go to workers in this order) the files with the most slow seconds come
    first, so a long file (a frozen build) does not start last and hold up the end of the run."""
    costs = _slow_costs()
    per_file: dict[str, float] = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        if item.nodeid in costs:
            item.add_marker(pytest.mark.slow)
            per_file[path] = per_file.get(path, 0.0) + costs[item.nodeid]
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: -per_file.get(item.nodeid.split("::")[0], 0.0))  # stable: file order kept
