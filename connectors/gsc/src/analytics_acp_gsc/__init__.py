"""ACP connector for Google Search Console (id ``gsc``)."""

__version__ = "0.1.0"
