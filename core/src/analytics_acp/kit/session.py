"""Probes of the system channel: plain MCP clients (2.2), acp/configure (5.1), precedence (5.3),
system keys in arguments (5.4) and default_resource_id (6.1)."""

from __future__ import annotations

from typing import Any

from .run import PROBE_SECRET, Run, Sample


def _needs_credentials(run: Run) -> bool:
    schema = run.capability.get("credentials_schema") or {}
    return bool(schema.get("oneOf") or schema.get("required"))


def _first_extraction(run: Run) -> Sample | None:
    samples = run.extraction_samples()
    return samples[0] if samples else None


def _error_name(seen: Any) -> str | None:
    return (seen.result.error or {}).get("name") if seen.result.is_error else None


async def plain_mcp(run: Run) -> None:
    """handshake.plain_mcp (2.2, 4.3): no ACP capability, no _meta."""
    f = run.findings
    async with run.connect(capability=False) as client:
        names = {t["name"] for t in await client.list_tools()}
        f.check("handshake.plain_mcp", {"autocontext", "autocontext_data"} <= names and set(run.tools) <= names,
                f"plain client sees {len(names)} tools", f"plain client tool list differs: {sorted(set(run.tools) - names)}")
        seen = await run.call(client, "autocontext_data", {}, None, label="plain:autocontext_data")
        f.check("handshake.plain_mcp", not seen.result.is_error and isinstance(seen.result.model_response, list),
                "plain autocontext_data gives its list as text", f"plain autocontext_data failed: {seen.result.text[:200]}")
        # 2.2: each extraction answers in content[0].text; a source with credentials refuses with
        # ACP_CREDENTIALS_MISSING, a host-table tool with ACP_HOST_TABLES_UNSUPPORTED (8.8), others work.
        error_names: list[str | None] = []
        for sample in run.extraction_samples()[:4]:
            args = run.with_resource(sample.tool, sample.arguments)
            seen = await run.call(client, sample.tool, args, None, label=f"plain:{sample.tool}")
            model = seen.result.model_response if seen.result.text.strip()[:1] in ("{", "[") else None
            name = (model or {}).get("error", {}).get("name") if isinstance(model, dict) and seen.result.is_error else None
            error_names.append(name)
            allowed = {None, "ACP_CREDENTIALS_MISSING", "ACP_HOST_TABLES_UNSUPPORTED"}
            f.check("handshake.plain_mcp", model is not None and name in allowed and (name is not None) == seen.result.is_error,
                    f"plain {sample.tool}: {name or 'model_response'} in content[0].text",
                    f"plain {sample.tool} gave {name or seen.result.text[:200]!r}")
        if error_names and _needs_credentials(run):
            f.check("handshake.plain_mcp", "ACP_CREDENTIALS_MISSING" in error_names,
                    "ACP_CREDENTIALS_MISSING where credentials are needed",
                    f"no extraction asked a plain client for credentials: {error_names}")


