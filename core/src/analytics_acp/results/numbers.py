"""Numbers as people read them (issues 23.5, 36.5): no binary float noise in model_response.

Two steps, per value:

1. A double is written with at most 15 significant digits, the most that every decimal survives
   a round trip through a double: 12790.109999999999 (a SUM of prices) reads 12790.11.
2. A computation's noise can be larger than that last digit: a sum of a thousand prices comes back
   as 4857.99999999996, which step 1 keeps. Noise has a shape: the value needs 13 or more of those
   15 digits and ends in a run of at least five 0s or 9s followed by at most two other digits. Such
   a value reads as the number before the run, rounded: 4857.99999999996 -> 4858,
   100.00000000001 -> 100, 0.7999999999999999 -> 0.8.

A value with real precision has no such run and is left as step 1 writes it (3.14159265358979,
0.123456789012345, 2/3 as 0.666666666666667, 1e-20); one that happens to end in five 0s or 9s and
a digit or two moves by less than one part in 10^10 of itself. Integers are never touched. Only
model_response (content[0].text) goes through here: system_data, the host's table and every CSV keep
the exact double (8.5, 8.6), and the bridge's dataset view reads its rows the same way.
"""

from __future__ import annotations

import math
import re
from typing import Any

SIGNIFICANT_DIGITS = 15  # every decimal with 15 significant digits survives a round trip through a double
NOISE_MIN_DIGITS = 13  # a value this long in its 15-digit form may carry noise in its last digits
# A run of five or more 0s or 9s, then at most two digits, at the end of the 15-digit mantissa.
_NOISE_TAIL = re.compile(r"(?:0{5,}|9{5,})\d{0,2}$")


def _kept_digits(value: float) -> int:
    """How many significant digits of ``value`` people should read (module docstring)."""
    mantissa = f"{abs(value):.{SIGNIFICANT_DIGITS - 1}e}".split("e", 1)[0]
    digits = mantissa.replace(".", "").rstrip("0")
    if len(digits) < NOISE_MIN_DIGITS:
        return SIGNIFICANT_DIGITS
    noise = _NOISE_TAIL.search(digits)
    # A run of 9s from the first digit (0.99999999999997) rounds up to one digit: 1.
    return SIGNIFICANT_DIGITS if noise is None else max(noise.start(), 1)


def readable_float(value: float) -> float:
    """``value`` as people read it: at most 15 significant digits, and a computation's noise dropped."""
    if len(repr(value)) <= NOISE_MIN_DIGITS:
        # Fewer than 13 digits in its shortest form (a float's repr has a "." or an "e" besides its
        # digits): its 15-digit form is those digits padded with 0s, so neither step changes it.
        # The common case (prices, rates, inf, nan), at a tenth of the formatting below (bench case 1).
        return value
    if not math.isfinite(value) or value == 0:
        return value
    short = float(f"{value:.{_kept_digits(value)}g}")
    if short == value or not math.isfinite(short):  # 1.7976931348623157e308 at 15 digits would overflow
        return value  # the same object when nothing changes (no copy upstream)
    return short


def readable(value: Any) -> Any:
    """``value`` with every float made readable; containers are copied only where a float changes.

    The input is never modified: model_response rows may be the very objects system_data holds.
    """
    if isinstance(value, float):
        return readable_float(value)
    if isinstance(value, dict):
        changed: dict[Any, Any] | None = None
        for key, item in value.items():
            # Inline, without a call per cell (bench case 4b: every cell of the model's rows passes here): exact
            # text, integers, booleans and nulls never change; a plain float with a short repr neither.
            cls = item.__class__
            if cls in _NEVER_CHANGED or cls is float and len(repr(item)) <= NOISE_MIN_DIGITS:
                continue
            if isinstance(item, _CONTAINS_FLOATS):
                new = readable(item)
                if new is not item:
                    if changed is None:
                        changed = dict(value)
                    changed[key] = new
        return value if changed is None else changed
    if isinstance(value, list):
        items: list[Any] | None = None
        for i, item in enumerate(value):
            cls = item.__class__
            if cls in _NEVER_CHANGED or cls is float and len(repr(item)) <= NOISE_MIN_DIGITS:
                continue
            if isinstance(item, _CONTAINS_FLOATS):
                new = readable(item)
                if new is not item:
                    if items is None:
                        items = list(value)
                    items[i] = new
        return value if items is None else items
    return value


_CONTAINS_FLOATS = (float, dict, list)
_NEVER_CHANGED = frozenset({str, int, bool, type(None)})
