"""Case 2: SELECT of 1M rows x 6 columns, databases connector + bridge -> acp-data/<id>.csv vs ``sqlite3 -csv``;
case 2b: the same against its floor (``BigExtractFloor``, fixtures/extract_floor.py).

Ours: one ``bench__execute_sql`` call on a running bridge (MCP stdio, SDK ClientSession), timed
from request to answer; the answer comes once the full CSV is in acp-data. Baseline: the
Debian sqlite3 shell writing the same rows with a header to a file.

Content check (first round): the sqlite3 shell is run with ``-newline "\\r\\n"`` because our
CSV ends rows with CRLF (RFC 4180, 16.6) and the shell's csv mode uses LF; that is the only
normalization. The files are then compared byte for byte (``csv_byte_identical``); if they
differ, the rows are compared parsed (quoting is the other legitimate difference:
the shell quotes any cell with a space or non-ASCII text, Python's csv only when needed).
The bench data holds neither (see fixtures/benchdb.py), so the bytes are expected to match.

After each timed call the case waits, untimed, until the bridge's acp_query preload worker for
the new dataset has exited (it starts once the CSV is saved: tools/bridge preload.py), so no
round times the previous round's preload (case 5 times the query that waits for it).

CPU seconds per side (``*_cpu_s``, medians over the rounds; the main number on a shared machine,
where wall times move with other jobs' load): the connector's and the bridge's utime + stime
(psutil) from request to answer, and the sqlite3 shell's (``os.wait4``).

A 10-row extraction runs untimed first (lazy imports are case 4's cost). Peak RSS of the bridge and of the connector are polled with psutil every 50 ms during the
calls (``*_peak_rss_mib``) and read from the kernel's VmHWM at the end (``*_vm_hwm_mib``).
"""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import psutil

from ..fixtures.benchdb import TABLE, shared_db
from ..fixtures.bridgehost import SOURCE, BridgeHost, PeakRss, quick_bridge, vm_hwm_mib
from ..fixtures.extract_floor import FloorPipeline
from ..fixtures.stdio import StdioHost
from ..runner import Case

SQL = f"SELECT * FROM {TABLE}"
SQLITE3 = shutil.which("sqlite3") or "/usr/bin/sqlite3"


def sqlite3_csv(db: Path, sql: str, out: Path) -> float:
    """The baseline: the sqlite3 shell's CSV (header, CRLF rows) into ``out``; returns the shell's CPU seconds."""
    with open(out, "wb") as handle:
        proc = subprocess.Popen([SQLITE3, "-csv", "-header", "-newline", "\r\n", str(db), sql], stdout=handle)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, SQLITE3)
    return usage.ru_utime + usage.ru_stime


def cpu_s(proc: Any) -> float:
    """utime + stime of a live process so far (children not included); 0.0 when it is gone."""
    try:
        times = proc.cpu_times()
    except Exception:  # psutil.Error: the process ended
        return 0.0
    return float(times.user + times.system)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def compare_csv(ours: Path, theirs: Path) -> dict[str, Any]:
    """Byte comparison, then (only if needed) a parsed row-by-row comparison."""
    same = ours.stat().st_size == theirs.stat().st_size and _sha256(ours) == _sha256(theirs)
    out: dict[str, Any] = {"csv_byte_identical": same}
    if same:
        out["csv_same_rows"] = True
        return out
    with open(ours, newline="", encoding="utf-8") as a, open(theirs, newline="", encoding="utf-8") as b:
        for n, (x, y) in enumerate(zip(csv.reader(a), csv.reader(b), strict=False)):
            if x != y:
                out["csv_same_rows"] = False
                out["csv_first_difference"] = f"line {n + 1}: ours {x!r} vs sqlite3 {y!r}"
                return out
        rest_a, rest_b = sum(1 for _ in a), sum(1 for _ in b)
    out["csv_same_rows"] = rest_a == rest_b
    if rest_a != rest_b:
        out["csv_first_difference"] = f"row counts differ (extra lines: ours {rest_a}, sqlite3 {rest_b})"
    return out


