"""Look-ups that make a not-found message useful: a dataset's location, the datasets and tables one can see.

Each look-up is best effort (None / [] when it fails) and runs under the call's budget.
"""

from __future__ import annotations

from typing import Any

from analytics_acp import CallContext

from . import client as bq

MAX_LISTED = 500


class Finder:
    """Look-ups through ``client`` for the call ``ctx``."""

    def __init__(self, ctx: CallContext, client: Any):
        self.ctx, self.client = ctx, client

    def location(self, dataset_id: str) -> str | None:
        """The dataset's location, or None when it does not exist (or cannot be read)."""
        try:
            return bq.call(self.ctx, self.client.get_dataset, dataset_id).location
        except Exception:
            return None

    def datasets(self, project: str) -> list[str]:
        """Dataset ids of ``project`` these credentials can list."""
        try:
            return [d.dataset_id for d in bq.call(self.ctx, self.client.list_datasets, project, max_results=MAX_LISTED,
                                                  listing=True)]
        except Exception:
            return []

    def tables(self, dataset_id: str) -> list[str]:
        """Table ids of ``dataset_id`` (project.dataset)."""
        try:
            return [t.table_id for t in bq.call(self.ctx, self.client.list_tables, dataset_id, max_results=MAX_LISTED,
                                                listing=True)]
        except Exception:
            return []
