"""Issue 38.2: no connector keeps state in module globals. What a connector keeps between calls lives in its
ConnectorState (made at load, released at the server's stop) and per-call state on the call's context
(analytics_acp.state), so two servers in one process share nothing and a stop releases everything.

A static scan of every connector module (connectors/*/src, the shared Google package included) refuses:
- a module-level empty container (``{}``, ``[]``, ``set()``, ``OrderedDict()``, ``WeakSet()``...): a cache or a
  registry waiting to be filled;
- a module-level lock, event or thread-local: it guards shared state;
- a module-level instance of a class the connector defines itself (a pool, a browser thread), unless frozen;
- a module-level name written from a function: ``NAME[k] = v``, ``NAME.append(...)``/``.pop``/``.clear``..., ``global``;
- ``functools.lru_cache`` / ``functools.cache`` on a function (a process-wide memo).
Constants stay allowed: literal tables, frozensets, compiled regexes, frozen declarations (slots, specs).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTAINERS = {"dict", "list", "set", "OrderedDict", "defaultdict", "deque", "Counter", "WeakSet", "WeakValueDictionary",
              "WeakKeyDictionary", "ChainMap"}
SYNC = {"Lock", "RLock", "Event", "Condition", "Semaphore", "BoundedSemaphore", "local", "Barrier"}
MUTATORS = {"append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem", "clear", "discard",
            "remove", "move_to_end", "appendleft", "popleft"}
MEMO_DECORATORS = {"lru_cache", "cache"}


def _name(node: ast.AST) -> str | None:
    """``f`` of ``f(...)``, ``threading.Lock`` -> ``Lock``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _targets(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return [stmt.target.id]
    return []


def _module_statements(tree: ast.Module) -> list[ast.stmt]:
    """Top-level statements, with those inside a top-level if/try (imports guarded by a condition)."""
    out: list[ast.stmt] = []
    todo = list(tree.body)
    while todo:
        stmt = todo.pop(0)
        out.append(stmt)
        if isinstance(stmt, ast.If):
            todo += stmt.body + stmt.orelse
        elif isinstance(stmt, ast.Try):
            todo += stmt.body + stmt.orelse + stmt.finalbody + [s for h in stmt.handlers for s in h.body]
    return out


def _mutable_classes(trees: dict[Path, ast.Module]) -> set[str]:
    """Classes the connectors define, but frozen dataclasses, enums and exceptions."""
    names = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            frozen = any(isinstance(d, ast.Call) and any(k.arg == "frozen" and getattr(k.value, "value", False) for k in d.keywords)
                         for d in node.decorator_list)
            bases = {_name(b) for b in node.bases}
            if frozen or bases & {"Enum", "StrEnum", "IntEnum", "Exception", "NamedTuple", "TypedDict", "Protocol"}:
                continue
            if any(b and (b.endswith("Error") or b.endswith("Exception")) for b in bases):
                continue
            names.add(node.name)
    return names


def offences(trees: dict[Path, ast.Module]) -> list[str]:
    """Every module-level mutable state in ``trees``, as 'path:line: what'."""
    classes = _mutable_classes(trees)
    found = []
    for path, tree in trees.items():
        where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        module_names: set[str] = set()
        for stmt in _module_statements(tree):
            names = _targets(stmt)
            module_names.update(names)
            value = getattr(stmt, "value", None)
            if not names or value is None:
                continue
            what = None
            if isinstance(value, (ast.Dict, ast.List, ast.Set)) and not (getattr(value, "keys", None) or getattr(value, "elts", None)):
                what = "an empty container"
            elif isinstance(value, ast.Call):
                callee = _name(value.func)
                if callee in CONTAINERS and not value.args and not value.keywords:
                    what = f"an empty {callee}()"
                elif callee in {"defaultdict", "deque", "OrderedDict", "WeakSet"}:
                    what = f"a {callee}"
                elif callee in SYNC:
                    what = f"a {callee}() guarding shared state"
                elif callee in classes:
                    what = f"an instance of {callee}"
            if what:
                found.append(f"{where}:{stmt.lineno}: {', '.join(names)} is {what}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                found.append(f"{where}:{node.lineno}: global {', '.join(node.names)}")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for deco in node.decorator_list:
                    if _name(deco.func if isinstance(deco, ast.Call) else deco) in MEMO_DECORATORS:
                        found.append(f"{where}:{node.lineno}: {node.name} is memoized process-wide")
                local = {a.arg for a in node.args.args + node.args.kwonlyargs}
                for sub in ast.walk(node):
                    if isinstance(sub, (ast.Assign, ast.AnnAssign, ast.For, ast.With)):
                        for t in ast.walk(sub):
                            if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store):
                                local.add(t.id)
                for sub in ast.walk(node):
                    target = None
                    if isinstance(sub, (ast.Assign, ast.AugAssign, ast.Delete)):
                        for t in (sub.targets if isinstance(sub, (ast.Assign, ast.Delete)) else [sub.target]):
                            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                                target = t.value.id
                    elif (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in MUTATORS
                          and isinstance(sub.func.value, ast.Name)):
                        target = sub.func.value.id
                    if target and target in module_names and target not in local:
                        found.append(f"{where}:{sub.lineno}: module-level {target} is written by {node.name}()")
    return sorted(set(found))


def _connector_trees() -> dict[Path, ast.Module]:
    files = sorted(p for p in (ROOT / "connectors").glob("*/src/**/*.py"))
    assert len(files) > 50, files  # every connector's modules, not an empty glob
    return {p: ast.parse(p.read_text(), str(p)) for p in files}


def test_connectors_keep_no_state_in_module_globals():
    assert offences(_connector_trees()) == []


def test_the_scan_finds_each_kind_of_module_state(tmp_path):
    """The scan can fail: each shape the connectors used before issue 38.2 is found, constants are not."""
    source = '''
import threading
from collections import OrderedDict
from functools import lru_cache

_clients: OrderedDict[str, object] = OrderedDict()
_lock = threading.Lock()
_budgets: dict[int, object] = {}
_SETTINGS = {}
_flag = False
LIMITS = {"a": 1}
NAMES = frozenset({"x"})


class Pool:
    def __init__(self):
        self.items = {}


POOL = Pool()


def remember(key, value):
    _SETTINGS[key] = value
    LIMITS.update(b=2)


def flip():
    global _flag
    _flag = True


@lru_cache(maxsize=None)
def cached(x):
    return x


def clean(items):
    items.append(1)
    local = {}
    local["k"] = 1
    return LIMITS["a"]
'''
    path = ROOT / "connectors" / "x" / "src" / "x.py"
    found = offences({path: ast.parse(source)})
    said = "\n".join(found)
    for expected in ("_clients is an empty OrderedDict()", "_lock is a Lock()", "_budgets is an empty container",
                     "_SETTINGS is an empty container", "POOL is an instance of Pool", "module-level _SETTINGS is written by remember()",
                     "module-level LIMITS is written by remember()", "global _flag", "cached is memoized"):
        assert expected in said, (expected, found)
    assert "NAMES" not in said and "clean()" not in said and len(found) == 9, found
