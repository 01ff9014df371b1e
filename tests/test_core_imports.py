"""Every package's modules import each other as a DAG (issue 27.2 for the core, 38.7 for the rest: build, each
connector, each tool): no circle, not even one hidden behind ``if TYPE_CHECKING`` or inside a function, because
such a circle is a method in exile that reaches back into the object that calls it."""

from __future__ import annotations

import ast
from pathlib import Path

from source_tree import package_roots

CORE = Path(__file__).resolve().parents[1] / "core" / "src" / "analytics_acp"


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The core modules ``name`` imports anywhere in its text (top level, TYPE_CHECKING blocks, functions)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                found.add(candidate if candidate in known else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in known and m != name}


def import_graph(*roots: Path) -> dict[str, set[str]]:
    """Module -> the modules of ``roots`` (default: every package of the repository) it imports."""
    modules: dict[str, Path] = {}
    for root in roots or package_roots():
        modules.update(_modules(root))
    return {name: _imports(name, path, set(modules)) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_package_has_an_import_circle():
    graph = import_graph()
    assert len(graph) > 300 and "analytics_acp.calls" in graph  # the walk really read the core
    for module in ("analytics_acp_build.freeze", "analytics_acp_ga4.clients", "analytics_acp_google.retry",
                   "analytics_acp_bridge.bridge", "analytics_acp_bench.runner", "analytics_acp_ui.app"):
        assert module in graph, module  # ... and every other package
    assert circles(graph) == []


def test_the_circle_finder_finds_circles_hidden_anywhere():
    # The detector itself: a TYPE_CHECKING-only back edge is a circle too.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"x": {"y"}, "y": set()}) == []


def test_type_checking_and_function_imports_count(tmp_path):
    pkg = tmp_path / "analytics_acp"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "one.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .two import X\n")
    (pkg / "two.py").write_text("def f():\n    from . import one\n    return one\n")
    assert circles(import_graph(pkg)) == [["analytics_acp.one", "analytics_acp.two"]]
