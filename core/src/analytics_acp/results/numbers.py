"""Numbers as a model should read them (issue 23.5): no binary float noise in model_response.

A double such as 12790.109999999999 (a sum of prices) is written as the shortest decimal that gives
back the same value at 15 significant digits, 12790.11: what the database or API meant, and fewer
tokens. Integers and floats that are already short are untouched. Only model_response (content[0].text)
goes through here; system_data and the host's table keep the exact double (8.5, 8.6).
"""

from __future__ import annotations

import math
from typing import Any

SIGNIFICANT_DIGITS = 15  # every decimal with 15 significant digits survives a round trip through a double


def readable_float(value: float) -> float:
    """``value`` rounded to 15 significant digits: its shortest repr then drops the float noise."""
    if not math.isfinite(value):
        return value
    short = float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    return value if short == value else short  # the same object when nothing changes (no copy upstream)


def readable(value: Any) -> Any:
    """``value`` with every float made readable; containers are copied only where a float changes.

    The input is never modified: model_response rows may be the very objects system_data holds.
    """
    if isinstance(value, float):
        return readable_float(value)
    if isinstance(value, dict):
        changed = {k: readable(v) for k, v in value.items()}
        same = all(changed[k] is v for k, v in value.items())
        return value if same else changed
    if isinstance(value, list):
        items = [readable(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value
