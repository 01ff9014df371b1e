"""resource_id normalization (6.1), the listing (6.3), autocontext blocks (7), credentials scrubbing (10.1), the example db."""

from __future__ import annotations

import datetime as dt
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from analytics_acp import InvalidArguments, ResourceNotFound, ResourceRef
from analytics_acp_databases import blocks, resource_ids
from analytics_acp_databases.credentials import scrub, secrets_of
from analytics_acp_databases.example_db import CHANNELS, create_example_db, example_rows
from analytics_acp_databases.execute import call_target
from analytics_acp_databases.resource_ids import file_name, file_stem, split_parts
from analytics_acp_databases.resources import list_resources, normalize

END = dt.date(2026, 9, 28)  # the sales_db fixture's last day


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ventas", ResourceRef("ventas", "database")),
        (" ventas ", ResourceRef("ventas", "database")),
        ("ventas.ventas", ResourceRef("ventas.ventas", "table")),
        ("ventas/ventas", ResourceRef("ventas.ventas", "table")),
        ('"ventas"."ventas"', ResourceRef("ventas.ventas", "table")),
        ("`ventas`.`ventas`", ResourceRef("ventas.ventas", "table")),
        ("ventas.main.ventas", ResourceRef("ventas.ventas", "table")),
    ],
)
def test_sqlite_ids_normalize(raw, expected, sales_db, make_ctx):
    assert normalize(raw, make_ctx({"type": "sqlite", "path": sales_db})) == expected


@pytest.mark.parametrize(
    "path",
    ["/data/ventas.sqlite", "ventas.sqlite", "ventas", "/d/x.tar.gz", "/d/a..b", "/d/ventas.", "/d/.hidden", "/d/.x.db",
     "/d/ventas/", "/d/ventas/.", "/d/x.db/..", "d//x.db", "//x.db", "/", "", ".", "..", "C:\\d\\x.db", "~/x.db"],
)
def test_file_names_read_off_the_string_match_pathlib(path):
    # Issue 39 (bench 4b): the file's name and stem come from the string, without building a Path.
    assert (file_name(path), file_stem(path)) == (Path(path).name, Path(path).stem)


def test_a_parsed_id_is_reused_within_one_call_only(sales_db, make_ctx, monkeypatch):
    # Issue 39 (bench 4b): the tool reuses the Target its normalize_resource_id hook parsed from the same text.
    calls = []
    real = resource_ids.parse_target

    def counted(rid, credentials):
        calls.append(rid)
        return real(rid, credentials)

    monkeypatch.setattr(resource_ids, "parse_target", counted)
    credentials = {"type": "sqlite", "path": sales_db}
    ctx = make_ctx(credentials, "ventas")
    assert normalize("ventas", ctx) == ResourceRef("ventas", "database")
    assert call_target(ctx) is call_target(ctx) and calls == ["ventas"]
    other = make_ctx(credentials, "ventas")  # another call parses afresh
    assert call_target(other) == call_target(ctx) and call_target(other) is not call_target(ctx) and calls == ["ventas"] * 2
    other.credentials = {"type": "sqlite", "path": str(sales_db).replace("ventas", "otra")}  # other credentials: parsed afresh
    with pytest.raises(ResourceNotFound):
        call_target(other)
    assert calls == ["ventas"] * 3


def test_duckdb_ids_resolve_schema_or_table(duck_db, make_ctx):
    ctx = make_ctx({"type": "duckdb", "path": duck_db})
    assert normalize("tienda", ctx) == ResourceRef("tienda", "database")
    assert normalize("tienda.main", ctx) == ResourceRef("tienda.main", "schema")
    assert normalize("tienda.ventas", ctx) == ResourceRef("tienda.main.ventas", "table")  # a table of the default schema
    assert normalize("tienda/main/tipos", ctx) == ResourceRef("tienda.main.tipos", "table")


def test_bad_ids(sales_db, make_ctx):
    ctx = make_ctx({"type": "sqlite", "path": sales_db})
    with pytest.raises(ResourceNotFound) as info:
        normalize("otra", ctx)
    assert "'ventas'" in info.value.message
    with pytest.raises(InvalidArguments):
        normalize("ventas.a.b.c", ctx)
    with pytest.raises(ResourceNotFound):  # three parts are a valid shape, but SQLite has no schemas
        normalize("ventas.public.orders", ctx)
    with pytest.raises(InvalidArguments):
        normalize("ventas..x", ctx)
    assert split_parts('"my.db".public."T"', "postgresql") == ["my.db", "public", "T"]


def test_listing_sqlite_and_duckdb(sales_db, duck_db, make_ctx):
    ids = [r.resource_id for r in list_resources(make_ctx({"type": "sqlite", "path": sales_db}))]
    assert ids == ["ventas", "ventas.ventas"]
    listed = list_resources(make_ctx({"type": "duckdb", "path": duck_db}))
    ids = [r.resource_id for r in listed]
    assert ids[:2] == ["tienda", "tienda.main"] and "tienda.main.tipos" in ids and "tienda.main.ventas" in ids
    ventas = next(r for r in listed if r.resource_id == "tienda.main.ventas")
    assert ventas.group == "tienda.main" and "360 rows" in ventas.description


