"""The mcp SDK's private names live in one shim, pinned to one SDK version (issue 27.3): this fails loudly
when the SDK changes under the core, and when another module reaches for a private SDK name: the core's, or
any other package's (connectors, build, the bridge, the bench: issue 38.7)."""

from __future__ import annotations

import ast
import importlib.metadata
import inspect
from pathlib import Path

from analytics_acp import sdk_private
from source_tree import ROOT, source_files

CORE = Path(__file__).resolve().parents[1] / "core" / "src" / "analytics_acp"
PRIVATE_ATTRIBUTES = {"_connection", "_dispatcher"}  # SDK objects' private attributes the shim reads
# ... and those of the Streamable HTTP transport, whose POST handling the shim does for JSON-answered calls
TRANSPORT_ATTRIBUTES = {"_handle_post_request", "_read_stream_writer", "_request_streams", "_check_content_type",
                        "_validate_request_headers", "_terminate_unanswered_request", "_clean_up_memory_streams",
                        "_create_json_response"}
PRIVATE_ATTRIBUTES |= TRANSPORT_ATTRIBUTES


def test_the_installed_sdk_is_the_one_the_shim_was_read_from():
    assert importlib.metadata.version("mcp") == sdk_private.MCP_VERSION, (
        "the mcp SDK changed: re-read every name in analytics_acp/sdk_private.py against it, then bump MCP_VERSION")


def test_every_private_name_is_still_there_with_its_shape():
    from mcp.client.session import ClientSession
    from mcp.server.session import ServerSession
    from mcp.server.stdio import _claim_fd, _is_backed_by_fd, _open_stdin_diversion, _open_stdout_diversion
    from mcp.shared._context_streams import create_context_streams
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    assert list(inspect.signature(_claim_fd).parameters)[:4] == ["fd", "stream", "mode", "open_diversion"]
    assert len(inspect.signature(_is_backed_by_fd).parameters) == 2
    assert callable(_open_stdin_diversion) and callable(_open_stdout_diversion) and callable(create_context_streams)
    assert "headers" in inspect.signature(create_mcp_http_client).parameters
    assert "send_raw_request" in vars(JSONRPCDispatcher)
    assert "_connection" in inspect.getsource(ServerSession.__init__)
    assert "_dispatcher" in inspect.getsource(ClientSession)
    assert sdk_private.context_streams() is create_context_streams


def test_the_streamable_http_transport_still_has_what_the_json_answers_use():
    import mcp.server.streamable_http_manager as manager
    from mcp.server import streamable_http
    from mcp.shared.message import ServerMessageMetadata

    transport = streamable_http.StreamableHTTPServerTransport
    assert "StreamableHTTPServerTransport" in vars(manager)  # the manager builds its transports by this name
    assert "StreamableHTTPServerTransport(" in inspect.getsource(manager.StreamableHTTPSessionManager)
    methods = TRANSPORT_ATTRIBUTES - {"_read_stream_writer", "_request_streams"}
    assert all(callable(getattr(transport, name, None)) for name in methods)
    assert list(inspect.signature(transport._handle_post_request).parameters) == ["self", "scope", "request", "receive", "send"]
    source = inspect.getsource(transport)
    assert "self._request_streams[request_id] = " in source and "writer = self._read_stream_writer" in source
    assert "can_send_request" in ServerMessageMetadata.__dataclass_fields__
    assert {"REQUEST_STREAM_BUFFER_SIZE", "EventMessage", "check_accept_headers"} <= set(vars(streamable_http))


def _private_uses(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mcp"):
            if "._" in f".{node.module}" or any(a.name.startswith("_") for a in node.names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} from {node.module} import …")
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_ATTRIBUTES:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}")
    return found


def test_no_other_module_uses_a_private_sdk_name():
    files = source_files()
    assert any("analytics_acp_bench" in path.parts for path in files)  # the tools are read too (issue 38.7)
    uses = [u for path in files if path != CORE / "sdk_private.py" for u in _private_uses(path)]
    assert uses == []
    assert _private_uses(CORE / "sdk_private.py")  # the scan sees them where they are