class BigExtract:
    """State of the case: the DB, a running bridge, and the measurements beside the timings."""

    def __init__(self, rows: int, quick: bool = False):
        self.rows, self.quick = rows, quick
        self.facts: dict[str, Any] = {"rows": rows}
        self.host: StdioHost | None = None
        self.checked = False

    def setup(self) -> None:
        self.db = shared_db(self.rows)
        self.tmp = Path(tempfile.mkdtemp(prefix="acp-bench-big-"))
        if self.quick:  # the bridge acp_query's cases use too (fixtures/bridgehost.py): not closed here
            _, self.bridge = quick_bridge(self.db)
        else:
            self.host = StdioHost()
            self.bridge = BridgeHost(self.host, self.tmp, self.db)
            self.bridge.start()
        self.bridge_proc, children = self.bridge.processes()
        self.connector_proc = children[0] if children else None
        self.peaks = {"bridge": 0.0, "connector": 0.0}
        self.cpu: dict[str, list[float]] = {"bridge": [], "connector": [], "sqlite3": []}
        # One small untimed extraction first: the connector imports its SQL stack on first use,
        # which is cold-start cost (case 4), not the cost of moving the rows.
        _, texts = self.bridge.call(f"{SOURCE}__execute_sql", {"sql": f"{SQL} LIMIT 10"})
        self.bridge.drop_dataset(self.bridge.dataset_of(texts))

    def ours(self) -> float:
        procs = {"bridge": self.bridge_proc, "connector": self.connector_proc}
        before = {label: cpu_s(proc) for label, proc in procs.items() if proc is not None}
        with PeakRss(procs) as rss:
            elapsed, texts = self.bridge.call(f"{SOURCE}__execute_sql", {"sql": SQL})
        for label, start in before.items():
            self.cpu[label].append(cpu_s(procs[label]) - start)
        for label, peak in rss.peaks.items():
            self.peaks[label] = max(self.peaks[label], peak)
        dataset = self.bridge.dataset_of(texts)
        path = self.bridge.data_dir / f"{dataset}.csv"
        if not self.checked:
            self.checked = True
            expected = self.tmp / "sqlite3.csv"
            sqlite3_csv(self.db, SQL, expected)
            self.facts.update(compare_csv(path, expected))
            self.facts["csv_bytes"] = path.stat().st_size
            self.facts["model_context_bytes"] = sum(len(t.encode()) for t in texts)
            expected.unlink()
        self.bridge.drop_dataset(dataset)
        # Untimed: the acp_query preload of this dataset runs after the answer (case 5 times it);
        # the next round (ours or the baseline) starts on an idle bridge, as a host's next call would.
        self.bridge.wait_background()
        return elapsed

    def baseline(self) -> None:
        out = self.tmp / "baseline.csv"
        self.cpu["sqlite3"].append(sqlite3_csv(self.db, SQL, out))
        out.unlink()

    def extra(self) -> dict[str, Any]:
        facts = dict(self.facts)
        facts["bridge_peak_rss_mib"] = round(self.peaks["bridge"], 1)
        facts["connector_peak_rss_mib"] = round(self.peaks["connector"], 1)
        facts["bridge_vm_hwm_mib"] = vm_hwm_mib(self.bridge_proc)
        facts["connector_vm_hwm_mib"] = vm_hwm_mib(self.connector_proc)
        for label, samples in getattr(self, "cpu", {}).items():  # none before setup (tests call extra alone)
            if samples:
                facts[f"{label}_cpu_s"] = round(statistics.median(samples), 3)
                facts[f"{label}_cpu_samples_s"] = [round(x, 3) for x in samples]
        facts["rss_target_mib"] = 400
        facts["rss_met"] = max(self.peaks.values()) <= 400 and all(
            (v or 0) <= 400 for v in (facts["bridge_vm_hwm_mib"], facts["connector_vm_hwm_mib"])
        )
        return facts

    def teardown(self) -> None:
        try:
            if self.host is not None:
                self.host.close()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)


