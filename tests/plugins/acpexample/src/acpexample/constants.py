"""Values the example's declaration and its tool modules share (a leaf: tools.py, blocks.py and data.py never import
declaration.py, which only plugin.py reads)."""

from __future__ import annotations

from typing import Literal, get_args

Channel = Literal["organic", "paid_search", "email", "referral", "direct"]  # query_orders' channel argument
CHANNELS: tuple[str, ...] = get_args(Channel)  # the channels block and the data
