"""acp-data (16.6, 8.8.1): CSV + meta contents, ids, hand-dropped CSVs, resolver, atomic writes."""

import datetime as dt
import json

import pytest
from analytics_acp.errors import TableNotFound
from analytics_acp_bridge.store.datasets import META_FIELDS, DatasetStore, sql_safe_id

HEADERS = [{"name": "fecha", "type": "date"}, {"name": "pedidos", "type": "integer"}, {"name": "extra", "type": "json"},
           {"name": "texto", "type": "string"}, {"name": "ok", "type": "boolean"}, {"name": "importe", "type": "number"}]
ROWS = [
    {"fecha": "2026-07-01", "pedidos": 3, "extra": {"a": [1, "ñ"]}, "texto": 'dice "hola", adiós', "ok": True, "importe": 10.5},
    {"fecha": "2026-07-02", "pedidos": None, "extra": [1, 2], "texto": "dos\nlíneas", "ok": False, "importe": 7.0},
]


def test_bridge_store_csv_and_meta_exact(tmp_path):
    store = DatasetStore(tmp_path)
    moment = dt.datetime(2026, 10, 12, 8, 16, 30, tzinfo=dt.UTC)
    dataset_id = store.new_id("ventas", "execute_sql", moment=moment)
    local = moment.astimezone().strftime("%Y%m%d_%H%M%S")
    assert dataset_id == f"ventas_execute_sql_{local}"
    meta = {"origin": "acp", "source": "ventas", "acp": "databases", "tool": "execute_sql", "resource_id": "ventas",
            "arguments": {"sql": "SELECT 1"}, "title": "SQLite · ventas.sqlite", "description": "d", "dates": ["2026-07-01"]}
    assert store.write_dataset(dataset_id, HEADERS, iter(ROWS), meta) == 2
    raw = (tmp_path / "acp-data" / f"{dataset_id}.csv").read_bytes()
    assert raw.decode("utf-8") == (
        "fecha,pedidos,extra,texto,ok,importe\r\n"
        '2026-07-01,3,"{""a"":[1,""ñ""]}","dice ""hola"", adiós",true,10.5\r\n'
        '2026-07-02,,"[1,2]","dos\nlíneas",false,7.0\r\n'
    )
    stored = json.loads((tmp_path / "acp-data" / f"{dataset_id}.meta.json").read_text(encoding="utf-8"))
    assert tuple(stored) == META_FIELDS  # exactly the 16.6 fields, in order
    assert stored["row_count"] == 2 and stored["headers"] == HEADERS and stored["id"] == dataset_id
    assert stored["created_at"].endswith("Z") and len(stored["created_at"]) == 24
    # a second extraction in the same second never overwrites the first
    again = store.new_id("ventas", "execute_sql", moment=moment)
    assert again == f"{dataset_id}_2"
    assert sorted(p.name for p in (tmp_path / "acp-data").iterdir()) == [f"{dataset_id}.csv", f"{dataset_id}.meta.json"]
    # rows read back typed
    [dataset] = store.list()
    back = list(store.iter_records(dataset))
    assert back[0] == {"fecha": "2026-07-01", "pedidos": 3, "extra": {"a": [1, "ñ"]}, "texto": 'dice "hola", adiós', "ok": True, "importe": 10.5}
    assert back[1]["pedidos"] is None and back[1]["texto"] == "dos\nlíneas"


def test_bridge_store_ids_are_sql_safe():
    assert sql_safe_id("Mi-Fuente__Run Report") == "mi_fuente_run_report"
    assert sql_safe_id("2026 data") == "t_2026_data"
    assert sql_safe_id("select") == "select_csv"


def test_bridge_store_failed_write_leaves_nothing(tmp_path):
    store = DatasetStore(tmp_path)

    def rows():
        yield {"a": 1}
        raise RuntimeError("server went away")

    with pytest.raises(RuntimeError):
        store.write_dataset("t_1", [{"name": "a", "type": "integer"}], rows(), {"origin": "acp"})
    assert list((tmp_path / "acp-data").iterdir()) == []
    assert store.write_dataset("t_2", [{"name": "a"}], iter([]), {"origin": "acp"}) == 0  # empty tables are not stored
    assert list((tmp_path / "acp-data").iterdir()) == []


def test_bridge_store_hand_dropped_csv_inference(tmp_path):
    data = tmp_path / "acp-data"
    data.mkdir()
    (data / "Clientes 2026.csv").write_text(
        "cp,edad,saldo,activo,alta,visto,nombre,vacia\n"
        "08001,34,10.5,true,2026-01-02,2026-01-02T10:00:00Z,Ana,\n"
        "28013,41,-3,false,2026-02-03,2026-02-03 11:30:00,Luis,\n",
        encoding="utf-8",
    )
    store = DatasetStore(tmp_path)
    [dataset] = store.list()
    assert dataset.id == "clientes_2026" and dataset.meta["origin"] == "csv" and dataset.row_count == 2
    types = {h["name"]: h["type"] for h in dataset.headers}
    assert types == {"cp": "string", "edad": "integer", "saldo": "number", "activo": "boolean", "alta": "date",
                     "visto": "datetime", "nombre": "string", "vacia": "string"}
    assert next(store.iter_records(dataset))["cp"] == "08001"  # leading zeros stay text
    assert store.resolve("acp-data/Clientes 2026.csv").id == "clientes_2026"


def test_bridge_store_resolver_forms_and_traversal(tmp_path):
    store = DatasetStore(tmp_path)
    store.write_dataset("ds_one", [{"name": "a", "type": "integer"}], iter([{"a": 1}, {"a": 2}]), {"origin": "acp"})
    outside = tmp_path / "secret.csv"
    outside.write_text("a\n1\n", encoding="utf-8")
    (tmp_path / "acp-data" / "link.csv").symlink_to(outside)
    for ref in ("ds_one", "ds_one.csv", "acp-data/ds_one.csv", " DS_ONE "):
        assert store.resolve(ref).id == "ds_one"
    for ref in ("../secret.csv", "../secret", str(outside), "acp-data/../secret.csv", "acp-data/../acp-data/ds_one.csv",
                "/etc/passwd", "..\\secret.csv", "link", "link.csv", "", "SELECT * FROM ds_one", ".ds_one"):
        with pytest.raises(TableNotFound):
            store.resolve(ref)
    wire = store.table_wire("ds_one", tmp_path / "tmp", inline_max_bytes=1 << 20)
    assert wire == {"format": "inline", "row_count": 2, "headers": [{"name": "a", "type": "integer"}], "table": [{"a": 1}, {"a": 2}]}
    big = store.table_wire("ds_one", tmp_path / "tmp", inline_max_bytes=1)
    assert big["format"] == "file" and big["row_count"] == 2
    from urllib.parse import urlparse
    assert json.loads(open(urlparse(big["table_uri"]).path, encoding="utf-8").read()) == [{"a": 1}, {"a": 2}]


def test_bridge_store_save_file_never_overwrites(tmp_path):
    store = DatasetStore(tmp_path)
    src = tmp_path / "deck.pdf"
    src.write_bytes(b"%PDF-1.4 x")
    assert store.save_file(src) == ("acp-data/files/deck.pdf", 10)
    assert store.save_file(src) == ("acp-data/files/deck_2.pdf", 10)
