"""Every hook in hookspecs.py is tested here (test_hook_<name>) and documented in the README (meta-tests)."""

import inspect
import sys
import types
from pathlib import Path

import anyio
import pytest
from analytics_acp import hookspecs
from analytics_acp.calls import ConnectorRuntime
from analytics_acp.context import ClientInfo
from analytics_acp.effective import SessionConfig
from analytics_acp.plugins import load_connector
from core_helpers import InstalledEntryPoints

sys.path.insert(0, str(Path(__file__).parent / "core_fixtures"))
import mini_connector  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HOOKS = sorted(n for n, f in inspect.getmembers(hookspecs, inspect.isfunction) if hasattr(f, "analytics_acp_spec"))
FULL = ClientInfo(acp=True, version="1.0", stores_system_data=True, multi_table=True, host_tables=True)
CREDS = {"type": "api_key", "api_key": "sk-test-SECRET-123456"}


def call(runtime, name, args, meta=None):
    return anyio.run(lambda: runtime.call(name, args, meta or {"credentials": CREDS, "autocontext_delivered": True},
                                          SessionConfig(), FULL))


def make_plugin(**impls):
    """A throwaway plugin module with the given hook implementations."""
    mod = types.ModuleType("extra_plugin_for_test")
    for name, fn in impls.items():
        setattr(mod, name, hookspecs.hookimpl(**getattr(fn, "_opts", {}))(fn))
    return mod


def runtime_with(*plugins):
    loaded = load_connector(mini_connector, extensions=False)
    for p in plugins:
        loaded.pm.register(p)
    return ConnectorRuntime(loaded)


def test_every_hook_has_a_test_and_docs():
    here = Path(__file__).read_text()
    readme = (ROOT / "core" / "README.md").read_text()
    for name in HOOKS:
        assert f"def test_hook_{name}(" in here, f"hook {name} has no test_hook_{name}"
        assert f"`{name}" in readme, f"hook {name} is not documented in core/README.md"


def test_hook_connector_declaration():
    loaded = load_connector(mini_connector, extensions=False)
    assert loaded.info.id == "mini" and loaded.extraction_tools[0] == "extract"


def test_hook_register_tools():
    loaded = load_connector(mini_connector, extensions=False)
    assert {"extract", "paid", "multi", "sum_table", "boom", "steps", "spin"} == set(loaded.tools)
    assert loaded.tool_owner["extract"] == "connector:mini_connector"


def test_hook_register_blocks():
    loaded = load_connector(mini_connector, extensions=False)
    assert list(loaded.blocks) == ["fields", "broken", "table_stats"]


def test_hook_list_resources():
    res = call(runtime_with(), "autocontext", {})
    assert "Account 0" in res["content"][0]["text"]


def test_normalize_resource_id_runs_off_the_event_loop():
    # A connector may ask its source to normalize (the databases catalog, gsc's sites.list): over
    # HTTP one event loop serves every session, so the hook runs in a worker thread.
    import threading

    seen = []

    def normalize_resource_id(resource_id, ctx):
        seen.append(threading.get_ident())

    for name, args in (("extract", {"n": 1, "resource_id": "acc1"}), ("autocontext", {"resource_id": "acc1"}),
                       ("autocontext_data", {"resource_id": "acc1"})):
        assert not call(runtime_with(make_plugin(normalize_resource_id=normalize_resource_id)), name, args).get("isError")
    assert len(seen) == 3 and threading.get_ident() not in seen  # anyio.run's loop runs in this thread


def _hops(monkeypatch, *plugins):
    """Worker-thread hops of one extract call with a resource_id to normalize."""
    import anyio.to_thread

    hops = []
    real = anyio.to_thread.run_sync

    async def counting(fn, *args, **kwargs):
        hops.append(fn)
        return await real(fn, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counting)
    res = call(runtime_with(*plugins), "extract", {"n": 1, "resource_id": " accounts/acc5 "})
    assert not res.get("isError") and res["_meta"]["acp"]["system_info"]["resource_id"] == "acc5"
    return len(hops)


def test_resource_of_a_sync_tool_resolves_in_the_tools_own_thread(monkeypatch):
    # One worker-thread hop per call (bench case 4b: two hops cost more than the work they carried).
    assert _hops(monkeypatch) == 1


def test_around_tool_call_wrappers_still_see_the_resolved_resource(monkeypatch):
    seen = []

    def around_tool_call(tool, arguments, ctx):
        inner = yield
        seen.append(ctx.resource_id)
        return inner

    around_tool_call._opts = {"wrapper": True}
    assert _hops(monkeypatch, make_plugin(around_tool_call=around_tool_call)) == 2 and seen == ["acc5"]


def test_hook_normalize_resource_id():
    res = call(runtime_with(), "extract", {"n": 1, "resource_id": " accounts/acc5 "})
    assert res["_meta"]["acp"]["system_info"]["resource_id"] == "acc5"
    bad = call(runtime_with(), "extract", {"n": 1, "resource_id": ".x"})
    assert bad["isError"] and "Invalid resource_id" in bad["content"][0]["text"]


