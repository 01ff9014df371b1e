"""Lazy references: a tool's ``run`` or a block's ``fetch`` named as ``"package.module:function"``.

A connector declares its tools and blocks at start-up, but the modules doing the work import heavy
clients (Google APIs, SQLAlchemy, Playwright) that must load on first use, not when the server starts
(cold start is benchmarked: tools/bench). Instead of a hand-written wrapper per tool::

    ToolSpec(name="run_report", run=lazy("analytics_acp_ga4.report:run_report"), ...)
    BlockSpec(id="key_events", fetch=lazy("analytics_acp_ga4.blocks:key_events"), ...)

- At load the core checks that the module exists (``check``: ``importlib.util.find_spec``, which reads
  no module code), so a misspelt module stops the server at start-up with the tool or block named.
- On the first call the core imports the module in a worker thread (``resolve``), then dispatches on
  the real target: an ``async def`` stays async, a sync function runs in the tool's worker thread.
  A missing attribute is reported then, naming the reference.
- The reference is also callable (``ref(arguments, ctx)``), so tests may call a spec's ``run`` directly.

This module is a leaf: it imports only the standard library.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Callable
from typing import Any


class LazyTargetError(ImportError):
    """A lazy reference names a module or attribute that does not exist (a connector bug)."""


class LazyRef:
    """A callable named ``"package.module:attribute"``, imported on first use (see the module docstring)."""

    __slots__ = ("_lock", "_target", "attribute", "module", "target")

    def __init__(self, target: str) -> None:
        module, sep, attribute = target.partition(":")
        parts = [*module.split("."), *attribute.split(".")]
        if not sep or not all(p.isidentifier() for p in parts):
            raise ValueError(f"lazy({target!r}): expected 'package.module:function' (absolute module path)")
        self.target = target
        self.module = module
        self.attribute = attribute
        self._target: Callable[..., Any] | None = None
        self._lock = threading.Lock()

    @property
    def resolved(self) -> bool:
        """True once the module was imported and the callable found."""
        return self._target is not None

    def check(self, where: str = "") -> None:
        """Fail now if the module cannot be found, without importing it (run by the core at load)."""
        try:
            found = importlib.util.find_spec(self.module) is not None
        except ModuleNotFoundError:  # a parent package is missing
            found = False
        if not found:
            raise LazyTargetError(f"{where or repr(self)}: no module named {self.module!r} (lazy reference {self.target!r})")

    def resolve(self) -> Callable[..., Any]:
        """The target callable, importing its module the first time (thread-safe; later calls are a lookup)."""
        if self._target is not None:
            return self._target
        with self._lock:
            if self._target is None:
                self._target = self._load()
        return self._target

    def _load(self) -> Callable[..., Any]:
        try:
            value: Any = importlib.import_module(self.module)
        except ModuleNotFoundError as exc:
            if exc.name != self.module:  # the module exists but one of its own imports is missing: that is the error
                raise
            raise LazyTargetError(f"lazy reference {self.target!r}: no module named {self.module!r}") from None
        for name in self.attribute.split("."):
            if not hasattr(value, name):
                raise LazyTargetError(f"lazy reference {self.target!r}: {self.module} has no attribute {self.attribute!r}")
            value = getattr(value, name)
        if not callable(value):
            raise LazyTargetError(f"lazy reference {self.target!r}: {type(value).__name__} is not callable")
        return value  # type: ignore[no-any-return]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the target (a coroutine for an async target, as calling it directly would give)."""
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"lazy({self.target!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyRef) and other.target == self.target

    def __hash__(self) -> int:
        return hash(self.target)


def lazy(target: str) -> LazyRef:
    """A reference to ``"package.module:function"`` imported on first call (for ``ToolSpec.run`` / ``BlockSpec.fetch``)."""
    return LazyRef(target)


def check_lazy(fn: Any, where: str) -> None:
    """At load: if ``fn`` is a lazy reference, fail unless its module exists (``where`` names the tool or block)."""
    if isinstance(fn, LazyRef):
        fn.check(where)


def target_of(fn: Any) -> Any:
    """The real callable behind ``fn`` (imports a lazy reference's module if it was not yet)."""
    return fn.resolve() if isinstance(fn, LazyRef) else fn


__all__ = ["LazyRef", "LazyTargetError", "check_lazy", "lazy", "target_of"]
