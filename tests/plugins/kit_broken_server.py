"""The example connector served with one deliberate protocol defect, to prove the kit can fail.

Usage: ``python kit_broken_server.py <defect> [--port N]`` (stdio, or Streamable HTTP on 127.0.0.1:N). Defects:

- ``omit_cost_limit``: the capability's defaults lack cost_limit_usd (4.2).
- ``echo_secret``: system_info carries the api_key of _meta.acp.credentials (10.1).
- ``spanish_notice``: extraction notices are rewritten in Spanish (8.2, 5.5.0).
- ``no_fetched_at``: system_info lacks fetched_at (8.4).
- ``ignore_row_limit``: model_response.rows holds the full table (8.2, 9.3).
- ``log_secret``: the server writes the call's credentials to its log on stderr (10.1).
- ``sticky_row_limit``: a row_limit seen in _meta stays for every later call of the process,
  whatever its session (5.3: _meta is per call; a session that never configured uses defaults).
- ``no_first_call``: extractions never carry their on_first_call autocontext (7.5).
- ``no_progress``: calls run without the request's progress sender, so a client that sent a
  progressToken hears no notifications/progress (MCP; issue 28.4).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from analytics_acp import runtime as core_runtime
from analytics_acp.plugins import load_connector

DEFECTS = ("omit_cost_limit", "echo_secret", "spanish_notice", "no_fetched_at", "ignore_row_limit", "log_secret",
           "sticky_row_limit", "no_first_call", "no_progress")


def _edit_result(defect: str, result: dict[str, Any], meta: Any) -> dict[str, Any]:
    acp = (result.get("_meta") or {}).get("acp") or {}
    info = acp.get("system_info") or {}
    if defect == "echo_secret" and isinstance(meta, dict):
        key = (meta.get("credentials") or {}).get("api_key")
        if key:
            info["debug_api_key"] = key
    elif defect == "no_fetched_at":
        info.pop("fetched_at", None)
    elif defect == "no_first_call" and info.get("autocontext_attached"):
        model = json.loads(result["content"][0]["text"])
        model.pop("autocontext", None)
        info["autocontext_attached"] = False
        result["content"][0]["text"] = json.dumps(model)
    elif acp.get("kind") == "extraction" and defect in ("spanish_notice", "ignore_row_limit"):
        model = json.loads(result["content"][0]["text"])
        if defect == "spanish_notice" and "total_rows" in model:
            model["notice"] = f"Mostrando {model['returned_rows']} de {model['total_rows']} filas extraídas."
            info["messages"] = [model["notice"]]
        elif defect == "ignore_row_limit" and isinstance((acp.get("system_data") or {}).get("table"), list):
            model["rows"] = acp["system_data"]["table"]
            model["returned_rows"] = len(model["rows"])
        result["content"][0]["text"] = json.dumps(model)
    return result


def main(defect: str, port: int | None = None) -> None:
    """Serve the example connector with ``defect`` over stdio (or HTTP when ``port`` is given)."""
    if defect not in DEFECTS:
        raise SystemExit(f"unknown defect {defect!r}; one of {', '.join(DEFECTS)}")
    if defect == "omit_cost_limit":
        original = core_runtime.capability

        def capability(runtime: Any) -> dict[str, Any]:
            cap = original(runtime)
            cap["defaults"] = {k: v for k, v in cap["defaults"].items() if k != "cost_limit_usd"}
            return cap

        core_runtime.capability = capability
    core_runtime.configure_logging()
    acp = core_runtime.build_server(load_connector("example"))
    call = acp.runtime.call
    sticky: dict[str, Any] = {}

    async def broken_call(name, arguments, meta, *args, **kwargs):
        if defect == "sticky_row_limit" and isinstance(meta, dict):
            if "row_limit" in meta:
                sticky["row_limit"] = meta["row_limit"]
            elif "row_limit" in sticky:
                meta = {**meta, "row_limit": sticky["row_limit"]}
        if defect == "log_secret" and isinstance(meta, dict) and meta.get("credentials"):
            print(f"debug: {name} called with credentials {json.dumps(meta['credentials'])}", file=sys.stderr)
        if defect == "no_progress":
            kwargs["send_progress"] = None
        result = await call(name, arguments, meta, *args, **kwargs)
        return _edit_result(defect, result, meta)

    acp.runtime.call = broken_call
    if port is not None:
        from analytics_acp.http_app import serve_http

        serve_http(acp, host="127.0.0.1", port=port)
    else:
        anyio.run(core_runtime.serve_stdio, acp)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--port" else None)
