"""Block id rule (7.1): stable ids matching ^[a-z][a-z0-9_]*$."""

import re

BLOCK_ID = re.compile(r"^[a-z][a-z0-9_]*$")


def check_block_id(block_id: str) -> None:
    """Raise ValueError for an id that breaks 7.1 (a connector bug, caught at load time)."""
    if not BLOCK_ID.match(block_id):
        raise ValueError(f"block id {block_id!r} must match ^[a-z][a-z0-9_]*$ (spec 7.1)")
