"""No failure disappears without a trace (issue 38.7): a broad ``except Exception`` (or ``BaseException``, or a
bare ``except``) in any shipped package either narrows what it catches or says something, at least a DEBUG log
line, with a comment on why the failure is survivable. A body of ``pass`` alone, or ``suppress(Exception)``,
is refused here."""

from __future__ import annotations

import ast
from pathlib import Path

from source_tree import ROOT, source_files

BROAD = {"Exception", "BaseException"}


def _names(node: ast.expr | None) -> set[str]:
    if node is None:
        return {"BaseException"}  # a bare except
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    return {item.id for item in items if isinstance(item, ast.Name)}


def _says_nothing(body: list[ast.stmt]) -> bool:
    return all(isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)) for s in body)


def silent_excepts(path: Path) -> list[str]:
    """The lines of every broad handler whose body does nothing, and of every ``suppress`` of a broad class."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ExceptHandler) and _names(node.type) & BROAD and _says_nothing(node.body):
            found.append(f"{node.lineno}")
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "suppress":
            if any(isinstance(arg, ast.Name) and arg.id in BROAD for arg in node.args):
                found.append(f"{node.lineno} suppress")
    return found


def test_no_broad_except_is_silent():
    files = source_files()
    assert len(files) > 300  # the walk read every package, not just the core
    assert [f"{path.relative_to(ROOT)}:{hit}" for path in files for hit in silent_excepts(path)] == []


def test_the_scan_sees_each_silent_form(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import contextlib, logging\n"
        "try:\n    pass\nexcept Exception:\n    pass\n"                       # 4: silent
        "try:\n    pass\nexcept:\n    pass\n"                                 # 8: bare, silent
        "try:\n    pass\nexcept (OSError, BaseException):\n    'why'\n"        # 12: a string is no trace
        "with contextlib.suppress(Exception):\n    pass\n"                    # 14: suppress
        "try:\n    pass\nexcept Exception as exc:\n    logging.debug('%s', exc)\n"  # logged: fine
        "try:\n    pass\nexcept OSError:\n    pass\n"                         # narrowed: fine
    )
    assert silent_excepts(sample) == ["4", "8", "12", "14 suppress"]
