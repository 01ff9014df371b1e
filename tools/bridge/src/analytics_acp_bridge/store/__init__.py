"""acp-data/ (16.6): datasets as CSV + meta.json, written atomically, typed."""
