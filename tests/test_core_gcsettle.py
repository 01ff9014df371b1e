"""gcsettle: a serving process freezes its long-lived objects, and again only after calls that imported modules."""

from __future__ import annotations

import gc
import sys
import types

import pytest
from analytics_acp import gcsettle


@pytest.fixture
def settle_state(monkeypatch):
    monkeypatch.setitem(gcsettle._state, "enabled", False)
    monkeypatch.setitem(gcsettle._state, "modules", 0)
    yield gcsettle._state
    gc.unfreeze()  # this test process must keep collecting as before


def test_not_enabled_never_freezes(settle_state):
    before = gc.get_freeze_count()
    probe = types.ModuleType("acp_gcsettle_probe_a")
    sys.modules[probe.__name__] = probe
    try:
        gcsettle.after_call()
    finally:
        del sys.modules[probe.__name__]
    assert gc.get_freeze_count() == before


def test_enable_freezes_then_only_new_modules_freeze_again(settle_state):
    gcsettle.enable()
    frozen = gc.get_freeze_count()
    assert frozen > 0 and settle_state["modules"] == len(sys.modules)

    gc.unfreeze()
    gcsettle.after_call()  # no module imported since: no freeze
    assert gc.get_freeze_count() == 0

    probe = types.ModuleType("acp_gcsettle_probe_b")
    sys.modules[probe.__name__] = probe
    try:
        gcsettle.after_call()  # a call imported a module: what is alive now is frozen
        assert gc.get_freeze_count() > 0
        assert settle_state["modules"] == len(sys.modules)
    finally:
        del sys.modules[probe.__name__]
