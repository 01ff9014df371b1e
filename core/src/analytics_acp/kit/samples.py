"""Probes built on the sample calls: results, cost preflight (9.2), host tables (8.8), access modes (10.6)
and table catalog selection (8.7)."""

from __future__ import annotations

from typing import Any

from .run import Run, Sample


def _name(seen: Any) -> str | None:
    return (seen.result.error or {}).get("name") if seen.result.is_error else None


def _table_refs(run: Run, tool: str) -> list[str]:
    props = ((run.tools.get(tool) or {}).get("inputSchema") or {}).get("properties") or {}
    return [k for k, p in props.items() if isinstance(p, dict) and p.get("x-acp-input") == "table_ref"]


def _writes(run: Run, tool: str) -> bool:
    return ((run.tools.get(tool) or {}).get("annotations") or {}).get("readOnlyHint") is False


async def sample_calls(run: Run, client: Any) -> None:
    """Every sample call on a full host; then the cost, table_ref and access-mode rules on them."""
    f = run.findings
    paid_seen = False
    for i, sample in enumerate(run.samples):
        args = run.with_resource(sample.tool, sample.arguments)
        meta = run.meta(**{"autocontext_delivered": True, "call_id": f"kit-call-{i}", **sample.meta})
        before = len(run.read_table_calls)
        await run.call(client, sample.tool, args, meta, label=f"sample:{sample.tool}")
        if _writes(run, sample.tool):  # fenced under the default mode: the host table is read under full
            await _write_rules(run, client, sample, args)
        else:
            _check_read_table(run, sample, args, before, meta.get("call_id"))
        if run.kind_of(sample.tool) == "extraction":
            paid_seen |= await _cost(run, client, sample, args)
    model = (run.capability.get("cost") or {}).get("model")
    if model == "free":
        f.not_applicable("cost.preflight", "cost model free")
    elif not paid_seen:
        f.fail("cost.preflight", f"cost model {model} but no sample extraction was refused at cost_limit_usd 0")
    if not any(_table_refs(run, t) for t in run.tools):
        f.not_applicable("results.table_ref", "no table_ref arguments")


def _check_read_table(run: Run, sample: Sample, args: dict[str, Any], before: int, call_id: str | None) -> None:
    """The call asked the host for exactly the refs of its table_ref arguments, with the call_id (8.8)."""
    refs = _table_refs(run, sample.tool)
    wanted = [args.get(r) for r in refs if args.get(r)]
    if not wanted:  # this call passes no host table (an optional table_ref left out)
        return
    asked = run.read_table_calls[before:]
    run.findings.check("results.table_ref", bool(asked) and all(ref in [a for a, _ in asked] for ref in wanted)
                       and all(cid == call_id for _, cid in asked),
                       f"{sample.tool}: acp/read_table for {wanted} with call_id",
                       f"{sample.tool}: read_table requests {asked} for arguments {wanted} (call_id {call_id})")


async def _cost(run: Run, client: Any, sample: Sample, args: dict[str, Any]) -> bool:
    """At cost_limit_usd 0: a free call reports estimate 0, a paid one is refused before running (9.2)."""
    f = run.findings
    meta = run.meta(**{"autocontext_delivered": True, **sample.meta, "cost_limit_usd": 0})
    seen = await run.call(client, sample.tool, args, meta, label=f"{sample.tool}[cost_limit 0]")
    if _name(seen) == "ACP_COST_LIMIT_EXCEEDED":
        data = (seen.result.error or {}).get("data") or {}
        message = (seen.result.error or {}).get("message", "")
        ok = isinstance(data.get("estimate_usd"), (int, float)) and data["estimate_usd"] > 0 and data.get("limit_usd") == 0
        f.check("cost.preflight", ok and ("narrow" in message.lower() or "reduce" in message.lower() or "raise" in message.lower()),
                f"{sample.tool}: refused at limit 0 (estimate {data.get('estimate_usd')})",
                f"{sample.tool}: cost error needs data.estimate_usd/limit_usd and a way to narrow: {data} {message!r}")
        return True
    if not seen.result.is_error:
        est = (seen.result.system_info or {}).get("cost_estimate_usd")
        f.check("cost.preflight", est == 0, f"{sample.tool}: free at limit 0", f"{sample.tool}: ran at cost_limit_usd 0 with estimate {est}")
    return False