class BigExtractFloor(BigExtract):
    """Case 2b: the same extraction against its floor (issue 39.2), fixtures/extract_floor.py.

    The floor is the bare path plus the step the protocol cannot skip, on the same two cores: the
    driver's fetch (pysqlite ``fetchmany``), one JSON encode of every row as an object (8.5 asks
    for an array of objects) in one process, one JSON parse and the CSV file in another, fed by a
    pipe. The timed baseline is its ``tight`` form (each step at the best cost we know: generated
    comprehension for the objects, the bridge's CSV writer, GC off); the ``plain`` form
    (``dict(zip(...))``, ``csv.writer``) runs once in setup and is reported beside it
    (``plain_floor_*``). Both CSVs are checked against the sqlite3 shell's, as ours is.
    """

    def setup(self) -> None:
        super().setup()
        self.cpu.update(floor_producer=[], floor_consumer=[])
        plain = FloorPipeline(tight=False)
        plain.start()
        try:
            out = self.tmp / "plain-floor.csv"
            plain.run(self.db, f"{SQL} LIMIT 10", out)  # untimed, as ours: imports and first connection
            procs = _floor_procs(plain)
            before = {k: cpu_s(p) for k, p in procs.items()}
            self.facts["plain_floor_s"] = round(plain.run(self.db, SQL, out), 3)
            for k, p in procs.items():
                self.facts[f"plain_floor_{k}_cpu_s"] = round(cpu_s(p) - before[k], 3)
            self._check(out, "plain_floor_")
        finally:
            plain.close()
        self.floor = FloorPipeline(tight=True)
        self.floor.start()
        self.floor.run(self.db, f"{SQL} LIMIT 10", self.tmp / "floor.csv")
        self.floor_checked = False

    def _check(self, out: Path, prefix: str) -> None:
        expected = self.tmp / "sqlite3.csv"
        sqlite3_csv(self.db, SQL, expected)
        self.facts.update({f"{prefix}{k}": v for k, v in compare_csv(out, expected).items()})
        expected.unlink()
        out.unlink()

    def baseline(self) -> float:  # type: ignore[override]
        out = self.tmp / "floor.csv"
        procs = _floor_procs(self.floor)
        before = {k: cpu_s(p) for k, p in procs.items()}
        elapsed = self.floor.run(self.db, SQL, out)
        for k, p in procs.items():
            self.cpu[f"floor_{k}"].append(cpu_s(p) - before[k])
        if not self.floor_checked:
            self.floor_checked = True
            self._check(out, "floor_")
        else:
            out.unlink()
        return elapsed

    def extra(self) -> dict[str, Any]:
        facts = super().extra()
        ours = facts.get("connector_cpu_s", 0) + facts.get("bridge_cpu_s", 0)
        floor = facts.get("floor_producer_cpu_s", 0) + facts.get("floor_consumer_cpu_s", 0)
        if floor:
            facts["cpu_ratio_both_sides"] = round(ours / floor, 3)  # all the work, both processes
        if facts.get("floor_producer_cpu_s"):  # the first half sets the pace of both pipelines
            facts["cpu_ratio_first_half"] = round(facts.get("connector_cpu_s", 0) / facts["floor_producer_cpu_s"], 3)
        return facts

    def teardown(self) -> None:
        try:
            if getattr(self, "floor", None) is not None:
                self.floor.close()
        finally:
            super().teardown()


def _floor_procs(floor: FloorPipeline) -> dict[str, Any]:
    return {"producer": psutil.Process(floor.producer.pid), "consumer": psutil.Process(floor.consumer.pid)}


def cases(quick: bool) -> list[Case]:
    """The big extraction (2,000 rows with quick), against the sqlite3 shell and against its floor."""
    n = 2_000 if quick else 1_000_000
    s, f = BigExtract(n, quick), BigExtractFloor(n, quick)
    label = f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n:,}"
    return [Case(
        key="big_extraction", title=f"2. big extraction ({label} rows x 6, SQLite -> acp-data CSV)",
        target="<= 2", target_value=2.0, ours=s.ours, baseline=s.baseline, setup=s.setup, teardown=s.teardown,  # type: ignore[arg-type]
        extra=s.extra, ours_label="bridge + databases -> acp-data/<id>.csv", baseline_label="sqlite3 -csv > file",
    ), Case(
        key="big_extraction_floor", title=f"2b. big extraction ({label} rows x 6) vs its floor (fetch + one JSON round trip + CSV)",
        target="<= 1.10", target_value=1.10, ours=f.ours, baseline=f.baseline, setup=f.setup, teardown=f.teardown,
        extra=f.extra, ours_label="bridge + databases -> acp-data/<id>.csv",
        baseline_label="floor: pysqlite fetchmany, orjson objects | orjson.loads, CSV (two processes, a pipe)",
    )]
