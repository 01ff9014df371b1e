"""acp_sources (16.4): what the model learns about the sources, and the last edit of sources.json that was refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..calls.catalog import Catalog
from ..fleet.fleet import Fleet


def sources_report(fleet: Fleet, catalog: Catalog, acp_data: Path, refused: dict[str, Any] | None) -> dict[str, Any]:
    """acp_sources: status, credentials yes/no, limits and tools of each source; never a secret value."""
    used = {s.acp for s in fleet.sources.sources}
    out_sources = []
    for source in fleet.sources.sources:
        proc = fleet.processes.get(source.acp)
        health = fleet.health.of(source)
        entry: dict[str, Any] = {
            "id": source.id,
            "acp": source.acp,
            "label": source.label,
            "status": health.status,
            "has_credentials": bool(source.credentials),
            "config_keys": sorted((source.config or {}).keys()),
            "default_resource_id": source.default_resource_id,
            "limits": source.limits,
            "tools": catalog.of_source(source.id),
        }
        if health.error:
            entry["error"] = health.error
            if health.fix:
                entry["fix"] = health.fix
        warnings = list(source.warnings)
        if proc is not None and proc.client is not None:
            reason = proc.plain_mcp_reason
            entry["protocol"] = "mcp" if reason else "acp"
            if reason:
                # 4.3: the source works, without double delivery, limits or autocontext.
                entry["protocol_reason"] = f"The {source.acp} server {reason}"
                if source.credentials or source.config:
                    warnings.append(
                        "Its credentials, config, limits and default resource in sources.json are never sent "
                        "to it (only ACP 1.x servers receive them); its tools get the model's arguments only."
                    )
        if warnings:
            entry["warnings"] = warnings
        out_sources.append(entry)
    report: dict[str, Any] = {
        "sources_file": str(fleet.sources.path),
        **fleet.health.overall(),
        "sources": out_sources,
        "installed_without_source": sorted(a for a in fleet.launches if a not in used),
        "acps": [launch.public() for launch in fleet.launches.values()],
        "acp_data": str(acp_data),
    }
    if fleet.sources.error:
        report["error"] = fleet.sources.error
    if refused is not None:
        report["reload"] = refused
    if report["status"] != "ok" or refused is not None:  # so that nobody is told to restart the client for a fix
        report["applies"] = "A saved edit of sources.json applies without restarting the bridge."
    return report


def refusal(candidate: Fleet, running: Fleet) -> dict[str, Any] | None:
    """Why a saved sources.json is not applied (issue 34.3), or None to apply it: the file cannot be used, or a
    source that works now would stop working. The ``reload`` object of acp_sources: status, typed error, fix, and
    the verdicts of the sources that would stop working."""
    path = candidate.sources.path
    head = f"The saved {path} was not applied; the running sources are unchanged:"
    fix = f"Edit {path} as the error says and save it again."
    if candidate.sources.problem is not None:
        error = type(candidate.sources.problem)(f"{head} {candidate.sources.problem.message}")
        return {"status": "refused", "error": error.payload(), "fix": fix}
    broken = [s for s in candidate.sources.sources if candidate.health.of(s).setup
              and (old := running.sources.get(s.id)) is not None and running.usable(old) is not None]
    if not broken:
        return None
    first = candidate.health.of(broken[0]).error or {}
    names = ", ".join(f"«{s.id}»" for s in broken)
    message = (f"{head} {'source' if len(broken) == 1 else 'sources'} {names} would stop working: "
               + " ".join(f"«{s.id}»: {candidate.health.of(s).line()}" for s in broken))
    return {"status": "refused", "error": {"code": first.get("code"), "name": first.get("name"), "message": message},
            "fix": fix, "sources": [candidate.health.verdict(s).as_dict() for s in broken]}
