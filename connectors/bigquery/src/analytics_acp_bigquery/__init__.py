"""analytics-acp `bigquery` connector: read-only SQL with a dry run and a hard cost cap (spec 9, 10.4, 15.3)."""
