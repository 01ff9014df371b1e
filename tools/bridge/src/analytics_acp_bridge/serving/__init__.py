"""The bridge upward: the MCP server, the bridge's own tools and its published skills."""
