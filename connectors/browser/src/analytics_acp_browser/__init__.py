"""analytics-acp browser connector."""
