"""Connector state without module globals (issue 38.2, core/src/analytics_acp/state.py): the keyed cache every
connector uses, the connector's state made at load and released by the server's stop, per-call slots, and the one
hash of credentials."""

from __future__ import annotations

import threading
import types

import anyio
import pytest
from analytics_acp import ConnectorInfo, Extraction, ResourceIdSpec, ToolSpec
from analytics_acp.context import ClientInfo
from analytics_acp.effective import SessionConfig
from analytics_acp.kit import make_ctx
from analytics_acp.plugins import load_connector
from analytics_acp.runtime import build_server
from analytics_acp.state import CallSlot, ConnectorSlot, ConnectorState, KeyedCache, identity_key, keyed_cache

ACP = ClientInfo(acp=True, version="1.0", stores_system_data=True)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_keyed_cache_is_a_bounded_lru_that_evicts_through_its_callback():
    evicted: list[str] = []
    cache: KeyedCache[str] = KeyedCache(2, on_evict=evicted.append)
    cache.put("a", "A")
    cache.put("b", "B")
    assert cache.get("a") == "A"  # a is now the most recently used
    cache.put("c", "C")
    assert evicted == ["B"] and cache.get("b") is None and len(cache) == 2
    cache.put("a", "A2")  # a replaced value leaves too
    assert evicted == ["B", "A"]
    assert cache.drop_where(lambda key: key == "c") == 1 and evicted == ["B", "A", "C"]
    cache.clear()
    assert evicted == ["B", "A", "C", "A2"] and len(cache) == 0


def test_entries_expire_after_their_time_to_live():
    clock, evicted = Clock(), []
    cache: KeyedCache[int] = KeyedCache(8, ttl_s=60, on_evict=evicted.append, clock=clock)
    cache.put("k", 1)
    clock.now += 59
    assert cache.get("k") == 1 and cache.values() == [1]
    clock.now += 1
    assert cache.get("k") is None and evicted == [1] and cache.values() == []


def test_get_or_make_makes_once_and_a_racing_second_make_is_evicted():
    made, evicted = [], []
    cache: KeyedCache[object] = KeyedCache(4, on_evict=evicted.append)
    both_missed = threading.Barrier(2, timeout=10)

    def make() -> object:
        both_missed.wait()  # both threads missed the cache before either made its value
        value = object()
        made.append(value)
        return value

    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(cache.get_or_make("k", make))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(made) == 2 and got[0] is got[1] and evicted == [v for v in made if v is not got[0]]
    assert cache.get_or_make("k", lambda: pytest.fail("made again")) is got[0]


def test_a_failing_eviction_never_raises_and_the_entry_still_leaves():
    def boom(value: object) -> None:
        raise RuntimeError("already closed")

    cache: KeyedCache[int] = KeyedCache(1, on_evict=boom)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") is None and cache.get("b") == 2


def test_identity_key_is_one_stable_hash_that_separates_accounts_and_endpoints():
    creds = {"type": "service_account", "private_key": "-----SECRET-----", "client_email": "a@x"}
    reordered = dict(reversed(list(creds.items())))
    key = identity_key(creds, "https://api.example")
    assert key == identity_key(reordered, "https://api.example") and len(key) == 64 and "SECRET" not in key
    assert key != identity_key(creds, None) and key != identity_key({**creds, "client_email": "b@x"}, "https://api.example")
    assert identity_key(creds) != key


def test_connector_state_makes_each_slot_once_and_releases_them_last_made_first(caplog):
    released: list[str] = []

    def failing(value: str) -> None:
        released.append(value)
        raise RuntimeError("release failed")

    first = ConnectorSlot("first", lambda: "one", released.append)
    second = ConnectorSlot("second", lambda: "two", failing)
    never = ConnectorSlot("never", lambda: pytest.fail("made by close"), released.append)
    state = ConnectorState("demo")
    assert state.get(first) == "one" and state.get(first) is state.get(first) and state.get(second) == "two"
    assert state.peek(never) is None
    state.close()
    assert released == ["two", "one"]  # a failing release is logged, the next one still runs
    assert "releasing second failed" in caplog.text
    state.close()  # nothing held any more: nothing released twice
    assert released == ["two", "one"]


def test_call_slots_are_per_call_and_connector_slots_are_shared_through_the_context():
    shared = ConnectorState("demo")
    per_call = CallSlot("demo.seen", lambda ctx: [ctx.tool])
    kept = keyed_cache("demo.kept", 4)
    one = make_ctx("demo", "a", connector_state=shared)
    two = make_ctx("demo", "b", connector_state=shared)
    assert one.state(per_call) == ["a"] and one.state(per_call) is one.state(per_call)
    assert two.state(per_call) == ["b"]
    one.state(kept).put("k", 1)
    assert two.state(kept).get("k") == 1


def _demo_connector(released: list[object]) -> types.ModuleType:
    """A plugin module whose tool keeps a client in the connector's state."""
    from analytics_acp import hookimpl

    clients = keyed_cache("demo.clients", 4, on_evict=released.append)

    def run(arguments: object, ctx: object) -> Extraction:
        client = ctx.state(clients).get_or_make("only", object)  # type: ignore[attr-defined]
        return Extraction(rows=[{"client": id(client)}], columns=["client"], description="The client kept.")

    module = types.ModuleType("demo_state_connector")

    @hookimpl
    def connector_declaration() -> ConnectorInfo:
        return ConnectorInfo(id="demo", name="Demo", version="0.1.0", description="Keeps a client.",
                             resource_id=ResourceIdSpec(description="A name", format="<name>", examples=["x"]),
                             tools=[ToolSpec(name="rows", kind="extraction", description="One row.", needs_credentials=False,
                                             run=run)])

    module.connector_declaration = connector_declaration  # type: ignore[attr-defined]
    return module


def test_the_servers_stop_releases_what_its_calls_kept_and_two_servers_share_nothing():
    released: list[object] = []
    module = _demo_connector(released)
    one, two = build_server(load_connector(module, extensions=False)), build_server(load_connector(module, extensions=False))

    def call(acp: object) -> dict:
        return anyio.run(lambda: acp.runtime.call("rows", {"resource_id": "x"}, {"autocontext_delivered": True},  # type: ignore[attr-defined]
                                                  SessionConfig(), ACP))

    assert call(one)["isError"] is False and call(two)["isError"] is False
    one.shutdown()
    assert len(released) == 1  # the first server's client, not the second's
    two.shutdown()
    assert len(released) == 2 and released[0] is not released[1]