async def configure(run: Run) -> None:
    """config.configure, config.invalid_limit, config.precedence, config.no_system_arguments, resources.default."""
    f = run.findings
    async with run.connect() as client:
        first = await client.configure(row_limit=3)
        second = await client.configure(cost_limit_usd=1.5)
        run.record_wire(first)
        run.record_wire(second)
        eff = second.get("effective") or {}
        f.check("config.configure", second.get("ok") is True and eff.get("row_limit") == 3 and eff.get("cost_limit_usd") == 1.5,
                "row_limit and cost_limit_usd merged across two configure calls",
                f"configure did not merge: {second}")
        if "has_credentials" not in eff:
            f.fail("config.configure", "effective lacks has_credentials")
        if run.credentials is not None:
            with_creds = await client.configure(credentials=run.credentials)
            run.record_wire(with_creds)
            f.check("config.configure", (with_creds.get("effective") or {}).get("has_credentials") is True
                    and "credentials" not in with_creds.get("effective", {}),
                    "has_credentials true, credentials not echoed", f"configure with credentials: {with_creds}")
            cleared = await client.configure(credentials=None)
            run.record_wire(cleared)
            f.check("config.configure", (cleared.get("effective") or {}).get("has_credentials") is False,
                    "credentials: null clears them", f"credentials: null left has_credentials {cleared.get('effective')}")
        for bad in ({"row_limit": -1}, {"row_limit": 5001}, {"cost_limit_usd": -0.5}, {"field_limit": 0}):
            await _expect_invalid_limit(run, client, bad)
        after = await client.configure()
        run.record_wire(after)
        eff = after.get("effective") or {}
        f.check("config.invalid_limit", eff.get("row_limit") == 3 and eff.get("cost_limit_usd") == 1.5,
                "session unchanged after refused limits", f"session changed after refused limits: {eff}")
        await _bogus_credentials(run, client)

        sample = _first_extraction(run)
        if sample is None:
            for item in ("config.precedence", "config.no_system_arguments", "resources.default"):
                f.not_applicable(item, "no sample extraction call")
            return
        args = run.with_resource(sample.tool, sample.arguments)
        meta = run.meta(**{"autocontext_delivered": True, **sample.meta})
        meta.pop("row_limit", None)
        via_session = await run.call(client, sample.tool, args, meta, label=f"{sample.tool}[configured]")
        via_meta = await run.call(client, sample.tool, args, {**meta, "row_limit": 2}, label=f"{sample.tool}[meta]")
        got = [(s.result.system_info or {}).get("row_limit") for s in (via_session, via_meta)]
        f.check("config.precedence", got == [3, 2], "row_limit 3 from configure, 2 from _meta",
                f"row_limit seen {got}, expected [3, 2] ({_error_name(via_session) or _error_name(via_meta) or 'no error'})")
        for key, value in (("row_limit", 1), ("cost_limit_usd", 100), ("credentials", {"type": "x"})):
            seen = await run.call(client, sample.tool, {**args, key: value}, meta, label=f"{sample.tool}[arg {key}]")
            f.check("config.no_system_arguments", _error_name(seen) == "ACP_INVALID_ARGUMENTS",
                    f"{key} in arguments refused", f"{key} in arguments gave {_error_name(seen) or 'success'}")
        await _default_resource(run, client, sample, meta)


async def unconfigured(run: Run, client: Any) -> None:
    """config.precedence / resources.default on a session that never called acp/configure.

    ``client`` is the run's first session, still open: it never configured, and this runs after the
    configure probe's session set row_limit 3, row_limit 2 in _meta and a default resource, so a
    server that lets one session's settings reach another still fails here (over HTTP both sessions
    are on one process). Over stdio a new connection would be a new process, which proves no more.
    """
    f = run.findings
    sample = _first_extraction(run)
    if sample is None:  # configure() reported the items n/a
        return
    defaults = run.capability.get("defaults") or {}
    args = run.with_resource(sample.tool, sample.arguments)
    plain_meta = run.meta(**{"autocontext_delivered": True, **{k: v for k, v in sample.meta.items() if k != "row_limit"}})
    seen = await run.call(client, sample.tool, args, plain_meta, label=f"{sample.tool}[defaults]")
    fresh_limit = (seen.result.system_info or {}).get("row_limit")
    f.check("config.precedence", fresh_limit == defaults.get("row_limit"),
            f"unconfigured session uses defaults.row_limit {fresh_limit}",
            f"unconfigured session row_limit {fresh_limit} instead of defaults {defaults.get('row_limit')}")
    await _resource_required(run, client, sample, plain_meta)


async def _expect_invalid_limit(run: Run, client: Any, params: dict[str, Any]) -> None:
    from ..host import ProtocolError

    try:
        answer = await client.configure(**params)
    except ProtocolError as exc:
        run.findings.check("config.invalid_limit", exc.code == -32016, f"{params} -> -32016",
                           f"{params} -> JSON-RPC {exc.code} instead of -32016")
        run.record_wire({"code": exc.code, "message": exc.message, "data": exc.data})
        return
    run.findings.fail("config.invalid_limit", f"{params} accepted: {answer}")


