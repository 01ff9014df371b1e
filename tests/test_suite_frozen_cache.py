"""The suite's shared frozen builds (tests/frozen_cache.py, issue 25): keyed by a content hash of the inputs,
reused only while the inputs and the built folder are unchanged, built once under concurrent callers.

No PyInstaller here: ``build_one`` is replaced by a stand-in that writes a small dist and counts its calls.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import frozen_cache
import pytest
from analytics_acp_build.build import BuildResult
from build_support import TINYCONN


@pytest.fixture
def conn(tmp_path) -> Path:
    """A copy of the tiny connector (a folder target, so the digest covers only this copy)."""
    folder = tmp_path / "tinyconn"
    shutil.copytree(TINYCONN, folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    (folder / "tests").mkdir()
    (folder / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    return folder


@pytest.fixture
def builds(monkeypatch, tmp_path):
    """Work folder under tmp_path; build_one replaced by a counting stand-in. Returns the list of calls."""
    monkeypatch.setenv("ANALYTICS_ACP_BUILD_WORK", str(tmp_path / "work"))
    monkeypatch.setenv("ANALYTICS_ACP_TEST_FROZEN_CACHE", str(tmp_path / "frozen"))  # never the machine's cache
    monkeypatch.delenv("ANALYTICS_ACP_TEST_REBUILD", raising=False)
    calls: list[str] = []

    def fake_build_one(target: str, out: Path) -> BuildResult:
        calls.append(target)
        folder = Path(out) / "tinyconn"
        (folder / "_internal").mkdir(parents=True)
        (folder / "tinyconn-server").write_text("#!/bin/sh\n")
        (folder / "_internal" / "lib.so").write_bytes(b"x" * 64)
        zip_path = Path(out) / "tinyconn-0.3.1.zip"
        zip_path.write_bytes(b"PK" + b"\0" * 20)
        return BuildResult(connector="tinyconn", version="0.3.1", folder=folder, zip=zip_path, folder_bytes=70,
                           zip_bytes=zip_path.stat().st_size, verification="ok: ACP 1.0, 3 tools", ok=True)

    monkeypatch.setattr(frozen_cache, "build_one", fake_build_one)
    return calls


def test_digest_follows_the_sources_but_not_the_tests(conn):
    before = frozen_cache.inputs_digest(str(conn))
    assert frozen_cache.inputs_digest(str(conn)) == before  # deterministic
    (conn / "tests" / "test_x.py").write_text("def test_y():\n    pass\n")
    assert frozen_cache.inputs_digest(str(conn)) == before  # a test edit is no reason to freeze again
    plugin = conn / "src" / "analytics_acp_tinyconn" / "plugin.py"
    plugin.write_text(plugin.read_text() + "\n# changed\n")
    assert frozen_cache.inputs_digest(str(conn)) != before


def test_second_call_reuses_the_build_and_a_changed_input_rebuilds(conn, builds):
    first = frozen_cache.frozen_build(str(conn))
    again = frozen_cache.frozen_build(str(conn))
    assert builds == [str(conn)] and first.ok and again.ok
    assert again.folder == first.folder and again.zip == first.zip and again.verification == first.verification
    (conn / "skills" / "tiny-counting" / "SKILL.md").write_text("# changed skill\n")
    rebuilt = frozen_cache.frozen_build(str(conn))
    assert builds == [str(conn), str(conn)] and rebuilt.folder != first.folder
    assert not first.folder.exists()  # the older digest's build is dropped


def test_a_cached_folder_that_was_changed_is_built_again(conn, builds):
    first = frozen_cache.frozen_build(str(conn))
    (first.folder / "_internal" / "lib.so").write_bytes(b"tampered")
    frozen_cache.frozen_build(str(conn))
    assert len(builds) == 2
    (first.folder / "stray.txt").write_text("written by a test")
    frozen_cache.frozen_build(str(conn))
    assert len(builds) == 3


def test_rebuild_variable_ignores_the_cache(conn, builds, monkeypatch):
    frozen_cache.frozen_build(str(conn))
    monkeypatch.setenv("ANALYTICS_ACP_TEST_REBUILD", "1")
    frozen_cache.frozen_build(str(conn))
    assert len(builds) == 2


def test_a_failed_build_is_not_cached(conn, builds, monkeypatch):
    monkeypatch.setattr(frozen_cache, "build_one", lambda target, out: builds.append(target) or BuildResult(
        connector="tinyconn", error="PyInstaller failed"))
    assert not frozen_cache.frozen_build(str(conn)).ok
    assert not frozen_cache.frozen_build(str(conn)).ok
    assert len(builds) == 2


def test_concurrent_callers_build_once(conn, builds):
    # xdist workers are processes; the lock is flock on a file, which threads holding their own open file
    # descriptions contend for in the same way.
    results: list[BuildResult] = []
    threads = [threading.Thread(target=lambda: results.append(frozen_cache.frozen_build(str(conn)))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(results) == 4 and builds == [str(conn)]
    assert len({r.folder for r in results}) == 1


def test_digest_does_not_depend_on_where_the_checkout_lies(conn, tmp_path, builds):
    # The cache is the machine's (like pip's): a CI clone elsewhere reuses what this checkout froze.
    elsewhere = tmp_path / "another" / "checkout" / "tinyconn"
    shutil.copytree(conn, elsewhere)
    assert frozen_cache.inputs_digest(str(elsewhere)) == frozen_cache.inputs_digest(str(conn))
    assert frozen_cache.cache_root() == tmp_path / "frozen"  # the fixture's, never ~/.cache in tests
    frozen_cache.frozen_build(str(conn))
    frozen_cache.frozen_build(str(elsewhere))
    assert len(builds) == 1
