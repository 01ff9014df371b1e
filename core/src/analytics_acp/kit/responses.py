"""Checks every recorded tools/call response must pass (8, 8.2, 8.4, 8.5, 8.6, 9.2, 10.1, 12.1)."""

from __future__ import annotations

import json
from typing import Any

from ..constants import ACP_MODEL_ROWS_MULTI, ACP_MODEL_ROWS_SINGLE, COLUMN_TYPES
from ..errors import ERROR_TYPES
from .model import Seen
from .run import Run
from .static import parse_iso_utc, value_matches

SYSTEM_INFO_REQUIRED = ("acp", "acp_version", "tool", "kind", "resource_id", "arguments", "row_limit", "cost_limit_usd",
                        "cost_estimate_usd", "cost_actual_usd", "duration_ms", "fetched_at", "autocontext_attached",
                        "messages", "warnings")
EXTRACTION_FIELDS = ("notice", "description", "dates", "total_rows", "returned_rows", "truncated", "columns", "rows")
NAMES = {cls.code: cls.name for cls in ERROR_TYPES}


def normative_notice(total: int, returned: int) -> str:
    """The three notices of 8.2."""
    if total == 0:
        return "The query returned no rows."
    if returned >= total:
        return f"Showing all {total} extracted rows."
    return f"Showing {returned} of {total} extracted rows."


def check_all(run: Run) -> None:
    """Apply the per-response checks to every recorded call."""
    for seen in run.seen:
        _content(run, seen)
        _system_info(run, seen)
        if seen.result.is_error:
            _error(run, seen)
        elif seen.kind == "extraction":
            _extraction(run, seen)


def _content(run: Run, seen: Seen) -> None:
    f, res = run.findings, seen.result
    content = res.content
    if not content or content[0].get("type") != "text":
        f.fail("results.content_text", f"{seen.label}: content[0] is not a text block")
        return
    try:
        json.loads(res.text)
    except ValueError:
        f.fail("results.content_text", f"{seen.label}: content[0].text is not JSON")
        return
    f.ok("results.content_text", f"{len(run.seen)} responses")


def _system_info(run: Run, seen: Seen) -> None:
    f, res = run.findings, seen.result
    acp = res.acp
    if not isinstance(acp, dict):
        f.fail("results.system_info", f"{seen.label}: result has no _meta.acp")
        return
    info = acp.get("system_info")
    if acp.get("version") != run.capability.get("version") or "kind" not in acp or not isinstance(info, dict):
        f.fail("results.system_info", f"{seen.label}: _meta.acp needs version, kind and system_info")
        return
    missing = [k for k in SYSTEM_INFO_REQUIRED if k not in info]
    expected_kind = "error" if res.is_error else seen.kind
    problems = []
    if missing:
        problems.append(f"missing {', '.join(missing)}")
    if info.get("acp") != run.server_info.get("name"):
        problems.append(f"acp={info.get('acp')!r} is not serverInfo.name {run.server_info.get('name')!r}")
    if info.get("tool") != seen.tool:
        problems.append(f"tool={info.get('tool')!r}")
    if acp.get("kind") != expected_kind or info.get("kind") != expected_kind:
        problems.append(f"kind {acp.get('kind')}/{info.get('kind')} instead of {expected_kind}")
    if "fetched_at" in info and not parse_iso_utc(info["fetched_at"]):
        problems.append(f"fetched_at {info['fetched_at']!r} is not ISO 8601 UTC")
    if "duration_ms" in info and not (isinstance(info["duration_ms"], int) and info["duration_ms"] >= 0):
        problems.append("duration_ms is not a non-negative integer")
    for key in ("messages", "warnings"):
        if key in info and not isinstance(info[key], list):
            problems.append(f"{key} is not a list")
    if not isinstance(info.get("arguments", {}), dict):
        problems.append("arguments is not an object")
    if seen.kind == "extraction" and not res.is_error:
        problems += [f"missing {k}" for k in ("total_rows", "returned_rows", "truncated") if k not in info]
    if seen.kind == "autocontext" and not (seen.arguments.get("resource_id")) and info.get("resource_id") is not None:
        problems.append("autocontext without resource_id must have system_info.resource_id null (6.3)")
    if problems:
        f.fail("results.system_info", f"{seen.label}: {'; '.join(problems)}")
    else:
        f.ok("results.system_info", f"{len(run.seen)} responses")
    if acp.get("system_data") is not None and (res.is_error or seen.kind != "extraction"):
        f.fail("results.system_data", f"{seen.label}: system_data on a non-extraction response")
    # cost.reported (9.2)
    est, act = info.get("cost_estimate_usd"), info.get("cost_actual_usd", "absent")
    if not isinstance(est, (int, float)) or isinstance(est, bool) or not (act is None or isinstance(act, (int, float))):
        f.fail("cost.reported", f"{seen.label}: cost_estimate_usd={est!r} cost_actual_usd={act!r}")
    else:
        f.ok("cost.reported", "cost_estimate_usd and cost_actual_usd on every response")
    for key in ("messages", "warnings"):
        run.texts.extend((f"{seen.label}.system_info.{key}", m) for m in info.get(key) or [] if isinstance(m, str))


