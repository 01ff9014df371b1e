"""acp_query (16.4): typed SQLite tables of datasets, cached and preloaded, SQL with URL-key functions."""
