"""Caches (7.4), recent resources (6.3) and suggestions."""

import json

from analytics_acp.cache import TTLCache
from analytics_acp.declarations import Resource
from analytics_acp.delivery import DeliveryTracker
from analytics_acp.resources import RecentStore, suggest_resources

DAY = 86400


def test_ttl_cache_memory_and_disk(tmp_path):
    cache = TTLCache(tmp_path)
    cache.set(("k", "identity-hash"), {"v": 1}, ttl_s=10, now=1000)
    assert cache.get(("k", "identity-hash"), now=1005) == {"v": 1}
    fresh = TTLCache(tmp_path)  # a new process reads the disk entry
    assert fresh.get(("k", "identity-hash"), now=1005) == {"v": 1}
    assert fresh.get(("k", "identity-hash"), now=1011) is None  # expired
    files = list(tmp_path.glob("*.json"))
    assert all(oct(f.stat().st_mode)[-3:] == "600" for f in files)


def test_recent_decay_half_life_14_days(tmp_path):
    store = RecentStore(tmp_path)
    now = 10_000_000
    for _ in range(4):
        store.record("id1", "old", now=now - 28 * DAY)  # 4 uses 28 days ago -> score 1
    store.record("id1", "new", now=now)
    store.record("id1", "new", now=now)  # 2 uses today -> score 2
    scores = RecentStore(tmp_path).scores("id1", now=now)  # persisted
    assert abs(scores["old"] - 1.0) < 1e-6 and abs(scores["new"] - 2.0) < 1e-6
    assert RecentStore(tmp_path).scores("other", now=now) == {}  # partitioned by identity
    assert "id1" in json.loads((tmp_path / "recent-resources.json").read_text())


def _listing(n=40):
    return [Resource(resource_id=f"r{i}", name=f"Name {i}", group="Blue" if i % 2 else "Red") for i in range(n)]


def test_suggestion_order_and_notice():
    out = suggest_resources(_listing(), default_resource_id="r30", recent={"r5": 3.0, "r9": 5.0})
    ids = [r["resource_id"] for r in out["resources"]]
    assert ids[:4] == ["r30", "r9", "r5", "r0"] and len(ids) == 25 and out["total_available"] == 40
    assert out["notice"].startswith("Showing 25 of 40 available resources, most recently used first.")
    assert "r30" in out["notice"]
    assert out["resources"][1]["recent"] is True
    small = suggest_resources(_listing(3), default_resource_id=None, recent={})
    assert small["notice"] == "3 resources available. Pass resource_id to get its autocontext."


def test_query_searches_everything_and_configured_default_is_kept():
    out = suggest_resources(_listing(), default_resource_id="ghost", recent={}, query="name 3")
    ids = [r["resource_id"] for r in out["resources"]]
    assert ids[0] == "ghost" and {"r3", "r30", "r39"} <= set(ids) and "r4" not in ids
    assert "configured" in out["resources"][0]["description"].lower()
    blue = suggest_resources(_listing(), default_resource_id=None, recent={}, query="BLUE")
    assert all(int(r["resource_id"][1:]) % 2 for r in blue["resources"])


def test_delivery_table_7_5():
    t = DeliveryTracker()
    assert t.should_attach(True, "s", "r") is False
    assert t.should_attach(False, None, "r") is True
    assert t.should_attach(None, None, "r") is False
    assert t.should_attach(None, "s", "r") is True and t.should_attach(False, "s", "r") is True
    t.mark("s", "r")
    assert t.should_attach(None, "s", "r") is False and t.should_attach(False, "s", "r") is False
    assert t.should_attach(None, "s", "other") is True