def _error(run: Run, seen: Seen) -> None:
    f, res = run.findings, seen.result
    err = res.error
    try:
        text = json.loads(res.text)
    except ValueError:
        text = None
    if not isinstance(err, dict) or not {"code", "name", "message"} <= set(err):
        f.fail("errors.typed", f"{seen.label}: isError without _meta.acp.error {{code, name, message}}")
        return
    problems = []
    if not isinstance(text, dict) or text.get("error") != err or set(text) != {"error"}:
        problems.append("content[0].text is not {\"error\": <_meta.acp.error>}")
    code = err.get("code")
    if not isinstance(code, int):
        problems.append(f"code {code!r} is not an integer")
    elif -32049 <= code <= -32010 and NAMES.get(code) != err.get("name"):
        problems.append(f"code {code} with name {err.get('name')}")
    f.check("errors.typed", not problems, f"{err.get('name')} ({seen.label})", f"{seen.label}: {'; '.join(problems)}")
    message = str(err.get("message") or "")
    f.check("errors.messages", len(message.split()) >= 4, f"{err.get('name')}: {message[:80]}",
            f"{seen.label}: message too short to guide the model: {message!r}")
    run.texts.append((f"{seen.label}.error.message", message))


def _extraction(run: Run, seen: Seen) -> None:
    f, res = run.findings, seen.result
    mr, info, sd = res.model_response, res.system_info or {}, res.system_data
    if not isinstance(sd, dict):
        f.fail("results.system_data", f"{seen.label}: extraction without system_data")
        return
    try:
        tables = res.tables()
    except Exception as exc:  # an unreadable table_uri is a conformance failure, not a kit crash
        f.fail("results.system_data", f"{seen.label}: cannot load the table ({type(exc).__name__}: {exc})")
        return
    seen.tables = tables
    if sd.get("format") == "tables":
        _multitable(run, seen, mr, info, sd, tables)
        return
    if sd.get("format") not in ("inline", "file"):
        f.fail("results.system_data", f"{seen.label}: system_data.format {sd.get('format')!r}")
        return
    table = tables[0]
    _typed_table(run, seen.label, sd, table.rows)
    if not isinstance(mr, dict) or [k for k in EXTRACTION_FIELDS if k not in mr]:
        f.fail("results.rows", f"{seen.label}: model_response lacks {[k for k in EXTRACTION_FIELDS if k not in (mr or {})]}")
        return
    total, returned, rows = mr["total_rows"], mr["returned_rows"], mr["rows"]
    limit = info.get("row_limit")
    problems = []
    if sd.get("row_count") != total or len(table.rows) != total:
        problems.append(f"total_rows {total}, system_data.row_count {sd.get('row_count')}, table has {len(table.rows)}")
    if returned != len(rows) or (isinstance(limit, int) and returned > limit):
        problems.append(f"returned_rows {returned}, rows {len(rows)}, row_limit {limit}")
    if mr["truncated"] != (returned < total):
        problems.append(f"truncated {mr['truncated']} with {returned}/{total}")
    columns = [h.get("name") for h in sd.get("headers") or []]
    if mr["columns"] != columns:
        problems.append(f"columns {mr['columns']} differ from headers {columns}")
    bad_rows = [r for r in rows if set(r) != set(columns)]
    if bad_rows:
        problems.append(f"{len(bad_rows)} model rows without exactly the columns")
    expected = normative_notice(total, returned)
    if mr["notice"] != expected:
        problems.append(f"notice {mr['notice']!r} instead of {expected!r}")
    if mr["notice"] not in (info.get("messages") or []):
        problems.append("system_info.messages lacks the notice")
    if not isinstance(mr["dates"], list) or not mr["dates"] or not all(value_matches(d, "date") for d in mr["dates"]):
        problems.append(f"dates {mr['dates']!r} are not resolved YYYY-MM-DD")
    if (info.get("total_rows"), info.get("returned_rows"), info.get("truncated")) != (total, returned, mr["truncated"]):
        problems.append("system_info totals differ from model_response")
    f.check("results.rows", not problems, f"{seen.label}: {returned}/{total} rows, limit {limit}", f"{seen.label}: {'; '.join(problems)}")
    # The notice only: ``description`` quotes the request (SQL, filters, names), which may be in any language.
    run.texts.append((f"{seen.label}.notice", mr["notice"]))