def test_hook_credentials_resource():
    def credentials_resource(credentials, config):
        return credentials.get("account")

    rt = runtime_with(make_plugin(credentials_resource=credentials_resource))
    meta = {"credentials": {**CREDS, "account": "acc9"}, "autocontext_delivered": True}
    res = call(rt, "extract", {"n": 1}, meta)  # 6: no resource_id, no default configured -> the credentials' one
    assert not res["isError"] and res["_meta"]["acp"]["system_info"]["resource_id"] == "acc9"
    configured = call(rt, "extract", {"n": 1}, {**meta, "default_resource_id": "acc2"})
    assert configured["_meta"]["acp"]["system_info"]["resource_id"] == "acc2"  # a configured default wins
    listing = call(rt, "autocontext", {}, meta)
    assert "The default resource is acc9." in listing["content"][0]["text"]
    none = call(rt, "extract", {"n": 1})  # the hook answers None: still ACP_RESOURCE_REQUIRED
    assert none["_meta"]["acp"]["error"]["name"] == "ACP_RESOURCE_REQUIRED"


def test_hook_estimate_cost():
    def estimate_cost(tool, arguments, ctx):
        return 99.0

    estimate_cost._opts = {"tryfirst": True}
    res = call(runtime_with(make_plugin(estimate_cost=estimate_cost)), "paid", {"n": 1, "resource_id": "a"})
    assert res["_meta"]["acp"]["error"]["data"]["estimate_usd"] == 99.0


def test_estimate_cost_runs_in_a_worker_thread_not_on_the_event_loop():
    """9.2: an estimate may block on a request (BigQuery's dry run); other sessions keep being served meanwhile."""
    import asyncio

    where = []

    def estimate_cost(tool, arguments, ctx):
        try:
            asyncio.get_running_loop()
            where.append("event loop")
        except RuntimeError:
            where.append("worker thread")
        return 99.0

    estimate_cost._opts = {"tryfirst": True}
    call(runtime_with(make_plugin(estimate_cost=estimate_cost)), "paid", {"n": 1, "resource_id": "a"})
    assert where == ["worker thread"]


def test_hook_credential_identity():
    seen = []

    def credential_identity(credentials):
        seen.append(credentials)
        return "same-user"

    credential_identity._opts = {"tryfirst": True}
    rt = runtime_with(make_plugin(credential_identity=credential_identity))
    call(rt, "extract", {"n": 1, "resource_id": "acc1"})
    other = {"type": "api_key", "api_key": "sk-other-KEY-99999"}
    call(rt, "extract", {"n": 1, "resource_id": "acc2"}, {"credentials": other, "autocontext_delivered": True})
    # one identity -> one recent list: acc2 then acc1 come first in suggestions for either key
    res = call(rt, "autocontext", {})
    ids = [r["resource_id"] for r in __import__("json").loads(res["content"][0]["text"])["resources"]][:2]
    assert set(ids) == {"acc1", "acc2"} and seen


def test_hook_around_tool_call():
    log = []

    def around_tool_call(tool, arguments, ctx):
        inner = yield

        async def timed():
            log.append(("before", tool.name))
            out = await inner
            log.append(("after", tool.name))
            return out

        return timed()

    around_tool_call._opts = {"wrapper": True}
    res = call(runtime_with(make_plugin(around_tool_call=around_tool_call)), "extract", {"n": 2, "resource_id": "a"})
    assert not res["isError"] and log == [("before", "extract"), ("after", "extract")]


def test_hook_connector_shutdown():
    closed = []
    from analytics_acp.runtime import AcpServer

    loaded = load_connector(mini_connector, extensions=False)
    loaded.pm.register(make_plugin(connector_shutdown=lambda: closed.append(True)))
    AcpServer(loaded).shutdown()
    assert closed == [True]


def test_unknown_hook_name_is_caught():
    bad = make_plugin(register_tool=lambda register: None)  # misspelled hook
    loaded = load_connector(mini_connector, extensions=False)
    loaded.pm.register(bad)
    from pluggy import PluginValidationError

    with pytest.raises(PluginValidationError):
        loaded.pm.check_pending()


def test_restrict_plugins_env(monkeypatch):
    from analytics_acp.plugins import available_connectors

    monkeypatch.setenv("ANALYTICS_ACP_PLUGINS", "no-such-connector")
    assert available_connectors() == {}


def test_hook_connector_ready():
    """Issue 26.6: the warm-up hook runs after initialize off the serving thread, once per server."""
    import threading

    from analytics_acp import hookimpl
    from analytics_acp.runtime import build_server

    loaded = load_connector(mini_connector, extensions=False)
    seen, done = [], threading.Event()

    class Ready:
        @hookimpl
        def connector_ready(self):
            seen.append(threading.current_thread().name)
            done.set()

    loaded.pm.register(Ready())
    server = build_server(loaded)
    server._warm_up()
    server._warm_up()  # a second initialize (another HTTP session) does not run it again
    assert done.wait(30)
    assert seen == ["acp-connector-ready"]


