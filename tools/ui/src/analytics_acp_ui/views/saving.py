"""Save a source (issue 35.3/35.4): the form validated, secrets into the secret store, the validator's verdict, then sources.json.

Order matters: secrets typed now go to the secret store under fresh names first, so the candidate the
bridge's validator checks holds references only (no secret in a temp file); a refused save removes
them again and the stored entry keeps its old ones. After a successful write the old secrets the
entry no longer references are removed.
"""

from __future__ import annotations

import math
import secrets as _secrets
from dataclasses import dataclass, field
from typing import Any

from analytics_acp import secret_store
from analytics_acp_bridge.sources.entries import SOURCE_ID

from .. import sourcesfile
from ..catalog import AcpEntry, Capability
from ..drafts import Draft
from ..forms.submit import Parsed, is_reference, parse
from ..state import UiState
from ..verdicts import Report, Verdict, check
from .form_model import LIMITS


@dataclass
class Outcome:
    """What a save did: ok with a message, or the errors / verdict / confirmation that stopped it."""

    ok: bool = False
    source_id: str = ""
    message: str = ""
    errors: dict[str, str] = field(default_factory=dict)
    problem: str | None = None
    confirm: str | None = None


def _schema(capability: Capability, key: str) -> dict[str, Any] | None:
    schema = capability.acp.get(f"{key}_schema")
    return schema if isinstance(schema, dict) else None


def parse_setup(state: UiState, capability: Capability, draft: Draft,
                stored: dict[str, Any] | None) -> tuple[Parsed, Parsed]:
    """The credentials and config parts of the draft (5.5.3)."""
    base = state.paths.sources.parent
    cred_schema = _schema(capability, "credentials")
    from ..forms.fields import build_variants
    from ..forms.submit import chosen_variant

    chosen = chosen_variant("credentials", draft.get, len(build_variants(cred_schema, "credentials")))
    filled = draft.filled if draft.signin_variant == chosen else None
    creds = parse(cred_schema, "credentials", draft.get, previous=(stored or {}).get("credentials"),
                  filled=filled, base=base)
    config = parse(_schema(capability, "config"), "config", draft.get, previous=(stored or {}).get("config"), base=base)
    return creds, config


def live_meta(state: UiState, capability: Capability, draft: Draft,
              stored: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, str]]:
    """The ``_meta.acp`` the resource picker sends: the form's credentials and config, references resolved in memory
    by the bridge (``resolve_setup``: as it resolves a saved entry)."""
    from analytics_acp_bridge.sources.entries import resolve_setup

    creds, config = parse_setup(state, capability, draft, stored)
    errors = {**creds.errors, **config.errors}
    resolved = resolve_setup(creds.value or None, config.value or None, state.paths.sources, state.paths.project)
    if resolved.problems:
        errors["references"] = " ".join(problem.message for problem in resolved.problems)
    state.redactor.add(resolved.secrets)
    meta = {key: value for key, value in (("credentials", resolved.credentials), ("config", resolved.config)) if value}
    return meta, errors


def _limits(draft: Draft, errors: dict[str, str]) -> dict[str, Any]:
    from ..forms.fields import make_field
    from ..forms.submit import convert

    out: dict[str, Any] = {}
    for key, prop in LIMITS.items():
        raw = (draft.values.get(f"limits.{key}") or "").strip()
        if not raw:
            continue
        try:
            value = convert(make_field(key, prop, f"limits.{key}", False), raw)
        except ValueError as exc:
            errors[f"limits.{key}"] = str(exc)
            continue
        if isinstance(value, float) and not math.isfinite(value):
            errors[f"limits.{key}"] = f"«{prop['title']}» must be a finite number."
            continue
        out[key] = value
    return out


