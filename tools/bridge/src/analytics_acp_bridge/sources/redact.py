"""Last line of defence for 16.8: no value from sources.json credentials reaches the model or a log.

ACP servers must never echo credentials (5.4), and the bridge never puts them in its own
texts; this scrubber still removes any known secret from every text the client receives, from
the bridge's log records and from the ACP servers' stderr that the bridge relays.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import Any, TextIO

REDACTED = "[redacted]"


class Redactor:
    """Replaces known secret values (longest first) in strings and nested JSON values."""

    def __init__(self, secrets: set[str] | None = None):
        self._secrets: list[str] = []
        self.add(secrets or set())

    def add(self, secrets: set[str]) -> None:
        """Register more secret values."""
        merged = set(self._secrets) | {s for s in secrets if s}
        self._secrets = sorted(merged, key=len, reverse=True)

    @property
    def secrets(self) -> list[str]:
        """The registered secret values, longest first."""
        return list(self._secrets)

    def text(self, value: str) -> str:
        """The string with every secret replaced by [redacted]."""
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value

    def value(self, value: Any) -> Any:
        """A JSON-like value with secrets scrubbed from every string (keys included)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value


class RedactingFilter(logging.Filter):
    """A handler filter that scrubs every log record's final message (the bridge's and the libraries')."""

    def __init__(self, redactor: Redactor):
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        """Replace the record's message by its scrubbed text; never drops a record."""
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        scrubbed = self.redactor.text(message)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        if record.exc_text:
            record.exc_text = self.redactor.text(record.exc_text)
        return True


class ScrubbedStderr:
    """A pipe for the ACP servers' stderr: a thread copies each line to the bridge's stderr, scrubbed.

    The MCP client (Claude Desktop, Cursor...) keeps the bridge's stderr as its log file, and a
    careless server may print a credential there; the child writes to ``self.file`` (it needs a
    real file descriptor), never to the bridge's stderr directly.
    """

    def __init__(self, redactor: Redactor, target: TextIO | None = None):
        self.redactor = redactor
        self.target = target
        read_fd, write_fd = os.pipe()
        self.file = os.fdopen(write_fd, "w", encoding="utf-8", buffering=1)
        self._thread = threading.Thread(target=self._pump, args=(read_fd,), name="acp-stderr", daemon=True)
        self._thread.start()

    def _pump(self, read_fd: int) -> None:
        with os.fdopen(read_fd, "rb") as reader:
            for raw in reader:  # ends when every copy of the write end is closed
                target = self.target or sys.stderr
                try:
                    target.write(self.redactor.text(raw.decode("utf-8", "replace")))
                    target.flush()
                except (OSError, ValueError):
                    return  # the bridge's own stderr is gone: nothing left to protect

    def close(self) -> None:
        """Close the bridge's copy of the write end (the thread ends once the servers exit too)."""
        if not self.file.closed:
            self.file.close()


class Secrets:
    """The secrets of one bridge run, shared by its successive set-ups (a reload only ever adds secrets).

    ``redactor`` scrubs what clients receive (values read through references, writeOnly literals);
    ``log_redactor`` scrubs logs and the ACP servers' stderr of every literal credential too: a log line is
    never worth a leak, while descriptions must keep non-secret values (paths) intact.
    """

    def __init__(self) -> None:
        self.redactor = Redactor()
        self.log_redactor = Redactor()
        self._stderr: ScrubbedStderr | None = None

    def add(self, secrets: set[str], *, logs_only: set[str] | None = None) -> None:
        """Register secrets for everything, and ``logs_only`` values for the logs only."""
        self.redactor.add(secrets)
        self.log_redactor.add(secrets | (logs_only or set()))

    def errlog(self) -> TextIO:
        """The pipe the ACP servers write their stderr to (opened on first use: a pipe and a thread)."""
        if self._stderr is None:
            self._stderr = ScrubbedStderr(self.log_redactor)
        return self._stderr.file

    def close(self) -> None:
        """Close the bridge's end of the stderr pipe."""
        if self._stderr is not None:
            self._stderr.close()
