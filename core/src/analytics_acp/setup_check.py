"""A set-up checked offline: what acp/configure validates (5.1, 5.5.3) plus the connector's own check, and the
validate-only form of acp/configure a host uses to check a set-up without changing the session.

**Validate-only acp/configure** (an extension of this implementation, compatible with any ACP 1.x peer):

- The server advertises it in its initialize result as ``capabilities.experimental["analytics-acp/validate-only"]
  = {"version": 1}`` (a key beside ``acp``, not inside it: 4.2's capability stays as the spec writes it).
- The host sends ``acp/configure`` with ``params._meta["analytics-acp/validate-only"] = true`` and the set-up of
  one source as the params (the fields of 5.1: limits, credentials, config, tables, default_resource_id).
- The server checks those values as a session configured with exactly them (not merged into the session's):
  limits (ACP_INVALID_LIMIT, -32016), credentials missing where the source needs them
  (ACP_CREDENTIALS_MISSING) or failing their schema or the connector's check (ACP_CREDENTIALS_INVALID),
  config (ACP_INVALID_ARGUMENTS, 5.5.3), tables; then answers ``{ok: true, effective}`` as acp/configure would,
  and changes nothing: the session keeps what it had. No network is used (the connector's check is offline).
- A host facing a server without the key never sends the marker (a server that does not know it would apply
  the values); it checks the values against the published setup schemas instead (:func:`check_offline`).

The host side is ``AcpClient.validate_setup`` (host/client.py).

**The connector's check is bounded** (``SetupChecks``): it reads files and keys, and a file on a dead network
mount can block for ever, in a thread no cancel can stop. It runs in a daemon thread of its own (not the worker
pool sync tools share; a stuck one never keeps the process from exiting) and the answer waits at most
``CHECK_LIMIT_S``, then is ACP_UPSTREAM_ERROR; a client's cancel ends the wait at once. Either way the thread is
abandoned, so acp/configure's session lock is free again: a stuck check never holds the session's later
configures. At most ``MAX_STUCK_CHECKS`` abandoned checks may still run; past them new checks are refused at once.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel

from . import schemas
from .constants import VALIDATE_ONLY_KEY as VALIDATE_ONLY_KEY  # re-exported: the host client reads it here
from .effective import check_limits, check_shapes, check_table_names
from .errors import AcpError, CredentialsMissing, UpstreamError
from .invoke import resolve_off_loop

# Below the host's own bound (host/client.py VALIDATE_TIMEOUT_S, 15 s): the server's typed answer comes first.
CHECK_LIMIT_S = 10.0
MAX_STUCK_CHECKS = 4  # checks past their bound that still run (threads); new checks are refused past them


def validate_only_requested(meta: Any) -> bool:
    """True when an acp/configure request's ``_meta`` carries the validate-only marker."""
    return isinstance(meta, dict) and meta.get(VALIDATE_ONLY_KEY) is True


def supports_validate_only(initialize_result: dict[str, Any]) -> bool:
    """True when the server's initialize result advertises validate-only acp/configure."""
    exp = (initialize_result.get("capabilities") or {}).get("experimental") or {}
    return isinstance(exp, dict) and isinstance(exp.get(VALIDATE_ONLY_KEY), dict)


def credentials_needed(schema: dict[str, Any]) -> bool:
    """True when the credentials schema asks for something (a oneOf or required fields)."""
    return bool(schema.get("oneOf") or schema.get("required"))


def missing_credentials(schema: dict[str, Any]) -> CredentialsMissing:
    """ACP_CREDENTIALS_MISSING for a set-up without the credentials its schema asks for, naming the accepted forms."""
    titles = [str(v.get("title")) for v in schema.get("oneOf") or [] if isinstance(v, dict) and v.get("title")]
    forms = f" (one of: {', '.join(titles)})" if titles else ""
    return CredentialsMissing(f"This source needs credentials{forms} and none were given.")


