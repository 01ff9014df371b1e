"""analytics-acp-build: build, package, install and check ACP servers (spec 13, 14.2)."""

__version__ = "0.1.0"
