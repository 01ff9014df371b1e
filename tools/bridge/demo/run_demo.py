"""`make demo`: the ACP Bridge session of spec 16.7, driven by a real MCP client.

1. Creates the spec's example database (90 days of sales by channel) in .demo/data/ventas.sqlite.
2. Writes .demo/sources.json with a `ventas` databases source and a `prevision` prediction source.
3. Starts the bridge as an MCP stdio server (the same command a desktop client would run) and
   drives it with the MCP Python SDK's ClientSession:
   - ventas__execute_sql with {{start_date}}/{{end_date}} (the model sees 25 of 90 rows),
   - prevision__forecast over the saved dataset by table_ref (holt_winters, horizon 14),
   - acp_query: monthly totals over all 90 rows.
   Each step prints what the model sees and where the datasets landed.
4. Prints the mcpServers snippet to use the same bridge from Claude Desktop, Cursor or VS Code.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import shutil
import sqlite3
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
# ACP_BRIDGE_DEMO_DIR lets the test run the demo without touching the user's .demo/.
DEMO = Path(os.environ.get("ACP_BRIDGE_DEMO_DIR") or REPO / ".demo").resolve()
END = dt.date(2026, 9, 28)  # the window of 16.7: 2026-07-01 .. 2026-09-28 (90 days)
START = END - dt.timedelta(days=89)
SQL = (
    "SELECT fecha, SUM(pedidos) AS pedidos, SUM(importe) AS importe FROM ventas "
    "WHERE fecha BETWEEN '{{start_date}}' AND '{{end_date}}' GROUP BY fecha ORDER BY fecha"
)
WIDTH = 100


def create_database(path: Path) -> None:
    """The databases connector's example DB when installed; otherwise the same table built here."""
    try:
        from analytics_acp_databases.example_db import create_example_db
    except ImportError:
        create_example_db = None
    if create_example_db is not None:
        create_example_db(path, days=90, end=END)
        return
    import random

    rng = random.Random(7)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp)
    conn.execute("CREATE TABLE ventas (fecha DATE, canal TEXT, pedidos INTEGER, importe REAL, PRIMARY KEY (fecha, canal))")
    for i in range(90):
        day = (START + dt.timedelta(days=i)).isoformat()
        for canal, base, ticket in (("online", 120, 54.0), ("tienda", 80, 38.5), ("marketplace", 45, 61.0)):
            pedidos = max(0, round(base * (1 + 0.002 * i) * rng.gauss(1.0, 0.06)))
            conn.execute("INSERT INTO ventas VALUES (?, ?, ?, ?)", (day, canal, pedidos, round(pedidos * ticket, 2)))
    conn.commit()
    conn.close()
    os.replace(tmp, path)


def write_sources(path: Path) -> None:
    """sources.json as in 16.3 (the database path is a projectPath reference)."""
    data = {
        "defaults": {"row_limit": 25},
        "sources": [
            {
                "id": "ventas",
                "acp": "databases",
                "label": "Ventas (SQLite)",
                "default_resource_id": "ventas",
                "credentials": {"type": "sqlite", "path": {"projectPath": "data/ventas.sqlite"}},
            },
            {"id": "prevision", "acp": "prediction", "label": "Previsión local"},
        ],
    }
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _rel(path: Path) -> Path:
    """A path as the user typed `make demo` from the repository sees it."""
    return path.relative_to(REPO) if path.is_relative_to(REPO) else path


def heading(text: str) -> None:
    print("\n" + "=" * WIDTH + f"\n{text}\n" + "=" * WIDTH)