def check_offline(capability: dict[str, Any], values: dict[str, Any]) -> AcpError | None:
    """A set-up checked against a server's published capability only (4.2, 5.5): limits, shapes, tables,
    credentials required and matching ``credentials_schema``, config matching ``config_schema``.

    What a host does for a server without validate-only acp/configure; the typed error, or None.
    """
    try:
        check_limits(values)
        check_shapes(values)
        if values.get("tables") is not None:
            check_table_names([str(e.get("name")) for e in capability.get("table_catalog") or [] if isinstance(e, dict)],
                              values["tables"])
        creds_schema = capability.get("credentials_schema")
        creds_schema = creds_schema if isinstance(creds_schema, dict) else {"type": "object", "properties": {}}
        if values.get("credentials") is None:
            if credentials_needed(creds_schema):
                raise missing_credentials(creds_schema)
        else:
            schemas.validate_credentials(creds_schema, values["credentials"])
        config_schema = capability.get("config_schema")
        if values.get("config") is not None and isinstance(config_schema, dict):
            schemas.validate_config(config_schema, values["config"])
    except AcpError as exc:
        return exc
    return None


class SetupChecks:
    """Runs one connector's ``check_setup`` with a bound (the module docstring says why); one per served connector."""

    def __init__(self, connector_id: str, limit_s: float | None = None, max_stuck: int = MAX_STUCK_CHECKS):
        self.connector_id = connector_id
        self.limit_s = CHECK_LIMIT_S if limit_s is None else limit_s
        self.max_stuck = max_stuck
        self._lock = threading.Lock()
        self._running = 0  # checks whose thread has not returned yet, the abandoned ones included
        self._abandoned = 0  # of those, the ones whose caller gave up (past the bound, or cancelled): stuck

    @property
    def running(self) -> int:
        """Checks whose thread is still running (abandoned ones included)."""
        with self._lock:
            return self._running

    @property
    def stuck(self) -> int:
        """Checks given up on whose thread still runs (what the refusal counts, not checks merely in flight)."""
        with self._lock:
            return self._abandoned

    async def run(self, check: Any, credentials: dict[str, Any] | None, config: dict[str, Any]) -> None:
        """``check(credentials, config)`` (sync, async or lazy): its own error, or ACP_UPSTREAM_ERROR past the bound."""
        fn = await resolve_off_loop(check)
        with anyio.move_on_after(self.limit_s) as bound:
            if inspect.iscoroutinefunction(fn):
                await fn(credentials, config)
            else:
                result = await self._in_thread(fn, credentials, config)
                if inspect.isawaitable(result):
                    await result
        if bound.cancelled_caught:
            raise UpstreamError(
                f"The {self.connector_id} ACP did not finish checking the set-up within {self.limit_s:g} s: something "
                "it reads (a file, a network drive) did not answer. Check the set-up, then try again.")

    async def _in_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        # Only abandoned checks count: a burst of sessions configuring at once (50 over HTTP) has many checks in
        # flight that are not stuck (the 4b bench was refused here when in-flight checks were counted).
        with self._lock:
            if self._abandoned >= self.max_stuck:
                raise UpstreamError(
                    f"The {self.connector_id} ACP still runs {self._abandoned} set-up checks that did not finish (something "
                    "they read does not answer), so it starts no more. Check the set-up, or restart the ACP.")
            self._running += 1
        done = anyio.Event()
        token = anyio.lowlevel.current_token()
        outcome: dict[str, Any] = {}
        state = {"finished": False, "abandoned": False}  # both read and written under self._lock

        def work() -> None:
            try:
                outcome["value"] = fn(*args)
            except BaseException as exc:  # handed to the waiting task, raised there
                outcome["error"] = exc
            finally:
                with self._lock:
                    self._running -= 1
                    state["finished"] = True
                    if state["abandoned"]:
                        self._abandoned -= 1
                try:
                    anyio.from_thread.run_sync(done.set, token=token)
                except RuntimeError:  # the event loop is gone (the waiter too): nothing to tell
                    pass

        threading.Thread(target=work, name=f"acp-check-setup-{self.connector_id}", daemon=True).start()
        try:
            await done.wait()  # a cancel (or the bound) ends this wait at once; the thread is abandoned
        except BaseException:
            with self._lock:
                if not state["finished"]:
                    state["abandoned"] = True
                    self._abandoned += 1
            raise
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("value")
