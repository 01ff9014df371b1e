"""The activity record's file (issue 37.1): scrubbed, bounded by rotation, whole lines from concurrent writers."""

from __future__ import annotations

import json
import threading

from analytics_acp_bridge.sources.redact import Redactor
from analytics_acp_bridge.store import activity
from analytics_acp_bridge.store.activity import ActivityLog


def test_every_secret_value_is_masked_wherever_it_appears(tmp_path):
    record = ActivityLog(tmp_path, Redactor({"hunter2-literal", "AKIA-SECRET-0001"}))
    record.add(record.entry(tool="db__execute_sql", arguments={"sql": "SELECT 'hunter2-literal'", "nested": {"AKIA-SECRET-0001": ["x AKIA-SECRET-0001"]}},
                            error={"message": "bad password hunter2-literal"}))
    assert record.flush()
    text = (tmp_path / activity.FILE).read_text(encoding="utf-8")
    assert "hunter2-literal" not in text and "AKIA-SECRET-0001" not in text
    [entry] = activity.read(tmp_path)
    assert entry["arguments"]["sql"] == "SELECT '[redacted]'" and entry["error"]["message"] == "bad password [redacted]"
    record.close()


def test_a_long_argument_is_cut_and_the_entry_says_so(tmp_path):
    record = ActivityLog(tmp_path, Redactor())
    record.add(record.entry(tool="t", arguments={"sql": "x" * (activity.ARG_CHARS + 500)}))
    record.add(record.entry(tool="t", arguments={"sql": "short"}))
    assert record.flush()
    short, long = activity.read(tmp_path)
    assert len(long["arguments"]["sql"]) < activity.ARG_CHARS + 100 and long["arguments_cut"] is True
    assert "arguments_cut" not in short
    record.close()


def test_the_record_rotates_and_stays_bounded(tmp_path):
    limit = 4096
    record = ActivityLog(tmp_path, Redactor(), limit=limit)
    for n in range(400):
        record.add(record.entry(tool="t", n=n, arguments={"pad": "p" * 60}))
    assert record.flush()
    record.close()
    names = sorted(p.name for p in tmp_path.glob("activity*.jsonl"))
    assert names == ["activity.1.jsonl", "activity.2.jsonl", "activity.jsonl"]
    assert all(p.stat().st_size <= limit for p in tmp_path.glob("activity*.jsonl"))
    seen = [e["n"] for e in activity.read(tmp_path)]
    assert seen[0] == 399 and seen == sorted(seen, reverse=True)  # newest first, across the files
    assert 0 not in seen  # the oldest went with the third rotation
    assert seen == list(range(399, 399 - len(seen), -1))  # nothing lost between the kept files


def test_two_writers_on_one_project_leave_only_whole_lines(tmp_path):
    """A page and a bridge on the same project share the file (flock, O_APPEND, rotation seen by the other)."""
    writers = [ActivityLog(tmp_path, Redactor(), limit=64 * 1024) for _ in range(2)]

    def write(w: int) -> None:
        for n in range(300):
            writers[w].add(writers[w].entry(tool="t", w=w, n=n, arguments={"pad": "p" * (n % 200)}))

    threads = [threading.Thread(target=write, args=(w,)) for w in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for w in writers:
        assert w.flush()
        w.close()
    for path in tmp_path.glob("activity*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            assert json.loads(line)["tool"] == "t"
    kept = activity.read(tmp_path, limit=10_000)
    for w in range(2):
        mine = [e["n"] for e in kept if e["w"] == w]
        assert mine[0] == 299 and mine == sorted(mine, reverse=True)


def test_a_line_cut_by_a_crash_is_ended_and_skipped(tmp_path):
    (tmp_path / activity.FILE).write_text('{"tool":"before","outcome":"ok"}\n{"tool":"cut', encoding="utf-8")
    record = ActivityLog(tmp_path, Redactor())
    record.add(record.entry(tool="after", outcome="error", source="s"))
    assert record.flush()
    record.close()
    assert [e["tool"] for e in activity.read(tmp_path)] == ["after", "before"]
    assert [e["tool"] for e in activity.read(tmp_path, outcome="error")] == ["after"]
    assert [e["tool"] for e in activity.read(tmp_path, source="s")] == ["after"]


def test_a_writer_stuck_holding_the_lock_does_not_stop_the_record(tmp_path, monkeypatch, caplog):
    """Every wait is bounded: another process holding the folder's lock for ever costs the lock, not the record."""
    import fcntl
    import logging
    import os

    monkeypatch.setattr(activity, "LOCK_WAIT_S", 0.3)
    held = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(held, fcntl.LOCK_EX)  # a stuck peer: this descriptor is another open file description
    try:
        record = ActivityLog(tmp_path, Redactor())
        record.add(record.entry(tool="t", arguments={}))
        with caplog.at_level(logging.WARNING, logger="analytics_acp_bridge"):
            assert record.flush()
        assert [e["tool"] for e in activity.read(tmp_path)] == ["t"]
        assert "stayed locked" in caplog.text
        assert (tmp_path / activity.FILE).stat().st_mode & 0o777 == 0o600  # the person's arguments: private
        record.close()
    finally:
        os.close(held)


def test_a_fault_in_the_record_never_replaces_the_calls_answer(caplog):
    """Bridge.run records in its `finally`: a fault there must be logged (type only), never raised over the answer."""
    import logging

    from analytics_acp_bridge.bridge import Bridge

    class Record:
        def add(self, entry):
            raise AssertionError("never reached")

    class Broken:
        activity = Record()

        def _entry(self, *args):
            raise KeyError("a secret-looking message")

    with caplog.at_level(logging.WARNING, logger="analytics_acp_bridge"):
        Bridge._record(Broken(), "db__execute_sql", {}, None, 0.1, "mcp", None)  # type: ignore[arg-type]
    assert "db__execute_sql was not recorded (KeyError)" in caplog.text and "secret-looking" not in caplog.text
