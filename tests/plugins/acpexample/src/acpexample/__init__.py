"""Example ACP connector (``analytics-acp serve example``): deterministic data, every core feature."""
