"""Values the example's declaration and its tool modules share (a leaf: tools.py, blocks.py and data.py never import
declaration.py, which only plugin.py reads)."""

from __future__ import annotations

CHANNELS = ("organic", "paid_search", "email", "referral", "direct")  # query_orders' channel enum, the channels block
