"""ACP Bridge (spec Part III, 16): an MCP server for any MCP client that acts as an ACP host.

Upward it speaks plain MCP over stdio; downward it launches ACP servers (``acps/*/acp.json``
folders and connectors installed in the environment) through ``analytics_acp.host.AcpClient``,
passes credentials and limits from ``sources.json`` in ``_meta.acp`` and stores every
extraction as a dataset in the project's ``acp-data/`` folder.
"""

__version__ = "0.1.0"
