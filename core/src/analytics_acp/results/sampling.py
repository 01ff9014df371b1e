"""Which rows the model sees (5.2 ``sampling``, 8.2, 9.3).

- ``head``: the first N rows, in query order.
- ``spread``: N rows spread uniformly over the whole table, always including the first and
  the last row.

Both work over an iterator of unknown length with bounded memory. ``SpreadSampler`` keeps
every k-th row (k a power of two) in a buffer of at most ``capacity`` rows; when the buffer
overflows, k doubles and every other kept row is dropped. The last row is always kept. At
the end the N candidates nearest to the ideal positions ``round(j * (T - 1) / (N - 1))``
are picked, so the result is deterministic and evenly spaced within k/2 rows of the ideal.
When the whole table is in memory, ``select_indices`` gives the exact positions.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import Any

SAMPLING_MODES = ("head", "spread")


def check_mode(mode: str) -> str:
    """The sampling mode, or ValueError for anything but head/spread."""
    if mode not in SAMPLING_MODES:
        raise ValueError(f"sampling must be 'head' or 'spread', not {mode!r}.")
    return mode


def select_indices(total: int, n: int, mode: str = "head") -> list[int]:
    """Exact row positions to show when the table length is known."""
    check_mode(mode)
    if n <= 0 or total <= 0:
        return []
    if n >= total:
        return list(range(total))
    if mode == "head":
        return list(range(n))
    if n == 1:
        return [0]
    # round(j * (total - 1) / (n - 1)), half up, in integers; distinct because the step is > 1.
    span, steps = total - 1, n - 1
    return [(2 * j * span + steps) // (2 * steps) for j in range(n)]


class SpreadSampler:
    """Streaming ``spread`` selection of ``n`` items with O(max(4n, 256)) memory."""

    def __init__(self, n: int, capacity: int | None = None):
        self.n = max(0, n)
        self.capacity = capacity if capacity is not None else max(4 * self.n, 256)
        if self.capacity < 2 * self.n:
            raise ValueError("capacity must be at least 2n.")
        self.step = 1
        self.seen = 0
        self.kept: list[tuple[int, Any]] = []
        self.last: Any = None

    def add(self, item: Any) -> None:
        """Offer the next item of the stream."""
        index = self.seen
        self.seen = index + 1
        self.last = item
        if self.n and index % self.step == 0:
            kept = self.kept
            kept.append((index, item))
            if len(kept) > self.capacity:
                self.step *= 2
                step = self.step
                self.kept = [pair for pair in kept if pair[0] % step == 0]

    def extend(self, items: Iterable[Any]) -> None:
        """Offer several items in stream order."""
        if not self.n:
            self.seen += sum(1 for _ in items) if not isinstance(items, list) else len(items)
            return
        add = self.add
        for item in items:
            add(item)

    def picks(self) -> list[tuple[int, Any]]:
        """The selected ``(stream position, item)`` pairs, in stream order."""
        total = self.seen
        if not self.n or not total:
            return []
        candidates = list(self.kept)
        if candidates[-1][0] != total - 1:
            candidates.append((total - 1, self.last))
        if total <= self.n:
            return candidates
        targets = select_indices(total, self.n, "spread")
        picks: list[tuple[int, Any]] = []
        pos, count = 0, len(candidates)
        for j, target in enumerate(targets):
            left = self.n - j  # targets still to place, this one included
            while pos + 1 <= count - left and abs(candidates[pos + 1][0] - target) <= abs(candidates[pos][0] - target):
                pos += 1
            picks.append(candidates[pos])
            pos += 1
        return picks

    def result(self) -> list[Any]:
        """The selected items, in stream order."""
        return [item for _, item in self.picks()]


def head(rows: Iterable[Any], n: int) -> list[Any]:
    """The first ``n`` items (reads no further)."""
    return list(islice(rows, max(0, n)))


def spread(rows: Iterable[Any], n: int) -> list[Any]:
    """``n`` items spread over the whole stream, first and last included (reads it once)."""
    sampler = SpreadSampler(n)
    for item in rows:
        sampler.add(item)
    return sampler.result()


def sample(rows: Iterable[Any], n: int, mode: str = "head") -> list[Any]:
    """``head`` or ``spread`` over any iterable."""
    return head(rows, n) if check_mode(mode) == "head" else spread(rows, n)
