"""sources.json (16.3): the entries, their references, their health and the set-up check."""
