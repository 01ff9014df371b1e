"""``analytics-acp check``: the 14.2 server checklist against any ACP server, as a host would.

Targets: a server folder (acp.json), a server zip (checked with the install rules of 13.1.1 and
extracted to a temp folder), a stdio command (``-- cmd args…``) or an HTTP URL (``--url``).
The protocol items come from the core's conformance kit (``analytics_acp.kit.arun_checklist``);
this module adds the package items of 13 (zip rules, acp.json, start-up, HTTP mode, read-only
folder). ``quick=True`` is the build's verification subset: start, ACP capability, tools/list.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio

from .launch import Launch, ServerFailed, probe, spawn_http, stdio_launch
from .manifest import ManifestError, load_manifest, manifest_problems
from .ziprules import ZipRefused, extract_plan, read_plan

# Package items (13): id -> (section, what is checked). Reported before the kit's items.
PACKAGE_ITEMS: dict[str, tuple[str, str]] = {
    "package.zip": ("13.1.1", "plain zip (stored/deflate, no zip64, no encryption), no escaping entries or symlinks, shallowest acp.json"),
    "package.acp_json": ("13.2", "acp.json has only identity, transport and a relative icon inside the folder"),
    "package.starts": ("13.1.1", "the server starts as acp.json says, announces capabilities.experimental.acp and answers tools/list with autocontext/autocontext_data"),
    "package.http_mode": ("13.3", "http.args start Streamable HTTP on --port; ACP_HTTP_TOKEN is required (401 without it)"),
    "package.read_only_folder": ("13.1", "the server writes nothing inside its own folder (cache and temp files go to ACP_CACHE_DIR/ACP_TMP_DIR)"),
}


@dataclass
class Item:
    """One checklist line: status pass / fail / n/a with evidence (same shape as the kit's CheckResult)."""

    item: str
    status: str
    evidence: str
    section: str = ""


class _Items(list[Item]):
    """The items of one run; each one is told to ``on_item`` as soon as it is decided (check prints it then)."""

    def __init__(self, on_item: Callable[[Item], None] | None):
        super().__init__()
        self.on_item = on_item

    def append(self, item: Item) -> None:
        super().append(item)
        if self.on_item is not None:
            self.on_item(item)

    def extend(self, items: Iterable[Item]) -> None:
        for item in items:
            self.append(item)


@dataclass
class Target:
    """What to check: exactly one of folder, zip, command, url."""

    folder: Path | None = None
    zip: Path | None = None
    command: list[str] | None = None
    url: str | None = None
    token: str | None = None

    @classmethod
    def parse(cls, value: str | None, command: list[str] | None = None, url: str | None = None,
              token: str | None = None) -> Target:
        """From the CLI: a path (folder or .zip), a command after ``--``, or ``--url``."""
        if command:
            return cls(command=command)
        if url:
            return cls(url=url, token=token)
        if not value:
            raise ValueError("Give a server folder, a .zip, '-- command args…' or --url.")
        path = Path(value)
        if path.is_dir():
            return cls(folder=path)
        if path.is_file() and path.suffix.lower() == ".zip":
            return cls(zip=path)
        raise ValueError(f"{value} is neither a server folder nor a .zip file.")


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for path in folder.rglob("*"):
        try:
            st = path.lstat()
        except OSError:
            continue
        out[str(path.relative_to(folder))] = (st.st_size, st.st_mtime_ns)
    return out


async def _http_item(folder: Path, manifest: dict[str, Any], env: dict[str, str], timeout: float) -> Item:
    section = PACKAGE_ITEMS["package.http_mode"][0]
    if not isinstance(manifest.get("http"), dict) or (manifest.get("transport") or {}).get("type") != "stdio":
        return Item("package.http_mode", "n/a", "acp.json declares no local HTTP mode (http.args).", section)
    import httpx

    try:
        async with spawn_http(stdio_launch(folder, manifest, http_args=True), env=env, timeout=timeout) as launch:
            async with httpx.AsyncClient(timeout=10) as http:
                body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
                headers = {"Accept": "application/json, text/event-stream"}
                assert launch.url is not None  # spawn_http answers with the server's URL
                denied = await http.post(launch.url, json=body, headers=headers)
            if denied.status_code != 401:
                return Item("package.http_mode", "fail", f"POST {launch.url} without the token answered {denied.status_code}, not 401 (10.5, 13.3).", section)
            result = await probe(launch, timeout=timeout, require_reserved=True)
            return Item("package.http_mode", "pass", f"{launch.url}: 401 without token; with Bearer token ACP {(result.capability or {}).get('version')} and {len(result.tools)} tools.", section)
    except (ServerFailed, ManifestError, OSError) as exc:
        return Item("package.http_mode", "fail", str(exc), section)


async def arun_check(target: Target, *, quick: bool = False, credentials: Any = None, config: Any = None,
                     resource_id: str | None = None, sample_calls: Any = None, env: dict[str, str] | None = None,
                     timeout: float = 90.0, on_step: Callable[[str], None] | None = None,
                     on_item: Callable[[Item], None] | None = None) -> list[Item]:
    """Run the checklist on ``target``; returns one Item per checklist line.

    ``on_step`` is told the name of each step as it starts, ``on_item`` each item as soon as it is
    decided (the kit's items when the kit ends): a caller can show progress and, if it gives up,
    say where.
    """
    items = _Items(on_item)
    step = on_step or (lambda name: None)
    sec = {k: v[0] for k, v in PACKAGE_ITEMS.items()}
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="analytics-acp-check-")))
        run_env = {"ACP_CACHE_DIR": str(tmp / "cache"), "ACP_TMP_DIR": str(tmp / "tmp"), **(env or {})}
        folder = target.folder
        if target.zip is not None:
            try:
                plan = read_plan(target.zip)
            except (ZipRefused, ManifestError) as exc:
                items.append(Item("package.zip", "fail", str(exc), sec["package.zip"]))
                return list(items)
            folder = tmp / plan.manifest["id"]
            extract_plan(target.zip, plan, folder)
            where = f"acp.json at {plan.prefix or 'the zip root'}"
            ignored = f", {len(plan.ignored)} entries outside it ignored" if plan.ignored else ""
            items.append(Item("package.zip", "pass", f"{len(plan.members)} entries, {where}{ignored}.", sec["package.zip"]))
        else:
            items.append(Item("package.zip", "n/a", "the target is not a zip.", sec["package.zip"]))
        manifest: dict[str, Any] | None = None
        launch: Launch
        if folder is not None:
            try:
                manifest = load_manifest(folder)
                problems = manifest_problems(manifest, folder)
                launch = stdio_launch(folder, manifest)
            except ManifestError as exc:
                items.append(Item("package.acp_json", "fail", str(exc), sec["package.acp_json"]))
                return items
            items.append(Item("package.acp_json", "fail" if problems else "pass",
                              "; ".join(problems) if problems else f"id {manifest['id']}, version {manifest.get('version')}, transport {manifest['transport']['type']}.",
                              sec["package.acp_json"]))
        else:
            items.append(Item("package.acp_json", "n/a", "no server folder (command or URL target).", sec["package.acp_json"]))
            launch = Launch(command=target.command) if target.command else Launch(url=target.url, token=target.token)
        before = _snapshot(folder) if folder is not None else None
        step("package.starts")
        try:
            started = await probe(launch, env=run_env, timeout=timeout, require_reserved=True,
                                  call_autocontext_data=not quick)
        except ServerFailed as exc:
            items.append(Item("package.starts", "fail", str(exc), sec["package.starts"]))
            return items
        name = (started.server_info or {}).get("name")
        evidence = f"serverInfo.name {name!r}, ACP {(started.capability or {}).get('version')}, {len(started.tools)} tools: {', '.join(started.tools)}."
        if manifest is not None and name != manifest.get("id"):
            evidence += f" Note: serverInfo.name differs from acp.json id {manifest.get('id')!r}; hosts identify the server by the id."
        items.append(Item("package.starts", "pass", evidence, sec["package.starts"]))
        if quick:
            return items
        if folder is not None and manifest is not None:
            step("package.http_mode")
            items.append(await _http_item(folder, manifest, run_env, timeout))
        else:
            items.append(Item("package.http_mode", "n/a", "no acp.json (command or URL target).", sec["package.http_mode"]))
        items.extend(await _kit_items(launch, folder, credentials=credentials, config=config, resource_id=resource_id,
                                      sample_calls=sample_calls, env=env, progress=on_step))
        if before is not None and folder is not None:
            after = _snapshot(folder)
            changed = sorted(set(before.items()) ^ set(after.items()))
            paths = sorted({p for p, _ in changed})
            items.append(Item("package.read_only_folder", "fail" if paths else "pass",
                              f"written inside the folder: {', '.join(paths[:10])}" if paths
                              else f"{len(before)} files unchanged after every probe.", sec["package.read_only_folder"]))
        else:
            items.append(Item("package.read_only_folder", "n/a", "no server folder to watch.", sec["package.read_only_folder"]))
    return list(items)