def test_blocks_on_the_example_database(sales_db, make_ctx):
    ctx = make_ctx({"type": "sqlite", "path": sales_db}, tool="autocontext")
    info = blocks.block_database_info("ventas", ctx)
    assert info["engine"] == "SQLite" and info["database"] == "ventas" and info["access_mode"] == "onlyRead"
    assert blocks.block_tables("ventas", ctx) == {"tables": [{"name": "ventas", "kind": "table", "rows_estimate": 360}]}
    schema = blocks.block_table_schemas("ventas.ventas", ctx)
    assert schema[0]["columns"][0] == {"name": "fecha", "type": "DATE", "nullable": False, "primary_key": True}
    assert blocks.block_date_ranges("ventas", ctx) == [{"table": "ventas", "column": "fecha", "min": "2026-07-01", "max": "2026-09-28"}]
    freq = blocks.block_frequent_values("ventas.ventas", ctx)
    assert [f["column"] for f in freq] == ["canal"] and {v["value"] for v in freq[0]["values"]} == set(CHANNELS)
    with pytest.raises(ResourceNotFound):
        blocks.block_table_schemas("ventas.nope", ctx)


def test_blocks_on_duckdb(duck_db, make_ctx):
    ctx = make_ctx({"type": "duckdb", "path": duck_db}, tool="autocontext")
    assert {"schema": "main", "tables": 2} in blocks.block_schemas("tienda", ctx)
    names = {t["name"] for t in blocks.block_tables("tienda.main", ctx)["tables"]}
    assert names == {"main.tipos", "main.ventas"}
    tipos = next(t for t in blocks.block_table_schemas("tienda", ctx) if t["table"] == "main.tipos")
    assert {c["name"]: c["type"] for c in tipos["columns"]}["ts"] == "TIMESTAMP WITH TIME ZONE"
    ranges = {(r["table"], r["column"]) for r in blocks.block_date_ranges("tienda", ctx)}
    assert ("main.ventas", "fecha") in ranges and ("main.tipos", "ts") in ranges


def test_blocks_never_write(sales_db, make_ctx):
    before = open(sales_db, "rb").read()
    ctx = make_ctx({"type": "sqlite", "path": sales_db}, tool="autocontext")
    for fn in (blocks.block_database_info, blocks.block_schemas, blocks.block_tables, blocks.block_table_schemas, blocks.block_date_ranges, blocks.block_frequent_values):
        fn("ventas", ctx)
    assert open(sales_db, "rb").read() == before


def test_scrub_removes_passwords_in_every_form():
    creds = {"type": "url", "url": "postgresql://bob:p%40ss!w0rd@db.example.com/shop"}
    text = "could not connect: postgresql://bob:p%40ss!w0rd@db.example.com/shop (password p@ss!w0rd) dsn password=p@ss!w0rd"
    out = scrub(text, creds)
    assert "p@ss" not in out and "p%40ss" not in out and "ss!w0rd" not in out
    assert scrub("mysql+pymysql://u:hunter22@h/db failed", None) == "mysql+pymysql://u:***@h/db failed"
    server = {"type": "server", "password": "S3cret pass"}
    assert "S3cret" not in scrub("auth failed for S3cret pass / S3cret+pass / S3cret%20pass", server)
    assert secrets_of({"type": "sqlite", "path": "/x.db"}) == []


def test_example_db_is_deterministic(tmp_path):
    a = create_example_db(tmp_path / "a.sqlite", end=END)
    b = create_example_db(tmp_path / "b.sqlite", end=END)
    rows = lambda p: sqlite3.connect(p).execute("SELECT * FROM ventas ORDER BY fecha, canal").fetchall()  # noqa: E731
    assert rows(a) == rows(b) and len(rows(a)) == 90 * len(CHANNELS)
    assert rows(a)[0][0] == "2026-07-01" and rows(a)[-1][0] == "2026-09-28"
    assert example_rows(10, END, seed=1) != example_rows(10, END, seed=2)
    assert not list(tmp_path.glob(".*.tmp"))


def test_example_db_cli(tmp_path):
    out = tmp_path / "data" / "ventas.sqlite"
    done = subprocess.run([sys.executable, "-m", "analytics_acp_databases.example_db", str(out), "--days", "30", "--end", "2026-01-31"], capture_output=True, text=True, check=True)
    assert "30 days" in done.stdout
    con = sqlite3.connect(out)
    assert con.execute("SELECT min(fecha), max(fecha), count(DISTINCT canal) FROM ventas").fetchone() == ("2026-01-02", "2026-01-31", 4)


def test_resource_id_parsing_does_not_import_the_catalog():
    # Issue 13 item 5: parsing ids never opens connections, so resource_ids imports no catalog/engines.
    import subprocess
    import sys

    code = ("import sys, analytics_acp_databases.resource_ids as r; r.split_parts('a.b', 'sqlite'); "
            "print(sorted(m for m in sys.modules if m.startswith('analytics_acp_databases.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['analytics_acp_databases.resource_ids']"
