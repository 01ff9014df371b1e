"""Probes of resources and autocontext (6.1, 6.3, 7.2, 7.3, 7.5)."""

from __future__ import annotations

import re
from typing import Any

from ..constants import ACP_RESOURCE_SUGGESTIONS
from ..setup_check import credentials_needed
from .run import Run

_BLOCK_ID = re.compile(r"^[a-z][a-z0-9_]*$")


def _name(seen: Any) -> str | None:
    return (seen.result.error or {}).get("name") if seen.result.is_error else None


async def autocontext(run: Run, client: Any) -> None:
    """resources.suggestions/examples, autocontext.* (with the run's credentials on a full host)."""
    f = run.findings
    uses_resource = (run.capability.get("resource_id") or {}).get("format") != "none"
    # 7.2: no credentials at all
    seen = await run.call(client, "autocontext_data", {}, {}, label="autocontext_data[no credentials]")
    blocks = seen.result.model_response if not seen.result.is_error else None
    if not isinstance(blocks, list):
        f.fail("autocontext.data_without_credentials", f"autocontext_data without credentials: {seen.result.text[:200]}")
        blocks = []
    else:
        bad = [b for b in blocks if not isinstance(b, dict) or not _BLOCK_ID.match(str(b.get("id"))) or not b.get("description")]
        f.check("autocontext.data_without_credentials", not bad, f"{len(blocks)} blocks without credentials",
                f"invalid block descriptors {bad[:3]}")
        for b in blocks:
            if isinstance(b, dict):
                run.texts.append((f"block.{b.get('id')}.description", str(b.get("description") or "")))

    if not uses_resource:
        f.not_applicable("resources.suggestions", "resource_id format none")
        f.not_applicable("resources.examples", "resource_id format none")
    else:
        suggested = await _suggestions(run, client)
        await _examples(run, client)
        if not run.resource_id:
            choose_resource(run, suggested)

    if not uses_resource:  # 6.1 format "none": no resource to fetch blocks for; unknown ids are still refused
        for item in ("autocontext.all_blocks", "autocontext.failing_block"):
            f.not_applicable(item, 'resource_id format "none": blocks are not fetched per resource')
        await _unknown_block(run, client, {}, [b.get("id") for b in blocks if isinstance(b, dict)])
        return
    if not run.resource_id:
        for item in ("autocontext.all_blocks", "autocontext.failing_block", "autocontext.unknown_block"):
            f.not_applicable(item, run.no_resource)
        return
    rid_args = {"resource_id": run.resource_id}
    data = await run.call(client, "autocontext_data", rid_args, run.meta(), label="autocontext_data[resource]")
    applicable: list[Any] = [b.get("id") for b in data.result.model_response or [] if isinstance(b, dict)] if not data.result.is_error else []
    seen = await run.call(client, "autocontext", {**rid_args, "request_data": []}, run.meta(), label="autocontext[all]")
    got = seen.result.model_response
    if seen.result.is_error or not isinstance(got, list):
        f.fail("autocontext.all_blocks", f"autocontext with resource failed: {seen.result.text[:200]}")
    else:
        ids: list[Any] = [b.get("id") for b in got if isinstance(b, dict)]
        shape = [b for b in got if not isinstance(b, dict) or ("data" in b) == ("error" in b) or "description" not in b]
        f.check("autocontext.all_blocks", sorted(ids) == sorted(applicable) and not shape,
                f"{len(ids)} applicable blocks returned", f"blocks {ids} vs applicable {applicable}; malformed {shape[:2]}")
        failed = [b for b in got if isinstance(b, dict) and "error" in b]
        warnings = (seen.result.system_info or {}).get("warnings") or []
        if failed:
            f.check("autocontext.failing_block", bool(warnings), f"{len(failed)} failing block(s) isolated, warning {warnings[0] if warnings else ''!r}",
                    "a block failed but system_info.warnings is empty")
            for b in failed:
                run.texts.append((f"block.{b.get('id')}.error", str(b.get("error"))))
        else:
            f.not_applicable("autocontext.failing_block", "no block failed in this run")
    await _unknown_block(run, client, rid_args, applicable)


async def _unknown_block(run: Run, client: Any, rid_args: dict[str, Any], valid: list[Any]) -> None:
    seen = await run.call(client, "autocontext", {**rid_args, "request_data": ["kit_no_such_block"]}, run.meta(),
                          label="autocontext[unknown block]")
    message = (seen.result.error or {}).get("message", "")
    lists = all(str(b) in message for b in valid[:3])
    run.findings.check("autocontext.unknown_block", _name(seen) == "ACP_UNKNOWN_BLOCK" and lists,
                       "ACP_UNKNOWN_BLOCK listing the valid ids", f"unknown block gave {_name(seen)}: {message[:200]!r}")


def cache_partition(run: Run) -> None:
    """7.4 is not observable through the protocol (a hit looks like a fresh fetch): reported, not guessed."""
    run.findings.not_applicable(
        "autocontext.cache_partition",
        "not observable from outside the server; the core keys its cache by a hash of the credential identity",
    )


