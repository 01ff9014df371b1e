"""The plugin loads lean (no SQLAlchemy/sqlglot/drivers at start-up) and declares what the spec asks."""

from __future__ import annotations

import json
import subprocess
import sys

from analytics_acp.plugins import load_connector

HEAVY = ("sqlalchemy", "sqlglot", "duckdb", "psycopg", "pymysql")


def test_plugin_import_and_load_stay_lean():
    code = (
        "import sys, json; from analytics_acp.plugins import load_connector; load_connector('databases'); "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_declaration():
    loaded = load_connector("databases")
    info = loaded.info
    assert info.id == "databases" and info.resource_id.levels == ["database", "schema", "table"]
    variants = {v["properties"]["type"]["const"]: v for v in info.credentials_schema["oneOf"]}
    assert set(variants) == {"sqlite", "duckdb", "server", "url"}
    assert variants["url"]["properties"]["url"]["writeOnly"] is True
    assert variants["server"]["properties"]["password"]["writeOnly"] is True
    config = info.config_schema["properties"]
    assert config["access_mode"]["default"] == "onlyRead" and config["table_rules"]["contentMediaType"] == "application/json"
    assert loaded.extraction_tools == ["execute_sql"]
    assert loaded.tools["insert_rows"].read_only_hint is False
    assert {b.id: b.applies_to for b in loaded.blocks.values()}["schemas"] == ["database"]
    assert all(b.ttl_s for b in loaded.blocks.values())
    assert (info.package_dir / "icon.svg").stat().st_size < 256 * 1024
    skill = (info.package_dir / "skills" / "sql-template-dates" / "SKILL.md").read_text()
    assert skill.startswith("---\nname: sql-template-dates\n")
