"""The one retry, timeout and deadline policy of every Google call (ga4, gsc, bigquery).

- **One deadline per call**: every request a tool call or an autocontext fetch makes shares one
  ``Budget`` (keyed by its CallContext), default 30 s, ``config.timeout_s`` widens or narrows it.
- **Explicit transport timeouts**: each request gets (connect, read) timeouts, the read one never
  past what is left of the deadline, so a server that accepts and never answers is cut.
- **What is retried**: 500/502/503/504 answered by Google, with backoff inside the deadline; a 429
  only when it carries a short Retry-After hint. Quota and rate-limit errors are never retried
  (the model must hear "exhausted, refills at ..." at once).
- **A cancelled call stops at once** (issue 38.3): the budget reads the call's cancel, so no request of a
  cancelled call is sent, and every pause (backoff, a Retry-After, the quick network retry) waits on the
  call's cancel event instead of ``time.sleep``: the cancel ends it, then the budget raises.
- **A connection that cannot be made** (refused, DNS, no route, TLS, proxy) is not a server error:
  one quick retry, then a typed ACP_UPSTREAM_ERROR naming the host; a read timeout is not retried.
  Either trips the call's budget, so the call's other requests (concurrent autocontext blocks) stop
  at once with the same answer instead of each waiting again.

The bounds live in timeouts.py and what kind a failure is in failures.py (both below this module and
errors.py, which used to import each other); env ``ANALYTICS_ACP_GOOGLE_DEADLINE_S`` /
``ANALYTICS_ACP_GOOGLE_TIMEOUT_S`` change the defaults (tests set them to a couple of seconds);
``config.timeout_s`` of a source wins over both.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from analytics_acp.state import CallSlot

from .errors import timeout_error, unreachable_error
from .failures import classify, host_of, is_retryable, status_of
from .schemas import AUTOCONTEXT_CONCURRENCY as AUTOCONTEXT_CONCURRENCY  # the declarations' value (schemas.py)
from .timeouts import connect_timeout_s, deadline_s, request_timeout_s

NETWORK_RETRIES = 1
NETWORK_PAUSE_S = 0.25
RETRY_AFTER_MAX_S = 5.0

T = TypeVar("T")


class Cancel(Protocol):
    """What a budget reads of its call's cancellation: ``analytics_acp.signals.CallSignals``."""

    @property
    def cancelled(self) -> bool: ...

    def wait_cancelled(self, timeout_s: float) -> bool: ...


class _Never:
    """The cancellation of a budget without a call (a poller's own, a test's): never set; waits are plain pauses."""

    def __init__(self) -> None:
        self._event = threading.Event()

    @property
    def cancelled(self) -> bool:
        return False

    def wait_cancelled(self, timeout_s: float) -> bool:
        return self._event.wait(max(timeout_s, 0.0))


class Budget:
    """The deadline of one call, shared by every request it makes, its breaker and its cancel.

    ``tripped`` holds the typed error of the first request that found Google unreachable or silent;
    later requests of the same call raise it at once. Once the call is cancelled, ``check`` raises and
    ``pause`` returns at once (raising): a cancelled call sends nothing more.
    """

    def __init__(self, config: dict[str, Any] | None = None, cancel: Cancel | None = None):
        self.cancel = cancel if cancel is not None else _Never()
        self.total_s = deadline_s(config)
        self.read_s = request_timeout_s(config)
        self.connect_s = connect_timeout_s(config)
        self.ends = time.monotonic() + self.total_s
        self.tripped: Exception | None = None
        self._lock = threading.Lock()

    def remaining(self) -> float:
        """Seconds left before the deadline (may be negative)."""
        return self.ends - time.monotonic()

    def timeouts(self) -> tuple[float, float]:
        """(connect, read) for the next request: the read timeout never outlives the deadline."""
        left = max(self.remaining(), 0.5)
        return min(self.connect_s, left), min(self.read_s, left)

    def extend(self, seconds: float) -> None:
        """Give back ``seconds`` (a BigQuery job that legitimately ran long under its own bound)."""
        with self._lock:
            self.ends += max(seconds, 0.0)

    def trip(self, error: Exception) -> None:
        """Remember the first unreachable/timeout error: the call's other requests stop with it."""
        with self._lock:
            if self.tripped is None:
                self.tripped = error

    def pause(self, seconds: float) -> None:
        """Wait ``seconds`` before a retry, ended at once by the call's cancel (then raises like ``check``)."""
        self.cancel.wait_cancelled(seconds)
        self.check()

    def check(self) -> None:
        """Raise if the call was cancelled, else the tripped error (a copy: several threads may raise it),
        else the deadline error."""
        from analytics_acp import AcpError, UpstreamError

        if self.cancel.cancelled:
            raise UpstreamError("The call was cancelled: no further Google request is sent.")
        err = self.tripped
        if err is not None:
            if isinstance(err, AcpError):
                raise type(err)(err.message, err.data)
            raise UpstreamError(str(err))
        if self.remaining() <= 0:
            raise UpstreamError(f"Google calls of this request ran out of their {self.total_s:.0f} s budget. "
                                "Try again later or narrow the request; on a slow network raise config.timeout_s.")