async def _write_rules(run: Run, client: Any, sample: Sample, args: dict[str, Any]) -> None:
    """A write tool is fenced by default (onlyRead) and works when the mode allows it (10.6)."""
    f = run.findings
    config = {k: v for k, v in (run.config or {}).items() if k not in ("access_mode", "table_rules", "file_rules")}
    meta = {**run.meta(**{"autocontext_delivered": True, **sample.meta}), "config": {**config, "access_mode": "onlyRead"}}
    seen = await run.call(client, sample.tool, args, meta, label=f"{sample.tool}[onlyRead]")
    f.check("results.access_mode", _name(seen) == "ACP_READ_ONLY_VIOLATION", f"{sample.tool}: refused under onlyRead",
            f"{sample.tool} under onlyRead gave {_name(seen) or 'success'}")
    widest = widest_mode(run)
    meta["config"] = {**config, "access_mode": widest}
    meta["call_id"] = f"kit-write-{sample.tool}"
    before = len(run.read_table_calls)
    seen = await run.call(client, sample.tool, args, meta, label=f"{sample.tool}[{widest}]")
    _check_read_table(run, sample, args, before, meta["call_id"])
    f.check("results.access_mode", _name(seen) != "ACP_READ_ONLY_VIOLATION", f"{sample.tool}: allowed under {widest}",
            f"{sample.tool} under {widest} still refused")


def widest_mode(run: Run) -> str:
    """The most permissive access_mode the server publishes: 10.6 lets a server omit full (BigQuery does)."""
    props = (run.capability.get("config_schema") or {}).get("properties") or {}
    enum = (props.get("access_mode") or {}).get("enum") or []
    return next((m for m in ("full", "readAndOnlyAdd") if m in enum), "full")


async def host_tables_unsupported(run: Run) -> None:
    """8.8: without host_tables the server must not send acp/read_table and answers ACP_HOST_TABLES_UNSUPPORTED."""
    f = run.findings
    samples = [s for s in run.samples if any(s.arguments.get(r) for r in _table_refs(run, s.tool))]
    if not samples:
        return
    capability = {"version": run.capability.get("version", "1.0"), "stores_system_data": True, "multi_table": True,
                  "host_tables": False}
    async with run.connect(capability=capability) as client:
        for sample in samples:
            before = len(run.read_table_calls)
            meta = run.meta(**sample.meta)
            if _writes(run, sample.tool):  # let the access mode pass so only host_tables can refuse
                meta["config"] = {**(meta.get("config") or {}), "access_mode": widest_mode(run)}
            seen = await run.call(client, sample.tool, run.with_resource(sample.tool, sample.arguments),
                                  meta, label=f"{sample.tool}[no host_tables]")
            f.check("results.table_ref", _name(seen) == "ACP_HOST_TABLES_UNSUPPORTED" and len(run.read_table_calls) == before,
                    f"{sample.tool}: ACP_HOST_TABLES_UNSUPPORTED without host_tables",
                    f"{sample.tool} without host_tables gave {_name(seen) or 'success'} "
                    f"({len(run.read_table_calls) - before} read_table requests)")


