"""``lazy("module:function")`` (issue 27.6): one helper instead of a wrapper per tool. The module doing the work
is imported on first call, never at load; an async target stays async; a wrong reference is a clear error."""

from __future__ import annotations

import sys
import textwrap
import uuid

import anyio
import pytest
from analytics_acp import lazy
from analytics_acp.calls import ConnectorRuntime
from analytics_acp.context import ClientInfo
from analytics_acp.effective import SessionConfig
from analytics_acp.invoke import invoke_tool
from analytics_acp.kit import make_ctx
from analytics_acp.lazy import LazyRef, LazyTargetError
from analytics_acp.plugins import load_connector

FULL = ClientInfo(acp=True, version="1.0", stores_system_data=True, multi_table=True, host_tables=True)

WORK = '''
import threading

from analytics_acp import Extraction, Info

def sync_tool(arguments, ctx):
    return Extraction(rows=[{"n": 1}, {"n": 2}], description="two rows")

async def async_tool(arguments, ctx):
    return Info(data={"async": True})

def block(resource_id, ctx):
    return {"resource": resource_id}
'''

PLUGIN = '''
from analytics_acp import BlockSpec, ConnectorInfo, ResourceIdSpec, ToolSpec, hookimpl, lazy

@hookimpl
def connector_declaration():
    tools = [ToolSpec(name="sync_tool", description="d", run=lazy("{work}:sync_tool"), kind="extraction",
                      needs_resource=False, needs_credentials=False),
             ToolSpec(name="async_tool", description="d", run=lazy("{work}:{async_name}"), needs_resource=False,
                      needs_credentials=False)]
    blocks = [BlockSpec(id="summary", description="d", fetch=lazy("{block_module}:block"), needs_credentials=False)]
    return ConnectorInfo(id="lazyconn", name="Lazy", version="0.0.1", description="d", tools=tools, blocks=blocks,
                         resource_id=ResourceIdSpec(description="d", format="<x>", examples=["x"]))
'''


def _connector(tmp_path, monkeypatch, *, async_name="async_tool", block_module=None):
    """A throwaway connector whose tools and block are lazy references into a module of its own (unique names,
    so sys.modules tells whether this test imported it)."""
    tag = uuid.uuid4().hex[:8]
    work, plugin = f"lazywork_{tag}", f"lazyplugin_{tag}"
    (tmp_path / f"{work}.py").write_text(textwrap.dedent(WORK))
    (tmp_path / f"{plugin}.py").write_text(PLUGIN.format(work=work, async_name=async_name,
                                                         block_module=block_module or work))
    monkeypatch.syspath_prepend(str(tmp_path))
    return plugin, work


def _call(runtime, name):
    return anyio.run(lambda: runtime.call(name, {}, {"autocontext_delivered": True}, SessionConfig(), FULL))


def test_the_module_is_imported_on_first_call_not_at_load(tmp_path, monkeypatch):
    plugin, work = _connector(tmp_path, monkeypatch)
    runtime = ConnectorRuntime(load_connector(plugin, extensions=False))
    assert work not in sys.modules  # loaded, tools listed: the work module is still not imported
    assert isinstance(runtime.state.loaded.tools["sync_tool"].run, LazyRef)
    result = _call(runtime, "sync_tool")
    assert not result.get("isError"), result
    assert work in sys.modules
    assert _call(runtime, "async_tool")["content"][0]["text"] == "{\"async\":true}"


def test_an_async_target_stays_async(tmp_path, monkeypatch):
    """The coroutine function is awaited on the event loop; only result building goes to a worker thread."""
    plugin, _work = _connector(tmp_path, monkeypatch)
    tool = load_connector(plugin, extensions=False).tools["async_tool"]
    ctx = make_ctx(tool="async_tool")
    in_thread: list[object] = []

    async def record(fn, *args):
        in_thread.append(fn)
        return fn(*args)

    ctx.signals.in_thread = record  # type: ignore[method-assign]

    def finish(raw):
        return raw.data

    assert anyio.run(invoke_tool, tool, {}, ctx, finish) == {"async": True}
    assert in_thread == [finish]  # a sync path would have passed its run_and_finish wrapper instead


def test_a_missing_module_fails_at_load_naming_the_block(tmp_path, monkeypatch):
    plugin, _work = _connector(tmp_path, monkeypatch, block_module="no_such_module_here")
    with pytest.raises(LazyTargetError, match=r"block 'summary': no module named 'no_such_module_here'"):
        load_connector(plugin, extensions=False)


def test_a_missing_function_is_named_at_first_call(tmp_path, monkeypatch):
    plugin, work = _connector(tmp_path, monkeypatch, async_name="not_there")
    runtime = ConnectorRuntime(load_connector(plugin, extensions=False))  # the module exists: the load passes
    result = _call(runtime, "async_tool")
    assert result["isError"]
    text = result["content"][0]["text"]
    assert f"{work} has no attribute 'not_there'" in text, text


def test_a_malformed_reference_is_refused_when_declared():
    for bad in ("module_only", "mod:", ":fn", "a b:c", "./rel:fn"):
        with pytest.raises(ValueError, match="expected 'package.module:function'"):
            lazy(bad)


def test_the_reference_is_callable_and_resolves_once(tmp_path, monkeypatch):
    _plugin, work = _connector(tmp_path, monkeypatch)
    ref = lazy(f"{work}:block")
    assert not ref.resolved and work not in sys.modules
    assert ref("r1", None) == {"resource": "r1"}
    assert ref.resolved and ref.resolve() is sys.modules[work].block
    assert repr(ref) == f"lazy('{work}:block')" and ref == lazy(f"{work}:block")


def test_an_import_error_inside_the_target_module_is_not_hidden(tmp_path, monkeypatch):
    """A dependency missing from the target module surfaces as itself, not as 'no such reference'."""
    tag = uuid.uuid4().hex[:8]
    (tmp_path / f"broken_{tag}.py").write_text("import dependency_that_is_not_installed_xyz\n\ndef run(a, c):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ref = lazy(f"broken_{tag}:run")
    ref.check()  # the module exists
    with pytest.raises(ModuleNotFoundError) as caught:
        ref.resolve()
    assert caught.value.name == "dependency_that_is_not_installed_xyz"
    assert not isinstance(caught.value, LazyTargetError)