# One Budget per call, kept on its CallContext (made on first use, gone with the context), reading its cancel.
BUDGET: CallSlot[Budget] = CallSlot("google.budget", lambda ctx: Budget(ctx.config, cancel=ctx.signals))


def budget(ctx: Any = None) -> Budget:
    """The Budget of a call (``ctx.state(BUDGET)``); a fresh one without a call."""
    return ctx.state(BUDGET) if ctx is not None else Budget()


def retry_after_s(exc: BaseException) -> float | None:
    """The Retry-After hint of a 429 (seconds), when the response carries one."""
    headers: Any = None
    response = getattr(exc, "response", None)
    if response is not None:
        headers = getattr(response, "headers", None)
    if headers is None:
        headers = getattr(exc, "resp", None)  # httplib2.Response is a dict of lower-cased headers
    try:
        raw = headers.get("retry-after") or headers.get("Retry-After") if headers is not None else None
        return float(raw) if raw is not None else None
    except (TypeError, ValueError, AttributeError):
        return None


def call(attempt: Callable[[tuple[float, float]], T], *, ctx: Any = None, host: str = "Google",
         budget_: Budget | None = None) -> T:
    """Run ``attempt((connect_s, read_s))`` under the call's budget and the retry policy.

    Unreachable hosts, read timeouts and the deadline raise typed ``ACP_UPSTREAM_ERROR``s naming
    ``host``; every other failure (HTTP errors) is re-raised for the connector to map.
    """
    spent = budget_ or budget(ctx)
    delay, network_tries = 0.2, 0
    while True:
        spent.check()
        started = time.monotonic()
        try:
            return attempt(spent.timeouts())
        except Exception as exc:
            kind = classify(exc)
            left = spent.remaining()
            quick = time.monotonic() - started < spent.connect_s * 0.8  # refused/DNS fail fast; a connect timeout is not retried
            if kind == "transient" and left > delay:
                spent.pause(delay)
                delay = min(delay * 2, 4.0)
                continue
            if kind == "network" and quick and network_tries < NETWORK_RETRIES and left > NETWORK_PAUSE_S + spent.connect_s / 2:
                network_tries += 1
                spent.pause(NETWORK_PAUSE_S)
                continue
            if kind == "quota" and status_of(exc) == 429:
                hint = retry_after_s(exc)
                if hint is not None and hint <= RETRY_AFTER_MAX_S and hint < left and delay < 1:
                    spent.pause(hint)
                    delay = 1.0  # one hinted retry at most
                    continue
            if kind == "network":
                seen = host_of(exc)  # a token endpoint is another host than the API's: name the one that failed
                err = unreachable_error(exc, seen if seen and seen != host.rsplit(":", 1)[0] else host)
                spent.trip(err)
                raise err from None
            if kind == "timeout":
                err = timeout_error(host, spent)
                spent.trip(err)
                raise err from None
            raise


def api_core_retry(budget_: Budget | None = None, *, timeout_s: float | None = None) -> Any:
    """A ``google.api_core.retry.Retry`` with this policy's predicate (transient 5xx only), for pollers
    that take a Retry object (BigQuery's job.result); bounded by ``timeout_s`` or the budget's remainder.
    With a call's budget, a cancelled call is not retried (api_core sleeps itself: its pause is not ours)."""
    from google.api_core.retry import Retry

    spent = budget_ or Budget()
    span = timeout_s if timeout_s is not None else max(spent.remaining(), 0.5)
    return Retry(predicate=lambda exc: is_retryable(exc) and not spent.cancel.cancelled,
                 initial=0.2, maximum=4.0, multiplier=2.0, timeout=span)


class GapicTimeout:
    """A GAPIC timeout decorator passing (connect, read) to the REST transport (requests accepts the pair)."""

    def __init__(self, timeouts: tuple[float, float]):
        self.timeouts = timeouts

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        def with_timeout(*args: Any, **kwargs: Any) -> Any:
            kwargs["timeout"] = self.timeouts
            return func(*args, **kwargs)

        return with_timeout
