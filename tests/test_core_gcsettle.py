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
    thresholds = gc.get_threshold()
    yield gcsettle._state
    gc.unfreeze()  # this test process must keep collecting as before
    gc.set_threshold(*thresholds)


def test_not_enabled_never_freezes(settle_state):
    before = gc.get_freeze_count()
    probe = types.ModuleType("acp_gcsettle_probe_a")
    sys.modules[probe.__name__] = probe
    try:
        gcsettle.after_call()
    finally:
        del sys.modules[probe.__name__]
    assert gc.get_freeze_count() == before
    assert gc.get_threshold() != gcsettle.THRESHOLDS  # an embedding process keeps its collector's settings


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


def test_a_serving_process_collects_its_young_generation_less_often_and_still_frees_cycles(settle_state):
    """THRESHOLDS (bench case 4b): the youngest generation is collected every 10,000 allocations, not 700; garbage
    in reference cycles (sqlglot's trees point to their parents) is still freed automatically, with no explicit
    collect, and what waits for a collection stays bounded."""
    gcsettle.enable()
    assert gc.get_threshold() == gcsettle.THRESHOLDS
    gc.collect()
    before = len(gc.get_objects())
    peak = 0
    for i in range(200_000):  # 400,000 container allocations, every one of them cyclic garbage at once
        node: dict = {"i": i}
        node["self"] = [node]
        if i % 1_000 == 0:
            peak = max(peak, len(gc.get_objects()) - before)
    assert peak <= 3 * gcsettle.THRESHOLDS[0]  # collected as it went (at 700 it stays lower still), never piled up
