"""Transport wiring by construction (issue 27.3): a transport hands the server what it needs as constructor
or serve-loop arguments (``ServeState`` as the SDK's ``lifespan_state``, the table URL maker on each HTTP
request's scope, the line screen's answerer to ``ScreenedLines(...)``); no transport assigns an attribute on
an object it did not build, ``AcpServer`` above all. Checked on the source (AST), like the no-circle test."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from analytics_acp.kit.wire import INITIALIZED, StdioWire, initialize_request
from core_helpers import env

CORE = Path(__file__).resolve().parents[1] / "core" / "src" / "analytics_acp"
TRANSPORT = ("runtime.py", "http_app.py", "server_stdio.py", "requestids.py", "sdk_private.py", "cli.py")


def _stores(tree: ast.AST) -> list[ast.Attribute]:
    """Every ``x.attr = ...`` (plain, augmented, annotated, tuple targets) and ``setattr(x, ...)`` call."""
    found: list[ast.Attribute] = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and node.args:
            found.append(ast.Attribute(value=node.args[0], attr="<setattr>", ctx=ast.Store(), lineno=node.lineno))
        for target in targets:
            found += [t for t in ast.walk(target) if isinstance(t, ast.Attribute) and isinstance(t.ctx, ast.Store)]
    return found


def outside_stores(source: str) -> list[str]:
    """``line: target`` for each attribute assigned on anything but ``self`` (an object built elsewhere)."""
    return [f"{a.lineno}: {ast.unparse(a)}" for a in _stores(ast.parse(source))
            if not (isinstance(a.value, ast.Name) and a.value.id == "self")]


def acp_server_names(tree: ast.AST) -> set[str]:
    """Names that hold an AcpServer: parameters annotated ``AcpServer`` and results of ``AcpServer(...)`` /
    ``build_server(...)``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None and "AcpServer" in ast.unparse(node.annotation):
            names.add(node.arg)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            called = ast.unparse(node.value.func).rsplit(".", 1)[-1]
            if called in ("AcpServer", "build_server"):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_the_checks_find_the_old_outside_wiring():
    # The shape this issue removed: transports assigned these after the server was built.
    old = ("def serve(acp: AcpServer, stdin):\n    acp.deferred_meta = DeferredMeta()\n"
           "    acp.file_url_factory = make\n    stdin.answer = answer\n    setattr(acp, 'x', 1)\n")
    assert outside_stores(old) == ["2: acp.deferred_meta", "3: acp.file_url_factory", "4: stdin.answer",
                                   "5: acp.<setattr>"]
    assert acp_server_names(ast.parse(old)) == {"acp"}
    assert outside_stores("class A:\n    def __init__(self, x):\n        self.x = x\n") == []


# The one store the SDK leaves no argument for: its session manager builds each session's transport by the module's
# class name, so the JSON answers of Streamable HTTP (sdk_private.answer_as_json_when_asked, issue 39) replace that
# class there, once, with a subclass that behaves as the SDK's unless a request is marked on its scope.
SDK_CLASS_REPLACED = ("sdk_private.py", "manager.<setattr>")


def test_transport_modules_assign_attributes_only_on_themselves():
    found = {name: outside_stores((CORE / name).read_text(encoding="utf-8")) for name in TRANSPORT}
    module, store = SDK_CLASS_REPLACED
    replaced = [hit for hit in found[module] if hit.endswith(f": {store}")]
    assert len(replaced) == 1 and "setattr(manager, 'StreamableHTTPServerTransport'" in ast.unparse(
        ast.parse((CORE / module).read_text(encoding="utf-8")))
    found[module] = [hit for hit in found[module] if hit not in replaced]
    assert {name: stores for name, stores in found.items() if stores} == {}


def test_nothing_in_the_core_assigns_an_attribute_of_an_acp_server():
    found = {}
    for path in CORE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = acp_server_names(tree)
        hits = [f"{a.lineno}: {ast.unparse(a)}" for a in _stores(tree)
                if isinstance(a.value, ast.Name) and a.value.id in names]
        if hits:
            found[str(path.relative_to(CORE))] = hits
    assert found == {}


# sys.stdout replaced by a stream on a copy of fd 1: serve_stdio takes the SDK's transport in place.
_IN_PLACE = """
import io, os, sys
sys.stdout = io.TextIOWrapper(io.FileIO(os.dup(1), "wb"), encoding="utf-8", write_through=True)
from analytics_acp.cli import main
raise SystemExit(main(["serve", "mini_connector"]))
"""


def test_the_sdk_transport_in_place_still_answers_invalid_ids():
    """The screen built with its answerer (no ``stdin.answer = ...`` once the transport runs) still answers a
    request with an invalid id on the SDK's stdio path, and the session goes on."""
    lines = [json.dumps(initialize_request(0, plain=True)), json.dumps(INITIALIZED),
             '{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}', '{"jsonrpc": "2.0", "id": "last", "method": "ping"}']
    with StdioWire([sys.executable, "-c", _IN_PLACE], env=env()) as wire:
        wire.send_raw("\n".join(lines) + "\n")
        answers = wire.through("last")  # stdin stays open until the last answer
    assert [a.get("id") for a in answers] == [0, None, "last"]
    assert answers[1]["error"]["code"] == -32600 and answers[2]["result"] == {}