def _cost_before(data: dict[str, Any], stored: dict[str, Any] | None, capability: Capability) -> float:
    for where in (stored, data.get("defaults"), capability.acp.get("defaults")):
        value = where.get("cost_limit_usd") if isinstance(where, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return 0.0


def _keep_secrets(part: Parsed, schema: dict[str, Any] | None, source_id: str, what: str,
                  stored_now: list[dict[str, str]]) -> str | None:
    """Move every literal secret of a parsed part into the secret store (fresh names); returns where they went."""
    if not isinstance(part.value, dict) or part.kept and is_reference(part.value):
        return None
    from ..forms.fields import variants_of

    write_only = {k for v in variants_of(schema) for k, p in (v.get("properties") or {}).items()
                  if isinstance(p, dict) and p.get("writeOnly")}
    where = None
    for key, value in list(part.value.items()):
        if key in write_only and isinstance(value, str) and value:
            name = f"{source_id}.{what}.{key}.{_secrets.token_hex(3)}"
            kept = secret_store.store(name, value)
            stored_now.append(kept.reference)
            part.value[key] = kept.reference
            where = kept.description
    return where


def _carry_verdicts(state: UiState, stamp_before: Any, old_id: str | None, source_id: str, verdict: Verdict,
                    first: bool) -> None:
    """The saved source's verdict joins the others' (unchanged entries keep theirs): no second check of the same file."""
    previous = state.reports.get("offline")
    if first or (previous is not None and previous[0] == stamp_before):
        merged = Report(sources={} if first or previous is None else dict(previous[1].sources))
        merged.sources.pop(old_id or source_id, None)
        merged.sources[source_id] = verdict
        state.reports["offline"] = (state.stamp(), merged)
    state.online.clear()


async def save(state: UiState, entry: AcpEntry, capability: Capability, draft: Draft,
               stored: dict[str, Any] | None) -> Outcome:
    """Validate the draft, keep its secrets, check it with the bridge's validator and write sources.json."""
    out = Outcome()
    stamp_before = state.stamp()
    try:
        data = sourcesfile.read_raw(state.paths.sources)
    except sourcesfile.SourcesFileError as exc:
        out.problem = str(exc)
        return out
    errors = out.errors
    source_id = (draft.values.get("source.id") or "").strip()
    if not SOURCE_ID.match(source_id):
        errors["source.id"] = "«Source id» must be 1-40 characters: lowercase letters, digits, _ or -."
    elif source_id != draft.editing and sourcesfile.find(data, source_id) is not None:
        errors["source.id"] = f"Another source already has the id «{source_id}»."
    creds, config = parse_setup(state, capability, draft, stored)
    errors.update(creds.errors)
    errors.update(config.errors)
    limits = _limits(draft, errors)
    resource = (draft.values.get("source.resource_choice") or draft.values.get("source.default_resource_id") or "").strip()
    rid = capability.acp.get("resource_id")
    if not resource and capability.needs_resource and not (isinstance(rid, dict) and rid.get("format") == "none"):
        errors["source.default_resource_id"] = "«Default resource» is required: its tools use one (14.3). Find resources or type one."
    before, after = _cost_before(data, stored, capability), limits.get("cost_limit_usd")
    if after is not None and after > before and draft.values.get("confirm_cost") != f"{after:g}":
        out.confirm = f"{after:g}"
        errors["limits.cost_limit_usd"] = (f"Raising the cost limit from ${before:g} to ${after:g} lets one call cost that "
                                           "much: tick the confirmation below and save again.")
    if errors:
        return out
    new_entry: dict[str, Any] = {"id": source_id, "acp": entry.id,
                                 "label": (draft.values.get("source.label") or "").strip() or None}
    stored_now: list[dict[str, str]] = []
    where = _keep_secrets(creds, _schema(capability, "credentials"), source_id, "credentials", stored_now)
    where = _keep_secrets(config, _schema(capability, "config"), source_id, "config", stored_now) or where
    if creds.value:
        new_entry["credentials"] = creds.value
    if config.value:
        new_entry["config"] = config.value
    new_entry["default_resource_id"] = resource or None
    new_entry.update(limits)
    if capability.acp.get("table_catalog"):
        new_entry["tables"] = list(dict.fromkeys(draft.lists.get("tables", [])))
    blocks = draft.lists.get("blocks", [])
    if blocks and len(blocks) < int(draft.values.get("blocks.count") or 0):
        new_entry["autocontext_blocks"] = blocks
    merged = sourcesfile.merged_entry(stored, new_entry)
    cached = state.reports.get("offline")
    if merged == stored and cached is not None and cached[0] == stamp_before and source_id in cached[1].sources:
        report = cached[1]  # saved unchanged: the file's verdict stands, no second check
    else:
        candidate = {"sources": [merged]}
        if isinstance(data.get("defaults"), dict):
            candidate["defaults"] = data["defaults"]
        report = await check(state.paths, state.servers, data=candidate)
    verdict = report.sources.get(source_id)
    if verdict is None or verdict.status == "error" or report.file_error:
        for ref in stored_now:
            secret_store.remove(ref)
        text = (verdict.problem if verdict is not None else None) or report.file_error or "the check gave no verdict"
        out.problem = state.redactor.text(text)
        return out
    sourcesfile.write(state.paths.sources, sourcesfile.upsert(data, new_entry, replace_id=draft.editing))
    _carry_verdicts(state, stamp_before, draft.editing, source_id, verdict, first=not sourcesfile.entries(data))
    kept = sourcesfile.references([new_entry.get("credentials"), new_entry.get("config")])
    for ref in sourcesfile.references([(stored or {}).get("credentials"), (stored or {}).get("config")]):
        if ref not in kept:
            secret_store.remove(ref)
    out.ok, out.source_id = True, source_id
    out.message = f"Saved source «{source_id}» in {state.paths.sources}."
    if where:
        out.message += f" Its secrets are kept in {where}, referenced from sources.json (never written there in plain)."
    return out
