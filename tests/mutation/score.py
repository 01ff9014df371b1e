"""Print the mutation score per module from mutmut 2's cache (`make mutation`, tests/mutation/run.sh).

Usage: python tests/mutation/score.py build/work/mutation/.mutmut-cache
"""

from __future__ import annotations

import sqlite3
import sys
from collections import Counter, defaultdict

# mutmut 2's statuses: a suspicious mutant (tests much slower) counts as killed, as mutmut itself does.
KILLED = {"ok_killed", "ok_suspicious"}


def scores(cache: str) -> dict[str, Counter[str]]:
    """{file: Counter(status)} from the cache's SourceFile/Line/Mutant tables."""
    con = sqlite3.connect(cache)
    try:
        rows = con.execute(
            "SELECT s.filename, m.status FROM Mutant m JOIN Line l ON m.line = l.id JOIN SourceFile s ON l.sourcefile = s.id"
        ).fetchall()
    finally:
        con.close()
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for filename, status in rows:
        out[filename][status] += 1
    return out


def survivors(cache: str) -> list[tuple[str, int, int, str]]:
    """(file, mutant id, line number, line) of every mutant that survived or timed out."""
    con = sqlite3.connect(cache)
    try:
        return con.execute(
            "SELECT s.filename, m.id, l.line_number + 1, trim(l.line) FROM Mutant m JOIN Line l ON m.line = l.id "
            "JOIN SourceFile s ON l.sourcefile = s.id WHERE m.status IN ('bad_survived', 'bad_timeout') ORDER BY s.filename, m.id"
        ).fetchall()
    finally:
        con.close()


def main(argv: list[str]) -> int:
    """Print killed/total per module, then the survivors (mutmut show <id> prints each diff)."""
    cache = argv[1] if len(argv) > 1 else ".mutmut-cache"
    for filename, counts in sorted(scores(cache).items()):
        total = sum(counts.values())
        killed = sum(counts[s] for s in KILLED)
        print(f"{filename}: {killed}/{total} killed ({100 * killed / max(total, 1):.0f} %), "
              f"{counts['bad_survived']} survived, {counts['bad_timeout']} timed out, {counts['untested']} untested")
    for filename, mutant, line, text in survivors(cache):
        print(f"  survived {filename}:{line} (mutmut show {mutant}): {text[:100]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