async def _kit_items(launch: Launch, folder: Path | None, **kwargs: Any) -> list[Item]:
    """The 14.2 protocol items from the core's conformance kit."""
    try:
        from analytics_acp.kit import arun_checklist
    except ImportError as exc:
        return [Item("kit", "fail", f"The core's conformance kit is not available ({exc}); only the package items ran.", "14.2")]
    try:
        results = await arun_checklist(launch.command, url=launch.url, token=launch.token,
                                       cwd=str(launch.cwd) if launch.cwd else None, package_dir=folder, **kwargs)
    except Exception as exc:  # noqa: BLE001 - a probe the kit did not turn into an item still fails the check
        from .launch import _flatten

        return [Item("kit", "fail", f"The conformance kit stopped: {_flatten(exc)[:1500]}", "14.2")]
    return [Item(r.item, r.status, r.evidence, r.section) for r in results]


def run_check(target: Target, **kwargs: Any) -> list[Item]:
    """:func:`arun_check` from synchronous code."""
    return anyio.run(lambda: arun_check(target, **kwargs))


def failed(items: list[Item]) -> list[Item]:
    """The failing items."""
    return [i for i in items if i.status == "fail"]


def to_json(items: list[Item]) -> str:
    """Machine form (``--json``)."""
    return json.dumps({"ok": not failed(items), "items": [asdict(i) for i in items]}, indent=2, ensure_ascii=False)



