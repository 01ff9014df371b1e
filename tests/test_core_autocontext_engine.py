"""Autocontext engine (7.3, 7.4): per-identity cache, per-block TTL, no secrets on disk, isolation."""

import anyio
import pytest
from analytics_acp.autocontext import AutocontextEngine
from analytics_acp.cache import TTLCache
from analytics_acp.context import CallContext
from analytics_acp.declarations import BlockSpec, ConnectorInfo, ResourceIdSpec, ResourceRef
from analytics_acp.errors import UnknownBlock

INFO = ConnectorInfo(id="t", name="T", version="1", description="d",
                     resource_id=ResourceIdSpec(description="r", format="<r>", examples=["a"]))


def ctx(secret, identity):
    return CallContext(connector_id="t", tool="autocontext", credentials={"type": "k", "key": secret},
                       credential_identity=identity)


def test_cache_partitioned_by_identity_and_never_holds_secrets(tmp_path):
    calls = []

    def fetch(rid, c):
        calls.append(c.credential_identity)
        return {"rid": rid}

    def leaky(rid, c):
        raise RuntimeError(f"bad key {c.credentials['key']}")

    blocks = {"a": BlockSpec("a", "A", fetch, ttl_s=60), "b": BlockSpec("b", "B", leaky)}
    engine = AutocontextEngine(INFO, blocks, TTLCache(tmp_path))
    one, two = ctx("SECRET-ONE-123", "id-one"), ctx("SECRET-TWO-456", "id-two")
    r1 = anyio.run(engine.fetch, ResourceRef("x"), None, one)
    anyio.run(engine.fetch, ResourceRef("x"), None, one)
    anyio.run(engine.fetch, ResourceRef("x"), None, two)
    assert calls == ["id-one", "id-two"]  # second call of id-one came from cache
    assert r1.failed == 1 and r1.blocks[1]["error"].startswith("Failed: RuntimeError")
    assert "SECRET-ONE" not in r1.blocks[1]["error"]
    for f in tmp_path.rglob("*"):
        if f.is_file():
            text = f.read_text()
            assert "SECRET" not in text


def test_unknown_and_inapplicable_blocks():
    blocks = {"t": BlockSpec("t", "T", lambda r, c: 1, applies_to=["table"], needs_credentials=False)}
    engine = AutocontextEngine(INFO, blocks, TTLCache(None))
    with pytest.raises(UnknownBlock):
        engine.check_ids(["zz"])
    res = anyio.run(engine.fetch, ResourceRef("x", "account"), ["t"], ctx("k" * 8, "i"))
    assert "table" in res.blocks[0]["error"] and res.failed == 1
    assert engine.descriptors("account") == [] and engine.descriptors(None)[0]["applies_to"] == ["table"]


def test_blocks_are_fetched_concurrently_up_to_the_connectors_bound_in_order():
    """autocontext_concurrency (issue 26.1): two blocks that each wait for the other only both finish when they run
    at the same time; a third waits for a free slot; the answer keeps the declared order."""
    import threading
    from dataclasses import replace

    barrier = threading.Barrier(2, timeout=10)
    running, peak = [], []

    def meet(name):
        def fetch(rid, c):
            running.append(name)
            peak.append(len(running))
            try:
                if name != "c":
                    barrier.wait()
                return {"block": name}
            finally:
                running.remove(name)
        return fetch

    blocks = {n: BlockSpec(n, n.upper(), meet(n)) for n in ("a", "b", "c")}
    engine = AutocontextEngine(replace(INFO, autocontext_concurrency=2), blocks, TTLCache(None))
    result = anyio.run(engine.fetch, ResourceRef("x"), None, ctx("s3cret-key", "id"))
    assert [b["id"] for b in result.blocks] == ["a", "b", "c"] and result.failed == 0
    assert [b["data"]["block"] for b in result.blocks] == ["a", "b", "c"] and max(peak) <= 2