def _load_with_extension(monkeypatch, name, extension):
    """Load mini_connector with ``extension`` installed as an entry point of ``analytics_acp.plugins``."""
    from analytics_acp import plugins

    class EntryPoint:
        group = plugins.PLUGIN_GROUP

        def __init__(self):
            self.name = name

        def load(self):
            return extension

    monkeypatch.setattr(plugins, "entry_points", lambda: InstalledEntryPoints(EntryPoint()))
    return load_connector(mini_connector)


@pytest.mark.parametrize("hook, impl", [
    ("list_resources", lambda ctx: []),
    ("normalize_resource_id", lambda resource_id, ctx: "hijacked"),
    ("estimate_cost", lambda tool, arguments, ctx: 0.0),
    ("connector_shutdown", lambda: None),
])
def test_an_extension_implementing_a_connector_hook_is_refused_at_load(monkeypatch, hook, impl):
    """Issue 38.4: an extension's list_resources used to answer first (firstresult) in the connector's place,
    silently; now the load fails naming the extension and the hook."""
    with pytest.raises(TypeError, match=rf"Extension plugin 'takeover' .* implements {hook}: this hook belongs "
                                               r"to the connector.*around_tool_call, register_blocks, register_tools"):
        _load_with_extension(monkeypatch, "takeover", make_plugin(**{hook: impl}))
    from analytics_acp.plugins import ExtensionRefused

    with pytest.raises(ExtensionRefused, match="implements credential_identity, list_resources: these hooks belong"):
        _load_with_extension(monkeypatch, "takeover", make_plugin(list_resources=lambda ctx: [], credential_identity=lambda credentials: "x"))


def test_serve_with_a_refused_extension_says_why_and_exits(monkeypatch, capsys):
    from analytics_acp import plugins
    from analytics_acp.cli import main

    extension = make_plugin(list_resources=lambda ctx: [])
    monkeypatch.setattr(plugins, "entry_points", lambda: InstalledEntryPoints(type("EntryPoint", (), {
        "name": "takeover", "group": plugins.PLUGIN_GROUP, "load": lambda self: extension})()))
    assert main(["serve", "mini_connector"]) == 2  # no traceback: one line naming the extension and the hook
    assert "analytics-acp: Extension plugin 'takeover'" in capsys.readouterr().err


def test_an_extension_with_extension_hooks_only_loads_beside_the_connector(monkeypatch):
    def around_tool_call(tool, arguments, ctx):
        return (yield)

    around_tool_call._opts = {"wrapper": True}
    loaded = _load_with_extension(monkeypatch, "audit", make_plugin(around_tool_call=around_tool_call))
    assert loaded.pm.has_plugin("plugin:audit")
    res = call(ConnectorRuntime(loaded), "autocontext", {})
    assert "Account 0" in res["content"][0]["text"]  # the connector's own list_resources answered


def test_every_hook_is_either_the_connector_s_or_an_extension_s():
    """A new hook must say whose it is: the load-time refusal reads CONNECTOR_HOOKS."""
    assert hookspecs.CONNECTOR_HOOKS.isdisjoint(hookspecs.EXTENSION_HOOKS)
    assert sorted(hookspecs.CONNECTOR_HOOKS | hookspecs.EXTENSION_HOOKS) == HOOKS


def test_connector_ready_waits_for_the_first_answer_after_initialize():
    """Issue 39 (bench case 4): the warm-up used to start as initialize was answered, so its imports held the
    GIL while the host waited for tools/list; it now starts after the first answer that follows initialize."""
    import threading

    import anyio
    from analytics_acp import hookimpl
    from analytics_acp.runtime import ServeState, build_server
    from mcp.client.session import ClientSession
    from mcp.server.runner import serve_loop
    from mcp.shared.memory import create_client_server_memory_streams

    loaded = load_connector(mini_connector, extensions=False)
    done = threading.Event()

    class Ready:
        @hookimpl
        def connector_ready(self):
            done.set()

    loaded.pm.register(Ready())
    acp = build_server(loaded)
    seen: dict[str, bool] = {}

    async def main():
        async with create_client_server_memory_streams() as ((c_read, c_write), (s_read, s_write)):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: serve_loop(acp.server, s_read, s_write, lifespan_state=ServeState()))
                async with ClientSession(c_read, c_write) as session:
                    await session.initialize()
                    seen["after_initialize"] = acp._warmed
                    await session.list_tools()
                    seen["after_tools_list"] = acp._warmed
                tg.cancel_scope.cancel()

    try:
        anyio.run(main)
    finally:
        acp.shutdown()
    assert seen == {"after_initialize": False, "after_tools_list": True}
    assert done.wait(30)