def _typed_table(run: Run, label: str, part: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    f = run.findings
    headers = part.get("headers") or []
    names = [h.get("name") for h in headers]
    problems = []
    bad_types = [h for h in headers if h.get("type") not in COLUMN_TYPES]
    if bad_types:
        problems.append(f"headers with unknown types {bad_types[:3]}")
    if part.get("format") == "inline" and not isinstance(part.get("table"), list):
        problems.append("inline without table")
    if part.get("format") == "file" and not str(part.get("table_uri", "")).startswith(("file://", "http://", "https://")):
        problems.append(f"table_uri {part.get('table_uri')!r}")
    wrong_keys = sum(1 for r in rows if set(r) != set(names))
    if wrong_keys:
        problems.append(f"{wrong_keys} rows without exactly the header keys")
    for h in headers:
        bad = [r.get(h["name"]) for r in rows if not value_matches(r.get(h["name"]), h.get("type", "string"))]
        if bad:
            problems.append(f"column {h['name']} ({h.get('type')}) has values like {bad[0]!r}")
    f.check("results.system_data", not problems, f"{label}: {len(rows)} rows, {len(headers)} typed headers",
            f"{label}: {'; '.join(problems[:5])}")


def _multitable(run: Run, seen: Seen, mr: Any, info: dict[str, Any], sd: dict[str, Any], tables: list[Any]) -> None:
    f = run.findings
    parts = sd.get("tables") or []
    for part, table in zip(parts, tables, strict=False):
        _typed_table(run, f"{seen.label}.{part.get('name')}", part, table.rows)
    problems = []
    if sd.get("row_count") != sum(len(t.rows) for t in tables):
        problems.append("system_data.row_count is not the sum of the tables")
    if not isinstance(mr, dict) or not isinstance(mr.get("tables"), dict) or "notice" not in mr:
        f.fail("results.rows", f"{seen.label}: multitable model_response needs notice and tables")
        return
    limit, field_limit = info.get("row_limit"), info.get("field_limit")
    cap = ACP_MODEL_ROWS_SINGLE if len(mr["tables"]) == 1 else ACP_MODEL_ROWS_MULTI
    for part in parts:
        view = mr["tables"].get(part.get("name"))
        if view is None:
            problems.append(f"{part.get('name')} in system_data but not in model_response.tables")
            continue
        rows = view.get("rows") or []
        if part.get("model_view"):
            if len(rows) > cap or (isinstance(field_limit, int) and len(view.get("fields") or []) > field_limit):
                problems.append(f"{part.get('name')}: model view shows {len(rows)} rows / {len(view.get('fields') or [])} fields")
        elif isinstance(limit, int) and len(rows) > limit:
            problems.append(f"{part.get('name')}: {len(rows)} rows above row_limit {limit}")
        if view.get("total_rows") != part.get("row_count"):
            problems.append(f"{part.get('name')}: total_rows {view.get('total_rows')} vs row_count {part.get('row_count')}")
        run.texts.append((f"{seen.label}.{part.get('name')}.notice", str(view.get("notice") or "")))
    f.check("results.rows", not problems, f"{seen.label}: {len(parts)} tables", f"{seen.label}: {'; '.join(problems)}")
    run.texts.append((f"{seen.label}.notice", str(mr.get("notice") or "")))
