"""``SerializedRows``: an inline table's rows with their exact JSON, built by ``results.table`` and sent as those
bytes by the stdio writer (server_stdio.py). A leaf, so that the writer's module does not import the result builder.
"""

from __future__ import annotations

from typing import Any


class SerializedRows(list):  # type: ignore[type-arg]
    """The rows of an inline table together with their exact JSON (``orjson.dumps(rows)``).

    A list for every reader; ``json`` is only valid while the list and its rows are unchanged,
    which holds for a built table (nothing edits it after build_table returns).
    """

    __slots__ = ("json",)

    def __init__(self, rows: list[dict[str, Any]], json: bytes):
        super().__init__(rows)
        self.json = json