async def _bogus_credentials(run: Run, client: Any) -> None:
    """Invalid credentials carrying a secret-looking value: refused, and the value never echoed (5.5.3, 10.3)."""
    from ..host import ProtocolError

    bogus = {"type": "kit_unknown_variant", "api_key": PROBE_SECRET, "password": PROBE_SECRET}
    try:
        run.record_wire(await client.configure(credentials=bogus))
    except ProtocolError as exc:
        run.record_wire({"code": exc.code, "message": exc.message, "data": exc.data})
    if run.capability.get("credentials_schema", {}).get("oneOf"):
        sample = _first_extraction(run)
        if sample is not None:
            seen = await run.call(client, sample.tool, run.with_resource(sample.tool, sample.arguments),
                                  {"credentials": bogus}, label=f"{sample.tool}[bogus credentials]")
            run.findings.check("handshake.setup_schemas", _error_name(seen) == "ACP_CREDENTIALS_INVALID",
                               "credentials outside every variant -> ACP_CREDENTIALS_INVALID",
                               f"credentials outside every variant gave {_error_name(seen) or 'success'}")


async def _default_resource(run: Run, client: Any, sample: Sample, meta: dict[str, Any]) -> None:
    f = run.findings
    if not run.publishes(sample.tool, "resource_id"):
        f.not_applicable("resources.default", f"{sample.tool} publishes no resource_id")
        return
    if not run.resource_id:
        f.not_applicable("resources.default", run.no_resource)
        return
    args = {k: v for k, v in sample.arguments.items() if k != "resource_id"}
    meta = {k: v for k, v in meta.items() if k != "default_resource_id"}
    run.record_wire(await client.configure(default_resource_id=run.resource_id))
    seen = await run.call(client, sample.tool, args, meta, label=f"{sample.tool}[default resource]")
    got = (seen.result.system_info or {}).get("resource_id")
    f.check("resources.default", not seen.result.is_error and bool(got), f"default_resource_id used ({got})",
            f"without resource_id and with default_resource_id: {_error_name(seen) or got!r}")
    run.record_wire(await client.configure(default_resource_id=None))
    seen = await run.call(client, sample.tool, args, meta, label=f"{sample.tool}[default cleared]")
    ok, evidence = _no_default(seen)
    f.check("resources.default", ok, f"default_resource_id: null unsets it ({evidence})",
            f"after default_resource_id: null, no resource gave {evidence}")


def _no_default(seen: Any) -> tuple[bool, str]:
    """No resource and no configured default: ACP_RESOURCE_REQUIRED (6.1), unless the credentials
    themselves name the resource (a database in the settings, a single file), which is then the
    default and shows in system_info.resource_id."""
    name = _error_name(seen)
    if name == "ACP_RESOURCE_REQUIRED":
        return True, name
    got = (seen.result.system_info or {}).get("resource_id")
    if got:  # the call ran on that resource (and may still fail for its own reasons, e.g. a table elsewhere)
        return True, f"the resource the credentials name: {got}" + (f", then {name}" if name else "")
    return False, name or "success without a resource_id"


async def _resource_required(run: Run, client: Any, sample: Sample, meta: dict[str, Any]) -> None:
    """On a session that never configured a default: no resource_id -> ACP_RESOURCE_REQUIRED (6.1)."""
    if not run.publishes(sample.tool, "resource_id") or not run.resource_id:
        return
    args = {k: v for k, v in sample.arguments.items() if k != "resource_id"}
    meta = {k: v for k, v in meta.items() if k != "default_resource_id"}
    seen = await run.call(client, sample.tool, args, meta, label=f"{sample.tool}[no resource]")
    ok, evidence = _no_default(seen)
    run.findings.check("resources.default", ok, f"no resource -> {evidence}", f"no resource and no default gave {evidence}")
