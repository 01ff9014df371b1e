"""Checks on what initialize and tools/list publish (4.2, 5.5, 6.2, 8.7, 8.8, 8.9, 10.6, 13.4)."""

from __future__ import annotations

import re
from typing import Any

from ..constants import ACP_MAX_ROW_LIMIT, COST_MODELS, DELIVERY_MODES
from ..skills import read_skills
from .run import Run
from .static import schema_texts, setup_schema_problems

REQUIRED_CAPABILITY = ("version", "defaults", "credentials_schema", "resource_id", "autocontext", "cost", "extraction_tools")
_DATEISH = re.compile(r"^(start|end)(_date)?$|^date_(from|to|start|end)$|^(since|until)$|_date$", re.I)
_NAME = re.compile(r"^[a-z0-9_]+$")


def check_capability(run: Run) -> None:
    """handshake.capability / cost_limit / setup_schemas / resource_id, catalog.declared."""
    f, cap = run.findings, run.capability
    if not cap:
        f.fail("handshake.capability", "initialize has no capabilities.experimental.acp")
        return
    missing = [k for k in REQUIRED_CAPABILITY if k not in cap]
    f.check("handshake.capability", not missing, f"fields present, version {cap.get('version')}",
            f"missing {', '.join(missing)}")
    if str(cap.get("version", "")).split(".")[0] != "1":
        f.fail("handshake.capability", f"version {cap.get('version')!r} is not 1.x: an ACP 1.x host uses this "
               "server as plain MCP and sends it no _meta.acp, credentials or acp/configure (4.3)")
    auto = cap.get("autocontext") or {}
    if not isinstance(auto.get("cache_ttl_s"), int) or not set(auto.get("delivery") or []) <= set(DELIVERY_MODES):
        f.fail("handshake.capability", f"autocontext needs cache_ttl_s and delivery ⊆ {DELIVERY_MODES}: {auto}")
    cost = cap.get("cost") or {}
    if cost.get("currency") != "USD" or cost.get("model") not in COST_MODELS or not cost.get("description"):
        f.fail("handshake.capability", f"cost must be {{currency: USD, model, description}}: {cost}")

    defaults = cap.get("defaults") or {}
    limit = defaults.get("cost_limit_usd")
    row = defaults.get("row_limit")
    ok = isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit >= 0
    f.check("handshake.cost_limit", ok, f"cost_limit_usd={limit}", f"defaults.cost_limit_usd is {limit!r}")
    if not (isinstance(row, int) and not isinstance(row, bool) and 0 <= row <= ACP_MAX_ROW_LIMIT):
        f.fail("handshake.cost_limit", f"defaults.row_limit is {row!r}")

    for key, is_credentials in (("credentials_schema", True), ("config_schema", False)):
        if key not in cap:
            continue
        problems = setup_schema_problems(cap[key], credentials=is_credentials)
        f.check("handshake.setup_schemas", not problems, f"{key} valid", f"{key}: {'; '.join(problems[:6])}")
        run.texts.extend(schema_texts(cap[key], key))

    rid = cap.get("resource_id") or {}
    missing = [k for k in ("description", "format", "examples") if k not in rid]
    if rid.get("format") != "none" and not rid.get("title"):
        missing.append("title")
    f.check("handshake.resource_id", not missing, f"resource_id {rid.get('format')}", f"resource_id lacks {', '.join(missing)}")
    if not isinstance(rid.get("examples", []), list):
        f.fail("handshake.resource_id", "resource_id.examples is not a list")
    extraction = cap.get("extraction_tools") or []
    unknown = [t for t in extraction if t not in run.tools]
    if unknown:
        f.fail("handshake.resource_id", f"extraction_tools not in tools/list: {', '.join(unknown)}")
    elif extraction:
        f.ok("handshake.resource_id", f"default tool {extraction[0]}")
    for key in ("title", "description"):
        if isinstance(rid.get(key), str):
            run.texts.append((f"resource_id.{key}", rid[key]))
    if isinstance(cost.get("description"), str):
        run.texts.append(("cost.description", cost["description"]))

    catalog = cap.get("table_catalog")
    if catalog is None:
        f.not_applicable("catalog.declared", "no table_catalog")
    else:
        names = [e.get("name") for e in catalog if isinstance(e, dict)]
        bad = [e for e in catalog if not isinstance(e, dict) or not _NAME.match(str(e.get("name"))) or not e.get("title")]
        f.check("catalog.declared", not bad, f"{len(names)} tables", f"invalid entries {bad[:3]}")
        extra = [t for t in defaults.get("tables") or [] if t not in names]
        if extra:
            f.fail("catalog.declared", f"defaults.tables outside the catalog: {extra}")
        for entry in catalog:
            for key in ("title", "description"):
                if isinstance(entry, dict) and isinstance(entry.get(key), str):
                    run.texts.append((f"table_catalog.{entry.get('name')}.{key}", entry[key]))


