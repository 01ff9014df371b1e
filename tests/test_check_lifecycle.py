"""``analytics-acp check`` against a source that never answers (issue 26.5): each item printed as it is
decided, the whole run bounded (``--max-time``, "gave up after N s at <step>"), and no server left
running after the bound, SIGINT or SIGTERM. Real processes: ``check -- serve ga4`` with Google's
endpoints on a loopback listener that accepts and never answers; Google's own bounds are set to
minutes, so only the check's bound (or the signal) can end the run. Every wait is polled and bounded.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from core_helpers import env
from silent import SilentListener

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "connectors" / "google" / "tests"))
from googlefakes import keys  # noqa: E402

pytest.importorskip("analytics_acp_ga4")
pytest.importorskip("analytics_acp_build")


class Check:
    """``analytics-acp check`` in its own session; stdout read line by line as it comes."""

    def __init__(self, listener: SilentListener, *extra: str):
        credentials = keys.service_account_credentials(listener.url + "/token")
        command = [sys.executable, "-m", "analytics_acp", "check", "--credentials", json.dumps(credentials),
                   "--config", json.dumps({"api_endpoint": listener.url}), "--resource-id", "123456789", *extra,
                   "--", sys.executable, "-m", "analytics_acp", "serve", "ga4"]
        own = env(ANALYTICS_ACP_GOOGLE_DEADLINE_S="600", ANALYTICS_ACP_GOOGLE_TIMEOUT_S="600")
        self.proc = subprocess.Popen(command, env=own, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                     start_new_session=True)
        self.lines: list[tuple[str, bool]] = []  # (line, the check was still running when it arrived)
        self.children: set[int] = set()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._watch_children, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append((line.rstrip("\n"), self.proc.poll() is None))

    def _watch_children(self) -> None:
        # Read /proc here, as pgrep -P does: a pgrep every 50 ms was ~20 fork/execs a second for the
        # whole run, most of this file's system CPU.
        while self.proc.poll() is None:  # every process the check starts (its servers have their own session)
            self.children.update(_children_of(self.proc.pid))
            time.sleep(0.05)

    def wait(self, bound_s: float = 240) -> int:
        try:
            return self.proc.wait(timeout=bound_s)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def text(self) -> list[str]:
        deadline = time.monotonic() + 30
        while not (self.lines and self.lines[-1][0].startswith("checklist:")) and time.monotonic() < deadline:
            time.sleep(0.05)  # the reader thread drains what is left in the pipe
        return [line for line, _ in self.lines]


def _children_of(parent: int) -> set[int]:
    """Pids whose parent is ``parent`` (zombies included, like ``pgrep -P``), from /proc."""
    found = set()
    # os.listdir, not Path.glob: glob stats each match itself, so a process ending mid-scan raised
    # ProcessLookupError out of the scan and killed the watcher thread (seen once in a full run).
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            text = Path("/proc", name, "stat").read_text()
        except OSError:  # exited while we looked
            continue
        # pid (comm) state ppid ...: comm may hold spaces or parentheses, so split after its last ")".
        if int(text.rsplit(")", 1)[1].split()[1]) == parent:
            found.add(int(text.split(" ", 1)[0]))
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is not running (its parent, init, reaps it soon)
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _nothing_left(check: Check) -> None:
    assert check.children, "the check started no server"
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in check.children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in check.children if _alive(pid)], "a server outlived the check"
    session = subprocess.run(["pgrep", "-s", str(check.proc.pid)], capture_output=True, text=True).stdout.split()
    assert session == []


def test_check_gives_up_at_its_overall_bound_and_leaves_no_server():
    with SilentListener() as listener:
        check = Check(listener, "--max-time", "20")
        assert check.wait() == 1
        lines = check.text()
        reached_upstream = listener.accepted > 0
    # The bound counts from the check's start, whatever step it is in: unloaded, the run is blocked on the silent
    # upstream at "autocontext" when it fires; at load ~15 the ga4 server was still starting at 20 s (and a test
    # that insisted on the upstream failed). So the claim is the bound itself: the run gives up at 20 s, names
    # the step it was in (the last one it announced) and leaves no server, at whichever step that was.
    steps = [line.removeprefix("..    ") for line in lines if line.startswith("..    ")]
    assert steps and steps[0] == "package.starts", lines
    assert lines[-1].startswith(f"checklist: gave up after 20 s at {steps[-1]} ("), lines
    # Each item line printed while the run went on, not at its end.
    items = [running for line, running in check.lines if line.split(" ", 1)[0] in ("pass", "fail", "n/a")]
    assert items and all(items)
    if reached_upstream:  # Google's endpoints are first called at autocontext, and never answer: it went no further
        assert steps[-1] == "autocontext", lines
        assert [line for line in lines if line.startswith("pass  package.starts")]
    print(f"gave up at {steps[-1]!r}, upstream reached: {reached_upstream}")
    _nothing_left(check)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_check_stopped_by_a_signal_leaves_no_server(signum):
    with SilentListener() as listener:
        check = Check(listener)
        assert listener.wait_for_connection(), "the check never reached the upstream"
        check.proc.send_signal(signum)
        assert check.wait() == 128 + signum
        lines = check.text()
    assert lines[-1].startswith(f"checklist: stopped by {signal.Signals(signum).name} at autocontext")
    _nothing_left(check)
