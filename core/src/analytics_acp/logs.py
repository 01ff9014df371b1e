"""Tracebacks of untyped failures in the stderr log, at DEBUG, with secrets removed (10.5, 12.1)."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterable

log = logging.getLogger("analytics_acp")


def log_traceback(what: str, exc: BaseException, secrets: Iterable[str]) -> None:
    """Log ``exc``'s traceback at DEBUG (the answer only carries its one-line summary).

    Chained exception messages may quote a secret (a URL, a DSN), so the text is redacted like
    every message the server writes.
    """
    if not log.isEnabledFor(logging.DEBUG):
        return
    from .schemas import redact

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    log.debug("%s failed; traceback:\n%s", what, redact(text.rstrip(), secrets))
