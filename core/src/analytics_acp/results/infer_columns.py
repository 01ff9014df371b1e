"""Columns marked ``"type": "infer"``: typed from every value, text included (8.6).

A driver whose result types say nothing (SQLite: any value can sit in any column, and dates are
text) declares ``{"name": ..., "type": "infer"}``, optionally with ``"hint"``: the type its
source declared (a SQLite column's declared type). The column is typed over the whole result:

- Text cells are read with the 16.6 rule of inference.py (``'2026-01-01'`` is a date,
  ``'12'`` an integer, ``'007'`` text); other values by their Python type.
- Kinds mix by 8.6 (integer + number -> number, date + datetime -> datetime, else string).
- The hint wins when every value fits it (a BOOLEAN column of 0/1, a NUMERIC column whose values
  all happen to be whole, a JSON column of JSON text); a TEXT hint never does, since SQLite
  stores dates as text.
- ``"binary": "hex"`` writes byte strings as lowercase hex text (a SQLite BLOB, as the databases
  connector shows it) instead of base64; the text is then typed like any other text cell. The
  driver can hand its rows over untouched: the compiled row sends bytes here, since no inline
  class test passes them.
- Values are first kept as they came (text stays the original text); when the final type asks
  for another form (text numbers, ``'2026-01-02 10:15:00'`` -> ISO 8601, any value in a mixed
  column -> text), the builder's finishing pass converts them, rewriting a spilled table file
  as a stream, so a million-row result is never held in memory.
"""

from __future__ import annotations

from typing import Any

from ..constants import COLUMN_TYPES
from .conversion import MEMO_SIZE, TO_TYPE, Converter, Unconvertible, classify, plain_to_text, to_string
from .inference import CHECKED_HINTS, TEXT_CHECKS, hinted_type, text_kind

INFER = "infer"
_IDENTITY = {"integer": int, "number": float, "boolean": bool}
_BYTES = frozenset({bytes, bytearray, memoryview})


class InferredColumn:
    """Kinds seen in one inferred column and what its values need at the end."""

    def __init__(self, kinds: set[str], hint: Any = None, binary: Any = None):
        self.kinds = kinds  # shared with the schema's Column.kinds
        self.hex = binary == "hex"
        self.text_kinds: set[str] = set()  # kinds read from text cells; "empty" for ''
        self.hint = hint if hint in COLUMN_TYPES and hint != "string" else None
        self.hint_ok = True  # every value so far converts to a CHECKED_HINTS hint
        self.memo: dict[str, str] = {}  # text already classified -> itself (the compiled row looks here first)
        self._last: str | None = None

    def _text_kind(self, text: str) -> str | None:
        last = self._last
        if last is not None and last != "number" and TEXT_CHECKS[last](text):
            return last  # columns rarely change kind: try the last one first
        kind = text_kind(text)
        self._last = kind if kind in TEXT_CHECKS else None
        return kind

    def _check_hint(self, value: Any) -> None:
        try:
            TO_TYPE[self.hint](value)  # type: ignore[index]
        except Unconvertible:
            self.hint_ok = False

    def convert(self, value: Any) -> Any:
        """Record the value's kind; return it plain (text as it came)."""
        if self.hex and value.__class__ in _BYTES:
            value = bytes(value).hex()
            if self.fast_class() is str:
                return value  # a text column: its text passes the row's inline test unrecorded, so does this
        checked = self.hint_ok and self.hint in CHECKED_HINTS
        if value.__class__ is str:
            kind = self._text_kind(value)
            if kind is None:
                self.text_kinds.add("empty")
                return value
            self.kinds.add(kind)
            if kind != "string":
                self.text_kinds.add(kind)
            if checked:
                self._check_hint(value)
            if len(self.memo) < MEMO_SIZE:
                self.memo[value] = value
            return value
        kind, plain = classify(value)
        if kind is not None:
            self.kinds.add(kind)
            if checked:
                self._check_hint(plain)
        return plain

    def fast_class(self) -> type | None:
        """Class whose values may skip the converter (their kind is already recorded and final)."""
        if self.hint_ok and self.hint in CHECKED_HINTS:
            return None  # each value must still be checked against the hint
        if "string" in self.kinds:
            return str  # the column is text whatever else comes; text passes unchanged
        if len(self.kinds) == 1:
            return _IDENTITY.get(next(iter(self.kinds)))
        return None

    def final_type(self) -> str:
        """The column's 8.6 type over everything seen."""
        return hinted_type(self.kinds, self.hint, self.hint_ok)

    def finalizer(self) -> tuple[str, Converter | None]:
        """Final type and the conversion the kept values need (None when they are final already)."""
        final = self.final_type()
        if final == "string":
            return final, (plain_to_text if len(self.kinds) > 1 else None)
        text_left = self.text_kinds - ({"date"} if final == "date" else set())
        same = self.kinds <= ({"integer", "number"} if final == "number" else {final})
        if not text_left and same:
            return final, None
        to = TO_TYPE[final]

        def convert(value: Any) -> Any:
            if value == "":
                return None  # an empty text cell in a typed column is a null, as in a CSV
            try:
                return to(value)
            except Unconvertible:
                return to_string(value)

        return final, convert
