"""A form being filled, kept in memory between its steps (resource picker, sign-in, a refused save).

A secret typed, uploaded or filled by a sign-in is never sent back to the page (5.5.4); the draft keeps
it in this process's memory so the person does not type it again after the picker or the sign-in
round trip, and the page shows it as kept. Drafts are few, expire, and are never written anywhere.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any

DRAFT_TTL_S = 3600.0
MAX_DRAFTS = 50


@dataclass
class Draft:
    """One form in progress."""

    id: str
    acp: str
    editing: str | None  # the source id being edited, None for a new source
    values: dict[str, str] = field(default_factory=dict)  # submitted non-secret inputs
    lists: dict[str, list[str]] = field(default_factory=dict)  # multi-choice inputs (blocks, tables)
    secrets: dict[str, str] = field(default_factory=dict)  # input name -> secret typed or uploaded (memory only)
    filled: dict[str, Any] = field(default_factory=dict)  # what a sign-in filled (5.5.5), by property
    signed_in_as: str | None = None
    signin_variant: int | None = None  # the credentials variant the sign-in filled
    notice: str | None = None  # the last sign-in / picker outcome, in words
    suggestions: list[dict[str, Any]] = field(default_factory=list)  # autocontext resources (6.3)
    suggestions_note: str | None = None
    touched: float = field(default_factory=time.monotonic)

    def get(self, name: str) -> str | None:
        """A submitted value, or a kept secret when the input was left empty."""
        value = self.values.get(name)
        return value if value not in (None, "") else self.secrets.get(name, value)


class Drafts:
    """The page's drafts (bounded in number and age)."""

    def __init__(self) -> None:
        self._items: dict[str, Draft] = {}

    def new(self, acp: str, editing: str | None) -> Draft:
        """A fresh draft."""
        self._expire()
        draft = Draft(id=secrets.token_urlsafe(12), acp=acp, editing=editing)
        self._items[draft.id] = draft
        return draft

    def get(self, draft_id: str | None, acp: str, editing: str | None) -> Draft:
        """The draft with that id for that form, or a fresh one."""
        self._expire()
        draft = self._items.get(draft_id or "")
        if draft is None or draft.acp != acp or draft.editing != editing:
            return self.new(acp, editing)
        draft.touched = time.monotonic()
        return draft

    def find(self, draft_id: str) -> Draft | None:
        """The draft with that id, if it is still kept."""
        return self._items.get(draft_id)

    def drop(self, draft_id: str) -> None:
        """Forget a draft (saved or abandoned); its secrets leave memory with it."""
        self._items.pop(draft_id, None)

    def _expire(self) -> None:
        now = time.monotonic()
        for key in [k for k, d in self._items.items() if now - d.touched > DRAFT_TTL_S]:
            del self._items[key]
        while len(self._items) >= MAX_DRAFTS:
            del self._items[min(self._items, key=lambda k: self._items[k].touched)]