# --- the command: items printed as they are decided, one overall bound, no server left behind ---------

MAX_TIME_S = 600.0  # default bound of a whole run (--max-time); --timeout bounds each request
HARD_STOP_S = 15.0  # after a signal or the bound, the longest the orderly stop may take before a forced exit
EXIT_FAIL = 1


def item_line(item: Item) -> str:
    """One human line of the checklist."""
    return f"{item.status:<4}  {item.item:<40} [{item.section}] {item.evidence}"


def run_command(target: Target, *, max_time: float = MAX_TIME_S, json_out: bool = False, out: Any = None,
                **kwargs: Any) -> int:
    """``analytics-acp check``: print each item as it is decided and a final verdict; returns the exit code.

    The whole run is bounded by ``max_time`` ("gave up after N s at <step>"); SIGINT/SIGTERM stop it the
    same orderly way (every server it started is stopped, temp folders removed), exit 128 + signal. A
    timer forces the exit (stopping any server still alive) if the orderly stop itself hangs.
    """
    import os
    import signal
    import sys
    import threading

    out = out or sys.stdout
    progress_out = sys.stderr if json_out else out
    decided: list[Item] = []
    state: dict[str, Any] = {"step": "start", "signal": None}

    def on_step(name: str) -> None:
        state["step"] = name
        print(f"..    {name}", file=progress_out, flush=True)

    def on_item(item: Item) -> None:
        decided.append(item)
        if not json_out:
            print(item_line(item), file=out, flush=True)

    def force_exit(code: int) -> None:
        from analytics_acp.host.stdio import stop_live_servers

        stop_live_servers()
        os._exit(code)

    def arm(code: int) -> None:
        timer = threading.Timer(HARD_STOP_S, force_exit, args=(code,))
        timer.daemon = True
        timer.start()

    async def main() -> list[Item] | None:
        result: list[Item] | None = None
        async with anyio.create_task_group() as tg:

            async def signals() -> None:
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
                    async for signum in received:
                        state["signal"] = signum
                        arm(128 + signum)
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(signals)
            with anyio.move_on_after(max_time):
                result = await arun_check(target, on_step=on_step, on_item=on_item, **kwargs)
            if result is None:
                arm(EXIT_FAIL)  # the cancelled run is unwinding: its servers are being stopped
            tg.cancel_scope.cancel()
        return result

    items = anyio.run(main)
    if state["signal"] is not None:
        name = signal.Signals(state["signal"]).name
        verdict = f"checklist: stopped by {name} at {state['step']} ({len(decided)} items decided)"
        print(verdict, file=progress_out if json_out else out, flush=True)
        return 128 + int(state["signal"])
    if items is None:
        verdict = f"checklist: gave up after {max_time:g} s at {state['step']} ({len(decided)} items decided)"
        if json_out:
            print(json.dumps({"ok": False, "gave_up": verdict, "items": [asdict(i) for i in decided]}, indent=2,
                             ensure_ascii=False), file=out)
        else:
            print(verdict, file=out, flush=True)
        return EXIT_FAIL
    if json_out:
        print(to_json(items), file=out)
    else:
        bad = failed(items)
        counts = {s: sum(1 for i in items if i.status == s) for s in ("pass", "fail", "n/a")}
        # Not "N passed, N failed": CI reads that phrase as a test-runner summary.
        print(f"checklist: {counts['pass']} pass, {counts['fail']} fail, {counts['n/a']} n/a"
              + (f" (failed: {', '.join(i.item for i in bad)})" if bad else ""), file=out, flush=True)
    return EXIT_FAIL if failed(items) else 0

