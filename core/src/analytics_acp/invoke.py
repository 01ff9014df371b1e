"""Running a tool: sync tools run in a worker thread together with result building,
so a database cursor generator is created and consumed on the same thread."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import anyio

from .arguments import ToolArguments
from .context import CallContext
from .declarations import ToolSpec
from .lazy import LazyRef


async def invoke_tool(tool: ToolSpec, arguments: ToolArguments, ctx: CallContext, finish: Callable[[Any], Any],
                      before: Callable[[], None] | None = None) -> Any:
    """Run ``tool`` and pass its output through ``finish`` (the result builder) on the same thread; ``before`` (a
    blocking step the tool needs first, such as resolving its resource) runs off the event loop just before it."""
    run = await resolve_off_loop(tool.run)
    if inspect.iscoroutinefunction(run):
        if before is not None:
            await anyio.to_thread.run_sync(before)
        raw = await run(arguments, ctx)
        return await ctx.signals.in_thread(finish, raw)

    def run_and_finish() -> Any:
        if before is not None:
            before()
        raw = run(arguments, ctx)
        if inspect.isawaitable(raw):  # a sync function that returned a coroutine
            raw = anyio.from_thread.run(_await, raw)
        return finish(raw)

    # Interruptible: a cancelled call reaches the tool's on_cancel callbacks while its thread still runs.
    return await ctx.signals.in_thread(run_and_finish)


async def _await(awaitable: Any) -> Any:
    return await awaitable


async def resolve_off_loop(fn: Any) -> Any:
    """``fn``, or the target of a lazy reference (lazy.py), whose first import runs in a worker thread: heavy client
    imports never block the event loop, and an async target is known as such before it is called."""
    if not isinstance(fn, LazyRef):
        return fn
    if not fn.resolved:
        await anyio.to_thread.run_sync(fn.resolve)
    return fn.resolve()


async def call_maybe_async(fn: Any, *args: Any) -> Any:
    """Call a sync or async callable (block fetchers, hooks); sync ones run in a worker thread."""
    fn = await resolve_off_loop(fn)
    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    result = await anyio.to_thread.run_sync(lambda: fn(*args))
    if inspect.isawaitable(result):
        result = await result
    return result
