"""Drive `analytics-acp login google` as a user would: the command in a subprocess, Debian's Chromium as the browser.

``LoginRun`` starts the command, reads its output on a thread (bounded waits only) and hands the
printed authorization URL to the test; ``browser_decide`` opens it in Chromium (Playwright) and
clicks Allow or Deny on the fake consent page, then waits for the loopback page.
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
# DESIGN.md: Debian's chromium runs headless with these (same as connectors/browser).
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]


def login_env(config_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a login run: a private config folder; plain-http fake endpoints allowed (tests only)."""
    env = dict(os.environ)
    env.update({"ANALYTICS_ACP_CONFIG_DIR": str(config_dir), "OAUTHLIB_INSECURE_TRANSPORT": "1", **extra})
    env.pop("BROWSER", None)
    return env


class LoginRun:
    """`python -m analytics_acp <args>` with its output collected line by line."""

    def __init__(self, args: list[str], env: dict[str, str]):
        self.proc = subprocess.Popen([sys.executable, "-m", "analytics_acp", *args], env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.out: list[str] = []
        self.err: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        self._threads = [threading.Thread(target=self._pump, args=(self.proc.stdout, self.out, True), daemon=True),
                         threading.Thread(target=self._pump, args=(self.proc.stderr, self.err, False), daemon=True)]
        for t in self._threads:
            t.start()

    def _pump(self, stream: Any, into: list[str], notify: bool) -> None:
        for line in stream:
            into.append(line)
            if notify:
                self._lines.put(line)

    def wait_for_url(self, prefix: str, timeout: float = 60) -> str:
        """The first printed line that starts with ``prefix`` (the fake's /o/auth URL)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._lines.get(timeout=0.2)
            except queue.Empty:
                if self.proc.poll() is not None and self._lines.empty():
                    break
                continue
            if line.startswith(prefix):
                return line.strip()
        raise AssertionError(f"no URL starting with {prefix} printed; stdout={self.stdout!r} stderr={self.stderr!r}")

    def finish(self, timeout: float = 60) -> int:
        """Wait for the exit (bounded) and for the output to be read whole."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            raise AssertionError(f"login did not exit within {timeout} s; stdout={self.stdout!r}") from None
        for t in self._threads:
            t.join(timeout=10)
        return code

    @property
    def stdout(self) -> str:
        return "".join(self.out)

    @property
    def stderr(self) -> str:
        return "".join(self.err)


def run_cli(args: list[str], env: dict[str, str], timeout: float = 120) -> tuple[int, str, str]:
    """Run an analytics-acp command to the end (no browser involved)."""
    run = LoginRun(args, env)
    code = run.finish(timeout)
    return code, run.stdout, run.stderr


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Debian Chromium through Playwright (skipped where it is not installed, except in CI where it must run)."""
    import os

    import pytest

    if not Path(CHROMIUM).exists() and not os.environ.get("CI"):
        pytest.skip("Debian's /usr/bin/chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS, timeout=60_000)
        try:
            yield browser
        finally:
            browser.close()


def browser_decide(browser: Any, url: str, decision: str = "Allow") -> str:
    """Open ``url`` in a fresh page, click ``decision`` on the consent page; the text of the page that follows."""
    page = browser.new_page()
    try:
        page.set_default_timeout(30_000)
        page.goto(url)
        page.get_by_role("button", name=decision).click()
        page.wait_for_url(re.compile(r"^http://127\.0\.0\.1:\d+/\?"))
        page.wait_for_load_state()
        return str(page.inner_text("body"))
    finally:
        page.close()


def http_decide(url: str, decision: str = "allow") -> str:
    """The consent page answered without a browser (plain HTTP, redirects followed to the loopback listener)."""
    import requests

    page = requests.get(url, timeout=30).text
    found = re.search(r"name=request value=([\w-]+)", page)
    assert found, page
    base = url.split("/o/auth", 1)[0]
    return str(requests.post(f"{base}/o/decide", data={"request": found.group(1), "decision": decision}, timeout=30).text)


def assert_no_secret(text: str, secrets: list[str]) -> None:
    """None of ``secrets`` (tokens, client secret, codes) appears in ``text``."""
    leaked = [s[:12] + "…" for s in secrets if s and s in text]
    assert not leaked, f"secrets leaked into the output: {leaked}"