def _compact(value, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def show_model_view(texts: list[str], max_rows: int = 5) -> None:
    """Print what the model receives: content[0] (one line per key, rows shortened) and the host notes."""
    try:
        view = json.loads(texts[0])
    except ValueError:
        view = None
    if not isinstance(view, dict):
        print(textwrap.indent(texts[0], "  "))
    else:
        print("  {")
        for key, value in view.items():
            if key == "rows" and isinstance(value, list):
                print(f'    "rows": [  ({len(value)} rows in the response)')
                for row in value[:max_rows]:
                    print(f"      {_compact(row, WIDTH * 2)}")
                if len(value) > max_rows:
                    print(f"      ... {len(value) - max_rows} more")
                print("    ]")
            elif key == "autocontext" and isinstance(value, list):
                print(f'    "autocontext": [{len(value)} block(s) describing the source, attached on the first call]')
            else:
                print(f'    "{key}": {_compact(value)}')
        print("  }")
    for note in texts[1:]:
        print("\n  host note to the model:")
        print(textwrap.indent(note, "    "))


def dataset_ids(texts: list[str]) -> list[str]:
    """The dataset ids named in the bridge's notes («id»)."""
    out = []
    for note in texts[1:]:
        for part in note.split("«")[1:]:
            candidate = part.split("»")[0]
            if candidate and candidate not in out and (DEMO / "acp-data" / f"{candidate}.csv").exists():
                out.append(candidate)
    return out


def show_dataset(dataset_id: str) -> None:
    csv_path = DEMO / "acp-data" / f"{dataset_id}.csv"
    meta = json.loads((DEMO / "acp-data" / f"{dataset_id}.meta.json").read_text(encoding="utf-8"))
    rel = _rel(csv_path)
    print(f"\n  dataset {dataset_id}: {rel} ({meta['row_count']} rows) + {rel.with_suffix('').with_suffix('.meta.json').name}")
    print("  columns: " + ", ".join(f"{h['name']}:{h['type']}" for h in meta["headers"]))


async def session(command: str, args: list[str]) -> int:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command, args=args, env=dict(os.environ), cwd=str(DEMO))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as client:
            init = await client.initialize()
            tools = (await client.list_tools()).tools
            heading(f"Connected to {init.server_info.name} over stdio: {len(tools)} tools")
            for tool in tools:
                print(f"  {tool.name:28} {(tool.description or '').splitlines()[0][:WIDTH - 32]}")

            async def call(name: str, arguments: dict) -> tuple[bool, list[str]]:
                result = await client.call_tool(name, arguments)
                texts = [c.text for c in result.content if getattr(c, "type", "") == "text"]
                return bool(result.is_error), texts

            heading("1. The model calls ventas__execute_sql with a date window")
            step1 = {"sql": SQL, "start_date": START.isoformat(), "end_date": END.isoformat()}
            print(f"  arguments: {_compact(step1, 400)}\n\n  the model sees:")
            failed, texts = await call("ventas__execute_sql", step1)
            show_model_view(texts)
            if failed:
                return 1
            ventas_ids = dataset_ids(texts)
            for dataset_id in ventas_ids:
                show_dataset(dataset_id)
            if not ventas_ids:
                print("  (no dataset was saved)")
                return 1
            ventas_id = ventas_ids[0]

            heading("2. The model forecasts the saved dataset by table_ref (no rows copied)")
            step2 = {"table_ref": ventas_id, "time_column": "fecha", "value_column": "pedidos", "horizon": 14, "method": "holt_winters"}
            print(f"  arguments: {_compact(step2, 400)}\n\n  the model sees:")
            failed, texts = await call("prevision__forecast", step2)
            show_model_view(texts, max_rows=3)
            if failed:
                return 1
            for dataset_id in dataset_ids(texts):
                show_dataset(dataset_id)

            heading("3. The model computes monthly totals over all 90 rows with acp_query")
            step3 = {"sql": f"SELECT strftime('%m', fecha) AS mes, SUM(pedidos) AS pedidos FROM {ventas_id} GROUP BY mes"}
            print(f"  arguments: {_compact(step3, 400)}\n\n  the model sees:")
            failed, texts = await call("acp_query", step3)
            show_model_view(texts)
            if failed:
                return 1
            for dataset_id in dataset_ids(texts):
                show_dataset(dataset_id)
            direct = sqlite3.connect(DEMO / "data" / "ventas.sqlite").execute(
                "SELECT strftime('%m', fecha), SUM(pedidos) FROM ventas WHERE fecha BETWEEN ? AND ? GROUP BY 1",
                (START.isoformat(), END.isoformat()),
            ).fetchall()
            got = [(r["mes"], r["pedidos"]) for r in json.loads(texts[0])["rows"]]
            same = sorted(got) == sorted(direct)
            print(f"\n  the same totals run directly on the database: {direct} ({'equal' if same else 'DIFFERENT'})")
            if not same:
                return 1
    return 0


def main() -> int:
    """Run the demo; returns the exit code."""
    sys.path.insert(0, str(REPO / "tools" / "bridge" / "src"))  # works even before the package is installed
    from analytics_acp_bridge.bridge import Paths
    from analytics_acp_bridge.cli import mcp_servers_config

    DEMO.mkdir(exist_ok=True)
    shutil.rmtree(DEMO / "acp-data", ignore_errors=True)  # a fresh acp-data for each demo run
    create_database(DEMO / "data" / "ventas.sqlite")
    write_sources(DEMO / "sources.json")
    heading("ACP Bridge demo (spec 16.7)")
    print("  The bridge is an MCP server that hosts ACP servers. This script plays the MCP client (the role of")
    print("  Claude Desktop, Cursor or VS Code) and makes the calls a model would make; each step shows what the")
    print("  model receives, while the full tables are saved as CSV datasets in the project's acp-data/ folder.\n")
    print(f"  example database: {_rel(DEMO / 'data' / 'ventas.sqlite')} (90 days of sales by channel)")
    print(f"  sources.json:     {_rel(DEMO / 'sources.json')} (ventas: databases, prevision: prediction)")
    paths = Paths(project=DEMO, sources=DEMO / "sources.json", root=DEMO)
    config = mcp_servers_config(paths)
    server = config["mcpServers"]["acp-bridge"]
    code = asyncio.run(session(server["command"], server["args"]))
    heading("Use the same bridge from Claude Desktop, Cursor or VS Code (mcpServers entry)")
    print(json.dumps(config, indent=2))
    print(f"\nDatasets are in {_rel(DEMO / 'acp-data')}/ ; the credentials never reached the model.")
    print("With your own data: set up your sources and connect your client on a local page:")
    print(f"  .venv/bin/analytics-acp ui --project {_rel(DEMO)}        (or any folder of yours)")
    print("or write a sources.json (tools/bridge/sources.example.json) and run")
    print("  .venv/bin/analytics-acp bridge --print-config --project /path/to/project --sources /path/to/sources.json")
    return code


if __name__ == "__main__":
    sys.exit(main())
