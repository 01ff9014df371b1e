"""The one validator of a source (issue 34.1): ``bridge --check``, the bridge's start and reloads, and the local
set-up page (``analytics-acp ui``) all ask it, so they always agree.

A source's verdict comes from these checks, in this order; the first one that fails decides it, and a source
that fails publishes no tools (23.1):

1. the entry as written (entries.py, no ACP needed): its fields (an unknown one is an error naming the closest
   known field), id, limits (ACP_INVALID_LIMIT, 5.1) and references (inside ``credentials`` an unset variable
   or an unreadable file is ACP_CREDENTIALS_MISSING);
2. its ACP is installed (``acps/`` or this environment), else ACP_INVALID_ARGUMENTS naming the installed ones;
3. its ACP server starts locally, else ACP_UPSTREAM_ERROR with the command and why;
4. the ACP's own knowledge, offline: literal relative paths of the fields it marks ``"format": "path"`` made
   absolute from the sources.json folder (paths.py), then the set-up checked by the ACP itself through its
   validate-only ``acp/configure`` (credentials it needs, its setup schemas with ``contentSchema``, its
   connector's own offline check: a key that loads, a file that exists), or against its published schemas for
   an ACP without that. Nothing here knows any particular ACP (14.3).

Online (``--check --online``, and the running bridge's start-up probe) each healthy source also makes one
bounded authenticated call (autocontext without resource): a failure there is the source's status but keeps
its tools, since it belongs to each call (26.5).

Messages name fields, variables and full paths, never values, and read right in a terminal and on a page:
they say what to change, never "ask the user" (model-facing texts do that).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analytics_acp.errors import (
    AcpError,
    CredentialsInvalid,
    CredentialsMissing,
    InvalidArguments,
    InvalidLimit,
    UpstreamError,
)
from analytics_acp.host import AcpClient

from .entries import Source
from .paths import resolve_source_paths, start_folder_note

OK, ERROR, STARTING = "ok", "error", "starting"


@dataclass(frozen=True)
class Finding:
    """Why a source cannot work: the typed error (12.1) and what to change, for a person."""

    error: AcpError
    fix: str


def entry_finding(source: Source, installed: Collection[str], sources_path: Path) -> Finding | None:
    """Checks 1 and 2: the entry as written and its ACP installed. No process, no network."""
    problem = source.problem()
    if problem is not None:
        return Finding(problem, f"Edit the entry of source «{source.id}» in {sources_path} as the error says.")
    if source.acp not in installed:
        names = ", ".join(sorted(installed)) or "none"
        return Finding(
            InvalidArguments(f"ACP {source.acp!r} is not installed (not in acps/ nor in this environment). "
                             f"Installed: {names}."),
            f"Set \"acp\" of source «{source.id}» in {sources_path} to an installed ACP ({names}), or install it.",
        )
    return None


def start_finding(source: Source, start_error: str | None) -> Finding:
    """Check 3 failed: the source's ACP server did not start."""
    return Finding(UpstreamError(start_error or f"The {source.acp} ACP server is not running."),
                   f"Check that the {source.acp} ACP is installed and starts (the bridge log has its stderr).")


async def acp_finding(source: Source, client: AcpClient, sources_path: Path,
                      server_cwd: Path | None = None) -> Finding | None:
    """Check 4, with the ACP's server running: paths made absolute (in place), then the set-up checked by the ACP
    itself, offline (``AcpClient.validate_setup``: its validate-only acp/configure, which runs its schemas, the
    ``contentSchema`` of JSON-in-a-string fields and the connector's own check; or, for an ACP without it, its
    published setup schemas). A plain MCP server (4.3) receives no set-up: nothing to check. ``server_cwd``: the
    folder the server runs in when it is not the bridge's (an ``acps/`` folder), for the note on the old rule."""
    capability = client.server_capability
    if capability is None:
        return None
    base = sources_path.parent
    note = start_folder_note(source, resolve_source_paths(source, capability, base), base, server_cwd)
    error = await client.validate_setup(source.meta())
    if error is None:
        if note:
            source.warnings.append(note)
        return None
    return Finding(error, note or _fix(error, source, sources_path))  # the note says what to write


def _fix(error: AcpError, source: Source, sources_path: Path) -> str:
    """What to change for an error the ACP found in the source's set-up."""
    where = f"of source «{source.id}» in {sources_path}"
    if isinstance(error, CredentialsMissing):
        return f"Give source «{source.id}» the \"credentials\" the {source.acp} ACP needs, in {sources_path}."
    if isinstance(error, CredentialsInvalid):
        return f"Edit \"credentials\" {where} as the error says."
    if isinstance(error, InvalidLimit):
        return f"Edit the limits (row_limit, field_limit, cost_limit_usd) {where}."
    if isinstance(error, InvalidArguments):
        return f"Edit \"config\" {where} as the error says."
    return f"Check that the {source.acp} ACP starts and answers (the bridge log has its stderr)."


@dataclass
class Verdict:
    """One source's verdict: what ``bridge --check`` prints on its line and the set-up page shows.

    ``status`` is ``ok`` or ``error`` (a running bridge's ``acp_sources`` also says ``starting``); ``error`` is
    the 12.1 object ``{code, name, message}``; ``fix`` says what to change in sources.json (or the environment,
    the network); ``warnings`` are things that work but deserve a look. No secret value in any of them.
    """

    source: str
    acp: str
    status: str
    error: dict[str, Any] | None = None
    fix: str | None = None
    warnings: list[str] = field(default_factory=list)

    def line(self) -> str:
        """``ok     id (acp)`` or ``error  id (acp): NAME: message Fix: ...``, plus any warnings."""
        head = f"{self.status:<6} {self.source} ({self.acp})"
        if self.error:
            head += f": {self.error['name']}: {self.error['message']}"
            if self.fix:
                head += f" Fix: {self.fix}"
        if self.warnings:
            head += f"{':' if not self.error else ''} Warning: {' '.join(self.warnings)}"
        return head

    def as_dict(self) -> dict[str, Any]:
        """JSON form (for a page or a program)."""
        out: dict[str, Any] = {"id": self.source, "acp": self.acp, "status": self.status}
        if self.error:
            out["error"] = dict(self.error)
        if self.fix:
            out["fix"] = self.fix
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


@dataclass
class Report:
    """The verdicts on one sources.json, in file order, and the file's own problem (``file_error``, 12.1 object)."""

    sources_file: Path
    online: bool
    verdicts: list[Verdict] = field(default_factory=list)
    file_error: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """True when the file and every source are set up (exit code 0 of ``--check``)."""
        return self.file_error is None and all(v.status == OK for v in self.verdicts)

    def lines(self) -> list[str]:
        """``--check``'s lines: one for a file problem, one per source."""
        lines = [f"error  sources.json: {self.file_error['name']}: {self.file_error['message']}"] if self.file_error else []
        return lines + [v.line() for v in self.verdicts]

    def as_dict(self) -> dict[str, Any]:
        """JSON form (for a page or a program)."""
        out: dict[str, Any] = {"sources_file": str(self.sources_file), "online": self.online, "ok": self.ok,
                               "sources": [v.as_dict() for v in self.verdicts]}
        if self.file_error:
            out["error"] = dict(self.file_error)
        return out