async def catalog(run: Run, client: Any) -> None:
    """catalog.selection / delivery (8.7) on the first multitable sample whose tool publishes tables."""
    f = run.findings
    catalog_entries = run.capability.get("table_catalog") or []
    samples = [s for s in run.extraction_samples() if run.publishes(s.tool, "tables")]
    if not catalog_entries or not samples:
        for item in ("catalog.selection", "catalog.delivery", "catalog.plain_host"):
            f.not_applicable(item, "no table_catalog" if not catalog_entries else "no sample call of a tool with tables")
        return
    sample = samples[0]
    names = [e["name"] for e in catalog_entries if not e.get("tools") or sample.tool in e["tools"]]
    required = [e["name"] for e in catalog_entries if e.get("required") and e["name"] in names]
    optional = [n for n in names if n not in required]
    defaults = (run.capability.get("defaults") or {}).get("tables")
    args = run.with_resource(sample.tool, {k: v for k, v in sample.arguments.items() if k != "tables"})
    base = run.meta(**{"autocontext_delivered": True, **{k: v for k, v in sample.meta.items() if k != "tables"}})
    first, second = (optional + optional)[:2] if optional else ("", "")
    cases: list[tuple[str, dict[str, Any], dict[str, Any], list[str]]] = [
        ("arguments []", {**args, "tables": []}, base, required),
        ("defaults", args, base, sorted(set(defaults if defaults is not None else names) | set(required))),
    ]
    if first:
        cases.append(("_meta", args, {**base, "tables": [first]}, sorted({first, *required})))
        cases.append(("arguments over _meta", {**args, "tables": [second]}, {**base, "tables": [first]}, sorted({second, *required})))
    for label, a, m, expected in cases:
        seen = await run.call(client, sample.tool, a, m, label=f"{sample.tool}[tables {label}]")
        if seen.result.is_error:
            f.fail("catalog.selection", f"{label}: {seen.result.text[:200]}")
            continue
        info = seen.result.system_info or {}
        selected = sorted(info.get("tables_selected") or [])
        in_args = sorted((info.get("arguments") or {}).get("tables") or [])
        f.check("catalog.selection", selected == sorted(expected) and in_args == sorted(expected),
                f"{label} -> {selected}", f"{label}: tables_selected {selected}, arguments.tables {in_args}, expected {sorted(expected)}")
        _delivery(run, seen, names, expected)
    seen = await run.call(client, sample.tool, {**args, "tables": ["kit_no_such_table"]}, base, label=f"{sample.tool}[tables unknown]")
    message = (seen.result.error or {}).get("message", "")
    f.check("catalog.selection", _name(seen) == "ACP_INVALID_ARGUMENTS" and all(n in message for n in names[:3]),
            "unknown table -> ACP_INVALID_ARGUMENTS listing the valid names",
            f"unknown table gave {_name(seen) or 'success'}: {message[:160]!r}")
    await _plain_host(run, sample, args, base)


def _delivery(run: Run, seen: Any, names: list[str], selection: list[str]) -> None:
    f = run.findings
    sd = seen.result.system_data or {}
    mr = seen.result.model_response or {}
    delivered = [t.get("name") for t in sd.get("tables") or []] if sd.get("format") == "tables" else None
    if delivered is None:
        f.fail("catalog.delivery", f"{seen.label}: system_data.format is {sd.get('format')!r} on a multi_table host")
        return
    leaked = [n for n in delivered if n in names and n not in selection]
    shown = [n for n in (mr.get("tables") or {}) if n in names and n not in selection]
    not_extracted = mr.get("not_extracted") or {}
    wrong = [n for n in not_extracted if n in selection or n not in names]
    f.check("catalog.delivery", not leaked and not shown and not wrong,
            f"{seen.label}: delivered {delivered}, not_extracted {sorted(not_extracted)}",
            f"{seen.label}: unselected tables delivered {leaked or shown}, not_extracted {not_extracted}")
    if not selection and mr.get("notice") and "No tables were requested" not in str(mr.get("notice")):
        if not any(n in names for n in delivered):
            f.fail("catalog.delivery", f"{seen.label}: empty selection notice {mr.get('notice')!r}")


async def _plain_host(run: Run, sample: Sample, args: dict[str, Any], meta: dict[str, Any]) -> None:
    """8.2.1: a host without multi_table gets the primary table as a plain extraction."""
    f = run.findings
    capability = {"version": run.capability.get("version", "1.0"), "stores_system_data": True, "host_tables": True}
    async with run.connect(capability=capability) as client:
        seen = await run.call(client, sample.tool, args, meta, label=f"{sample.tool}[no multi_table]")
    sd = seen.result.system_data or {}
    mr = seen.result.model_response or {}
    f.check("catalog.plain_host", not seen.result.is_error and sd.get("format") in ("inline", "file") and "rows" in mr,
            f"one table ({sd.get('format')}, {sd.get('row_count')} rows)",
            f"without multi_table got format {sd.get('format')!r}: {seen.result.text[:160]}")
