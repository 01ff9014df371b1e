"""The scrubbers of 16.8: log records and relayed server stderr lose every known secret."""

import io
import logging

from analytics_acp_bridge.sources.redact import REDACTED, RedactingFilter, Redactor, ScrubbedStderr

SECRET = "s3cr3t-value-123"


def test_bridge_redact_log_records_message_args_and_traceback():
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RedactingFilter(Redactor({SECRET})))
    logger = logging.getLogger("test_bridge_redact")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("connecting with %s", SECRET)
        try:
            raise RuntimeError(f"auth failed for {SECRET}")
        except RuntimeError:
            logger.exception("call failed")
    finally:
        logger.removeHandler(handler)
    text = out.getvalue()
    assert SECRET not in text
    assert f"connecting with {REDACTED}" in text and f"auth failed for {REDACTED}" in text


def test_bridge_redact_relayed_stderr_lines():
    target = io.StringIO()
    relay = ScrubbedStderr(Redactor({SECRET}), target=target)
    relay.file.write(f"token={SECRET}\nplain line\n")
    relay.close()  # the only write end: the relay thread sees EOF after copying every line
    relay._thread.join(timeout=60)  # a bound, so a broken relay fails instead of hanging
    assert not relay._thread.is_alive()
    assert target.getvalue() == f"token={REDACTED}\nplain line\n"
