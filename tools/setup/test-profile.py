"""Profile of a test run from its JUnit XML (`pytest --junitxml=run.xml`): where the time goes.

    python tools/setup/test-profile.py run.xml              # per-folder totals and the 25 slowest tests
    python tools/setup/test-profile.py run.xml --write-slow # also rewrite tests/slow_tests.txt

tests/slow_tests.txt lists the tests that took at least --slow seconds (default 1.0) with their seconds;
the root conftest.py marks them ``slow`` so `make test-fast` leaves them out, and orders the files by
those seconds under xdist, longest first (tests/README.md).
"""

from __future__ import annotations

import argparse
import collections
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SLOW_LIST = ROOT / "tests" / "slow_tests.txt"


def durations(junit: Path) -> dict[str, float]:
    """nodeid -> seconds (setup + call + teardown, as JUnit records them)."""
    out: dict[str, float] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")
        # classname is the module path with dots, plus a class name when there is one (CamelCase).
        if parts and parts[-1][:1].isupper():
            parts = parts[:-1]
        out[f"{'/'.join(parts)}.py::{case.get('name')}"] = float(case.get("time") or 0)
    return out


def folder_of(nodeid: str) -> str:
    path = nodeid.split("::")[0].split("/")
    return path[0] if path[0] == "tests" else "/".join(path[:2])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit", type=Path)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--slow", type=float, default=1.0, help="seconds from which a test is listed as slow")
    parser.add_argument("--write-slow", action="store_true", help=f"rewrite {SLOW_LIST.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    times = durations(args.junit)
    total = sum(times.values())
    print(f"{len(times)} tests, {total:.0f} s of test time")
    per_folder: collections.Counter[str] = collections.Counter()
    counts: collections.Counter[str] = collections.Counter()
    for nodeid, seconds in times.items():
        per_folder[folder_of(nodeid)] += seconds
        counts[folder_of(nodeid)] += 1
    print("\nper folder:")
    for folder, seconds in per_folder.most_common():
        print(f"  {seconds:7.1f} s  {counts[folder]:4d} tests  {folder}")
    print(f"\nslowest {args.top}:")
    for nodeid, seconds in sorted(times.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"  {seconds:7.1f} s  {nodeid}")
    if args.write_slow:
        slow = sorted(n for n, s in times.items() if s >= args.slow)
        header = (f"# Tests that took >= {args.slow} s in a full run (tools/setup/test-profile.py --write-slow): seconds,\n"
                  "# a tab, the pytest node id. conftest.py marks them `slow` (`make test-fast` leaves them out) and,\n"
                  "# under xdist, sends the files with the most of these seconds to the workers first.\n")
        SLOW_LIST.write_text(header + "".join(f"{times[n]:.1f}\t{n}\n" for n in slow))
        print(f"\n{len(slow)} tests ({sum(times[n] for n in slow):.0f} s) written to {SLOW_LIST}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
