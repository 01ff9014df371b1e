"""The ACP servers the bridge can launch (13.1-13.3) and the running processes, one per ACP."""