def choose_resource(run: Run, suggested: list[str]) -> None:
    """No resource_id given to the kit: the first resource the server suggests (its default first, 6.3), else the
    first of its declared examples (4.2), so the resource, sample and progress probes run on an untouched server
    (issue 34.4: the scaffold failed three items without --resource-id). Said as a step of the run."""
    examples = [str(e) for e in (run.capability.get("resource_id") or {}).get("examples") or []]
    if run.credentials is None and credentials_needed(run.capability.get("credentials_schema") or {}):
        run.no_resource = "no resource_id given, and no credentials to use one with (the server needs them)"
        return
    if suggested:
        run.resource_id, origin = suggested[0], "the first resource the server suggests"
    elif examples:
        run.resource_id, origin = examples[0], "the first example the server declares"
    else:
        run.no_resource = "no resource_id given, suggested or declared"
        return
    run.resource_origin = origin
    if run.progress is not None:
        run.progress(f"resource_id {run.resource_id}: {origin} (--resource-id, or resource_id= in the kit, chooses another)")


async def _suggestions(run: Run, client: Any) -> list[str]:
    """resources.suggestions; the suggested resource ids (none when the listing failed)."""
    f = run.findings
    seen = await run.call(client, "autocontext", {}, run.meta(), label="autocontext[suggestions]")
    mr = seen.result.model_response
    if run.credentials is None and (seen.result.error or {}).get("name") == "ACP_CREDENTIALS_MISSING":
        f.not_applicable("resources.suggestions", "no credentials given (the listing needs them; pass --credentials)")
        return []
    if seen.result.is_error or not isinstance(mr, dict):
        f.fail("resources.suggestions", f"autocontext without resource_id: {seen.result.text[:200]}")
        return []
    resources, total = mr.get("resources"), mr.get("total_available")
    problems = []
    if not isinstance(resources, list) or len(resources) > ACP_RESOURCE_SUGGESTIONS:
        problems.append(f"resources has {len(resources) if isinstance(resources, list) else resources!r} entries")
        resources = resources if isinstance(resources, list) else []
    if not isinstance(total, int) or total < len(resources):
        problems.append(f"total_available {total!r}")
    if not isinstance(mr.get("notice"), str):
        problems.append("no notice")
    elif isinstance(total, int) and total > len(resources) and str(total) not in mr["notice"]:
        problems.append(f"notice does not say the page is partial: {mr['notice']!r}")
    bad = [r for r in resources if not isinstance(r, dict) or not isinstance(r.get("resource_id"), str) or not r.get("name")]
    if bad:
        problems.append(f"entries without resource_id/name {bad[:2]}")
    f.check("resources.suggestions", not problems, f"{len(resources)} of {total} resources", "; ".join(problems))
    if isinstance(mr.get("notice"), str):
        run.texts.append(("autocontext.notice", mr["notice"]))
    return [str(r["resource_id"]) for r in resources if isinstance(r, dict) and isinstance(r.get("resource_id"), str)]


async def _examples(run: Run, client: Any) -> None:
    f = run.findings
    examples = (run.capability.get("resource_id") or {}).get("examples") or []
    if not examples:
        f.not_applicable("resources.examples", "no examples published")
        return
    for example in examples:
        seen = await run.call(client, "autocontext_data", {"resource_id": example}, run.meta(),
                              label=f"autocontext_data[{example}]")
        f.check("resources.examples", _name(seen) != "ACP_INVALID_ARGUMENTS", f"{example} accepted",
                f"example {example!r} refused: {(seen.result.error or {}).get('message', '')[:200]}")


async def on_first_call(run: Run, client: Any) -> None:
    """autocontext.on_first_call: the 7.5 table, on ``client`` (the run's first session).

    7.5 keys delivery by ``_meta.acp.session_id`` and ``autocontext_delivered``, not by connection, and
    no earlier call of the run sends the session ids used here (kit-s1, kit-s2), so the table starts
    clean on a session that is already open.
    """
    f = run.findings
    auto = run.capability.get("autocontext") or {}
    if "on_first_call" not in (auto.get("delivery") or []):
        f.not_applicable("autocontext.on_first_call", "on_first_call not declared")
        return
    samples = [s for s in run.extraction_samples() if run.publishes(s.tool, "resource_id")]
    if not samples or not run.resource_id:
        f.not_applicable("autocontext.on_first_call", "no sample extraction with a resource")
        return
    sample = samples[0]
    args = run.with_resource(sample.tool, sample.arguments)
    base = {k: v for k, v in run.meta(**sample.meta).items() if k not in ("session_id", "autocontext_delivered")}
    cases: list[tuple[dict[str, Any], bool]] = [  # (extra _meta, attach expected)  -- 7.5 "Qué decide el servidor"
        ({"session_id": "kit-s1", "autocontext_delivered": False}, True),
        ({"session_id": "kit-s1"}, False),
        ({"session_id": "kit-s2", "autocontext_delivered": True}, False),
        ({}, False),
        ({"autocontext_delivered": False}, True),
        ({"autocontext_delivered": False}, True),
    ]
    for extra, expected in cases:
        seen = await run.call(client, sample.tool, args, {**base, **extra}, label=f"{sample.tool}[7.5 {extra}]")
        if seen.result.is_error:
            f.fail("autocontext.on_first_call", f"{extra}: {seen.result.text[:160]}")
            continue
        attached = "autocontext" in (seen.result.model_response or {})
        flag = (seen.result.system_info or {}).get("autocontext_attached")
        f.check("autocontext.on_first_call", attached == expected and flag == expected,
                f"{extra or 'no session'} -> attached={attached}",
                f"{extra or 'no session'}: attached={attached}, autocontext_attached={flag}, expected {expected}")
