"""`analytics-acp ui`: the local set-up page of the ACP Bridge (issue 35)."""
