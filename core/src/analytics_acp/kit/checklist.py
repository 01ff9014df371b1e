"""``run_checklist``: the server items of 14.2 against any ACP server, through the host client."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import anyio

from . import autocontext, calls, handshake, responses, samples, session
from .model import CheckResult
from .run import KIT_HOST_TABLES, PROBE_SECRET, Run, parse_samples
from .static import leaked, secret_strings, spanish_hits


def run_checklist(
    command: list[str] | None = None,
    *,
    url: str | None = None,
    token: str | None = None,
    credentials: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    resource_id: str | None = None,
    sample_calls: list[Any] | None = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    host_tables: dict[str, dict[str, Any]] | None = None,
    package_dir: str | Path | None = None,
    server_files: list[str | Path] | None = None,
) -> list[CheckResult]:
    """Run the checklist synchronously (see the package docstring); returns one CheckResult per item."""
    return anyio.run(lambda: arun_checklist(
        command, url=url, token=token, credentials=credentials, config=config, resource_id=resource_id,
        sample_calls=sample_calls, env=env, cwd=cwd, host_tables=host_tables, package_dir=package_dir,
        server_files=server_files,
    ))


async def arun_checklist(
    command: list[str] | None = None,
    *,
    url: str | None = None,
    token: str | None = None,
    credentials: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    resource_id: str | None = None,
    sample_calls: list[Any] | None = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    host_tables: dict[str, dict[str, Any]] | None = None,
    package_dir: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
    server_files: list[str | Path] | None = None,
) -> list[CheckResult]:
    """Async ``run_checklist`` (for callers already inside an event loop).

    ``progress`` receives the name of each step as it starts (a long run shows where it is).
    ``server_files``: files or folders an HTTP server writes (its log, cache, temp) that the secret
    scan reads too; a stdio server's stderr and folders are the kit's own and always scanned.
    """
    if (command is None) == (url is None):
        raise ValueError("run_checklist needs exactly one of command (stdio) or url (Streamable HTTP)")
    run = Run(command=command, url=url, token=token, env=env, cwd=cwd, credentials=credentials, config=config,
              resource_id=resource_id, samples=parse_samples(sample_calls),
              host_tables={**KIT_HOST_TABLES, **(host_tables or {})},
              package_dir=Path(package_dir) if package_dir else None)
    run.progress = progress
    run.server_files = [Path(p) for p in server_files or []]
    try:
        await _probe(run)
    finally:
        _scan_secrets(run)
        shutil.rmtree(run.cleanup_dir(), ignore_errors=True)
    return run.findings.results()


def _step(run: Run, name: str) -> None:
    if run.progress is not None:
        run.progress(name)


async def _probe(run: Run) -> None:
    f = run.findings
    _step(run, "handshake (initialize, tools/list, skills)")
    async with run.connect() as client:
        run.capability = client.announced_capability or {}
        run.server_info = client.server_info
        if client.instructions:
            run.texts.append(("instructions", client.instructions))
        run.tools = {t["name"]: t for t in await client.list_tools()}
        handshake.check_capability(run)
        if client.server_capability is None:
            # 4.3: not ACP 1.x, so the kit is a host that must send it no _meta.acp, credentials or configure;
            # every other item would only repeat the handshake failure.
            return
        handshake.check_tools(run)
        handshake.check_skills(run)
        if not run.samples:
            run.samples = _derived_samples(run)
        _step(run, "autocontext")
        await autocontext.autocontext(run, client)
        _step(run, "sample calls")
        await samples.sample_calls(run, client)
        _step(run, "progress and cancellation")
        await calls.progress_and_cancel(run, client)
        _step(run, "table catalog")
        await samples.catalog(run, client)
        _step(run, "errors.typed (unknown tool)")
        seen = await run.call(client, "kit_no_such_tool", {}, run.meta(), label="unknown tool")
        f.check("errors.typed", (seen.result.error or {}).get("name") == "ACP_INVALID_ARGUMENTS",
                "unknown tool -> ACP_INVALID_ARGUMENTS", f"unknown tool gave {seen.result.text[:160]}")
        # The probes below that need their own client capabilities or session state open their own
        # sessions; this one stays open for those that need a session that never configured (a new
        # stdio connection is a new server process: ~1 CPU-s each, and it would prove no more).
        _step(run, "plain MCP client (4.3)")
        await session.plain_mcp(run)
        _step(run, "acp/configure")
        await session.configure(run)
        _step(run, "unconfigured session (5.3, 6.1)")
        await session.unconfigured(run, client)
        _step(run, "autocontext on first call (7.5)")
        await autocontext.on_first_call(run, client)
    autocontext.cache_partition(run)
    _step(run, "host tables unsupported (8.8)")
    await samples.host_tables_unsupported(run)
    _step(run, "responses, English, transport, secrets")
    responses.check_all(run)
    _english(run)
    _transport(run)


def _derived_samples(run: Run) -> list[Any]:
    """Without sample_calls: every read-only extraction/info tool that has no required arguments."""
    out: list[Any] = []
    for name, tool in run.tools.items():
        if name in ("autocontext", "autocontext_data"):
            continue
        schema = tool.get("inputSchema") or {}
        if schema.get("required") or (tool.get("annotations") or {}).get("readOnlyHint") is False:
            continue
        out.append((name, {}))
    return parse_samples(out)


def _english(run: Run) -> None:
    f = run.findings
    bad = []
    for where, text in run.texts:
        hits = spanish_hits(text)
        if hits:
            bad.append(f"{where}: {hits[0]} in {text[:60]!r}")
    f.check("handshake.english", not bad, f"{len(run.texts)} published texts look English", "; ".join(bad[:8]))


def _transport(run: Run) -> None:
    f = run.findings
    if not run.url:
        f.not_applicable("security.transport", "stdio server")
        return
    parsed = urlparse(run.url)
    if parsed.hostname in ("127.0.0.1", "localhost", "::1"):
        f.not_applicable("security.transport", "loopback HTTP server")
        return
    f.check("security.transport", parsed.scheme == "https" and bool(run.token), "https with a Bearer token",
            f"remote server at {parsed.scheme}:// {'with' if run.token else 'without'} a token")


def _scan_secrets(run: Run) -> None:
    """10.1: no credential (or the HTTP token) in any response, configure answer, server log, cache or temp file."""
    f = run.findings
    secrets = secret_strings(run.credentials, (run.capability or {}).get("credentials_schema")) + [PROBE_SECRET] + ([run.token] if run.token else [])
    places: list[tuple[str, str]] = [("responses", "\n".join(run.wire))]
    if run.stderr_path.exists():
        places.append(("server stderr", run.stderr_path.read_text(encoding="utf-8", errors="replace")))
    for key in ("ACP_CACHE_DIR", "ACP_TMP_DIR"):
        folder = Path(run.env[key]) if run.env.get(key) else None
        if folder and folder.is_dir() and str(folder).startswith(str(run.cleanup_dir())):
            for path in folder.rglob("*"):
                if path.is_file():
                    places.append((f"{key}/{path.relative_to(folder)}", path.read_text(encoding="utf-8", errors="replace")))
    # An HTTP server's own log and folders, when the caller says where they are (kit.serve_http does).
    for given in run.server_files:
        for path in ([given] if given.is_file() else sorted(given.rglob("*")) if given.is_dir() else []):
            if path.is_file():
                places.append((f"server {path.name if path == given else path.relative_to(given)}",
                               path.read_text(encoding="utf-8", errors="replace")))
    found = [f"{where}: {', '.join(leaked(text, secrets))}" for where, text in places if leaked(text, secrets)]
    f.check("security.secrets", not found,
            f"{len(secrets)} secret value(s) absent from {len(run.wire)} answers, logs and {len(places) - 1} files",
            "credential values found in " + "; ".join(found[:6]))
