"""Host side of ACP: a client that drives ACP servers as a host would (used by tests, kit, bridge, check)."""

from .client import FULL_HOST, AcpClient, NotAcpServer, ProtocolError, ToolResult, negotiate
from .tables import LoadedTable, fetch_table_uri, load_system_data

__all__ = [
    "FULL_HOST", "AcpClient", "LoadedTable", "NotAcpServer", "ProtocolError", "ToolResult", "fetch_table_uri",
    "load_system_data", "negotiate",
]
