"""The one 8.6 inference rule: the kind of a value, the kind of a text cell, and how kinds mix.

Used by the result builder for undeclared columns and for columns marked ``"type": "infer"``
(values whose driver type says nothing, such as SQLite's), and by the ACP Bridge for CSVs dropped
into acp-data by hand (16.6), so the same data gets the same type whichever way it arrives.

Text cells (16.6): integer, number, boolean, date, datetime, else string. A number written with
leading zeros (a postcode, ``007``) is text, because reading it as a number would lose the zeros.
Numbers are ASCII decimals as SQL, spreadsheets and CSV readers write them: ``.5``, ``-.5`` and ``5.``
are numbers (the omitted zero loses nothing); Python-only spellings (``1_000``), other scripts' digits,
surrounding spaces and values beyond a double (``1e999``, which would become null) stay text.
Booleans are the words in BOOLEAN_WORDS (any case); ``0``/``1`` read as integers. Dates are
``YYYY-MM-DD``; datetimes ISO 8601 with ``T`` or a space (``Z`` or an offset allowed).
Mixing (8.6): integer + number -> number, date + datetime -> datetime, any other mix -> string.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Callable, Iterable

TRUE_WORDS = frozenset({"true", "t", "yes", "y"})
FALSE_WORDS = frozenset({"false", "f", "no", "n"})
BOOLEAN_WORDS = TRUE_WORDS | FALSE_WORDS

# "0" is an integer; "007" is an identifier written with zeros, so it stays text. ASCII digits only.
_INTEGER = re.compile(r"[+-]?(?:0|[1-9][0-9]*)").fullmatch


def is_integer_text(text: str) -> bool:
    """``12``, ``-3``, ``+7``, ``0``; not ``007``."""
    return _INTEGER(text) is not None


# Sign, digits without leading zeros and/or a fraction (``.5``, ``5.``), optional exponent; ASCII only.
_NUMBER = re.compile(r"[+-]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?").fullmatch


def is_number_text(text: str) -> bool:
    """A finite decimal number (every integer text is one): ``1.5``, ``.5``, ``-2e3``; not ``nan``, ``01.5``, ``1e999``."""
    return _NUMBER(text) is not None and math.isfinite(float(text))


def is_date_text(text: str) -> bool:
    """``YYYY-MM-DD``, a real calendar day."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return False
    try:
        _dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def is_datetime_text(text: str) -> bool:
    """ISO 8601 date and time (``T`` or a space between them; ``Z`` or an offset allowed)."""
    if len(text) < 16 or text[10] not in "T ":
        return False
    try:
        _dt.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        return False
    return is_date_text(text[:10])


def is_boolean_text(text: str) -> bool:
    """One of BOOLEAN_WORDS, any case."""
    return text.lower() in BOOLEAN_WORDS


# In the order a cell is tried; each check only ever accepts more of what a later kind widens to.
TEXT_CHECKS: dict[str, Callable[[str], bool]] = {
    "integer": is_integer_text,
    "number": is_number_text,
    "boolean": is_boolean_text,
    "date": is_date_text,
    "datetime": is_datetime_text,
}
# What a column of each kind still accepts without becoming string (8.6 widening).
_ACCEPTS: dict[str, Callable[[str], bool]] = {
    **TEXT_CHECKS,
    "datetime": lambda text: is_datetime_text(text) or is_date_text(text),
}
_WIDER = {"integer": "number", "date": "datetime"}


def text_kind(text: str) -> str | None:
    """Kind of one text cell (16.6); None for an empty cell (a null)."""
    if not text:
        return None
    for kind, check in TEXT_CHECKS.items():
        if check(text):
            return kind
    return "string"


def infer_type(kinds: Iterable[str]) -> str:
    """8.6 mixing rules over the kinds seen in a column (no kind at all -> string)."""
    kinds = set(kinds)
    if not kinds:
        return "string"
    if len(kinds) == 1:
        return next(iter(kinds))
    if kinds == {"integer", "number"}:
        return "number"
    if kinds == {"date", "datetime"}:
        return "datetime"
    return "string"


def narrow(state: str | None, texts: list[str]) -> str | None:
    """The column kind after ``texts`` (non-empty cells), starting from ``state`` (None: nothing seen).

    Equal to ``infer_type`` over every cell's ``text_kind``, but a batch costs one C-level
    ``all(map(check, texts))`` per column: a column only moves integer -> number, date ->
    datetime, or to string.
    """
    if not texts or state == "string":
        return state
    if state is None:
        state = text_kind(texts[0])
    while state != "string":
        if all(map(_ACCEPTS[state], texts)):  # type: ignore[index]
            return state
        state = _WIDER.get(state, "string")  # type: ignore[arg-type]
    return state


class TextTypeGuess:
    """Incremental inference for one column of text cells (a CSV column): the 16.6 type of all of them."""

    def __init__(self) -> None:
        self.state: str | None = None

    def add(self, text: str) -> None:
        """Feed one cell (empty cells are nulls and fit every type)."""
        if text:
            self.state = narrow(self.state, [text])

    def add_many(self, texts: Iterable[str]) -> None:
        """Feed a batch of cells of this column."""
        if self.state != "string":
            self.state = narrow(self.state, [t for t in texts if t])

    def result(self) -> str:
        """The inferred type (string when no typed reading fits every value)."""
        return self.state or "string"


# A column marked "infer" may carry the type its source declared (a SQLite column's affinity) as
# a hint: the hint wins when every value fits it. For these hints, fitting is a matter of kinds.
HINT_KINDS = {
    "integer": frozenset({"integer"}),
    "number": frozenset({"integer", "number"}),
    "date": frozenset({"date"}),
    "datetime": frozenset({"date", "datetime"}),
}
CHECKED_HINTS = ("boolean", "json")  # these need each value checked (0/1 integers, JSON text)


def hinted_type(kinds: set[str], hint: str | None, hint_ok: bool) -> str:
    """Final type of an inferred column: the hint when every value fits it, else ``infer_type``."""
    if hint in HINT_KINDS and kinds <= HINT_KINDS[hint]:
        return hint
    if hint in CHECKED_HINTS and hint_ok:
        return hint
    return infer_type(kinds)