def check_tools(run: Run) -> None:
    """resources.injection, results.date_window/table_ref/access_mode, catalog.tables_argument (schemas)."""
    f, cap = run.findings, run.capability
    rid = cap.get("resource_id") or {}
    for name in ("autocontext", "autocontext_data"):
        f.check("handshake.plain_mcp", name in run.tools, f"{name} listed", f"tools/list lacks {name}")
    for name, tool in run.tools.items():
        schema = tool.get("inputSchema") or {}
        props = schema.get("properties") or {}
        run.texts.append((f"tools.{name}.description", tool.get("description") or ""))
        run.texts.extend(schema_texts(props, f"tools.{name}.inputSchema"))
        if "resource_id" in props:
            prop = props["resource_id"]
            if rid.get("format") == "none":
                f.fail("resources.injection", f"{name} publishes resource_id but resource_id.format is none")
            elif prop.get("type") != "string" or prop.get("description") != rid.get("description"):
                f.fail("resources.injection", f"{name}.resource_id must be a string repeating resource_id.description")
            elif "resource_id" in (schema.get("required") or []):
                f.fail("resources.injection", f"{name}.resource_id must not be required")
            else:
                f.ok("resources.injection", f"{name} has resource_id")
        _date_window(run, name, tool, props)
        _table_ref(run, name, tool, props)
    if rid.get("format") == "none" and not any("resource_id" in (t.get("inputSchema") or {}).get("properties", {})
                                               for t in run.tools.values()):
        f.ok("resources.injection", "format none and no tool publishes resource_id")
    run.findings.not_applicable("results.date_window", "no tool has a date window")
    _access_mode(run)
    _catalog_argument(run)


def _date_window(run: Run, name: str, tool: dict[str, Any], props: dict[str, Any]) -> None:
    f = run.findings
    marks = {k: p.get("x-acp-date") for k, p in props.items() if isinstance(p, dict) and p.get("x-acp-date")}
    if marks:
        values = sorted(str(v) for v in marks.values())
        if "template" in values:
            bad = [k for k, v in marks.items() if v == "template" and props[k].get("type") != "string"]
            f.check("results.date_window", not bad and values == ["template"], f"{name}: template",
                    f"{name}: template must be one string argument alone ({marks})")
        else:
            f.check("results.date_window", values == ["end", "start"], f"{name}: start/end",
                    f"{name}: x-acp-date needs exactly one start and one end ({marks})")
        return
    if name in (run.capability.get("extraction_tools") or []):
        unmarked = [k for k in props if _DATEISH.search(k)]
        if unmarked:
            f.fail("results.date_window", f"{name}: date arguments {unmarked} lack x-acp-date")


def _table_ref(run: Run, name: str, tool: dict[str, Any], props: dict[str, Any]) -> None:
    f = run.findings
    refs = [k for k, p in props.items() if isinstance(p, dict) and p.get("x-acp-input") == "table_ref"]
    if not refs:
        return
    writes = (tool.get("annotations") or {}).get("readOnlyHint") is False
    # 6.1/8.8.2: a tool that only works on a host table publishes no resource_id. A table_ref that is
    # optional (the rows may also come as literal arguments, e.g. a list of URLs) does not make it so.
    required = set((tool.get("inputSchema") or {}).get("required") or [])
    if "resource_id" in props and not writes and required.intersection(refs):
        f.fail("results.table_ref", f"{name} only reads a host table but publishes resource_id (6.2, 8.8.2)")
    bad = [k for k in refs if props[k].get("type") != "string"]
    f.check("results.table_ref", not bad, f"{name}: {', '.join(refs)} marked table_ref", f"{name}: {bad} not strings")


def _access_mode(run: Run) -> None:
    f, cap = run.findings, run.capability
    writers = [n for n, t in run.tools.items() if (t.get("annotations") or {}).get("readOnlyHint") is False]
    mode = ((cap.get("config_schema") or {}).get("properties") or {}).get("access_mode")
    if mode is None:
        if writers:
            f.fail("results.access_mode", f"write tools {writers} but config_schema has no access_mode (10.6)")
        else:
            f.not_applicable("results.access_mode", "no write tools and no access_mode")
        return
    f.check("results.access_mode", mode.get("default") == "onlyRead", "access_mode defaults to onlyRead",
            f"access_mode default is {mode.get('default')!r}, not onlyRead")
    extra = [m for m in mode.get("enum") or [] if m not in ("onlyRead", "readAndOnlyAdd", "full")]
    if extra:
        f.fail("results.access_mode", f"access_mode enum has unknown modes {extra}")


def _catalog_argument(run: Run) -> None:
    f, cap = run.findings, run.capability
    catalog = cap.get("table_catalog")
    if not catalog:
        f.not_applicable("catalog.tables_argument", "no table_catalog")
        return
    for tool in cap.get("extraction_tools") or []:
        names = [e["name"] for e in catalog if not e.get("tools") or tool in e["tools"]]
        if not names:
            continue
        prop = ((run.tools.get(tool) or {}).get("inputSchema") or {}).get("properties", {}).get("tables")
        if prop is None:
            f.fail("catalog.tables_argument", f"{tool} is covered by the catalog but publishes no tables argument")
            continue
        enum = (prop.get("items") or {}).get("enum")
        ok = prop.get("type") == "array" and sorted(enum or []) == sorted(names)
        f.check("catalog.tables_argument", ok, f"{tool}.tables enum {enum}",
                f"{tool}.tables must be an array with items.enum {names}, got {prop}")


def check_skills(run: Run) -> None:
    """results.skills: SKILL.md frontmatter in the connector folder (13.4), when the folder is known."""
    f = run.findings
    folder = run.package_dir / "skills" if run.package_dir else None
    if folder is None or not folder.is_dir():
        f.not_applicable("results.skills", "no skills/ folder known for this server")
        return
    skills, problems = read_skills(folder)
    for problem in problems:
        f.fail("results.skills", problem)
    for skill in skills:
        run.texts.append((f"skills.{skill.name}.description", skill.description))
        f.ok("results.skills", skill.name)
