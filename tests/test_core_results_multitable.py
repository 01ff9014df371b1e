"""Spec 8.2.1 multitable, model_view, 8.5 format "tables", 8.7 selection in the response."""

import orjson
import pytest
from analytics_acp.declarations import CatalogEntry, Header, ModelView, MultiExtraction, TableOutput
from analytics_acp.errors import UpstreamError
from analytics_acp.results import BuildSettings, build_multitable
from analytics_acp.tablefile import read_table_uri

CATALOG = [
    CatalogEntry("ga4_hits", "GA4 hits", group="GA4"),
    CatalogEntry("datalayer", "dataLayer pushes", group="dataLayer"),
    CatalogEntry("cookies", "Cookies", group="Storage"),
    CatalogEntry("seo", "SEO", group="SEO", required=True),
]


def hits(n, wide=31):
    for i in range(n):
        row = {f"f{j}": (f"v{i}-{j}" if j % 3 else None) for j in range(wide)}
        row.update({"en": "page_view", "dl": "https://shop.example.com/" + "p" * 200, "items": [{"id": i}], "empty": ""})
        yield row


def capture(**over):
    tables = [
        TableOutput("ga4_hits", hits(14), model_view=ModelView(["en", "nope", "dl", "items", "empty", "f1", "f2", "f3"]),
                    description="GA4 hits of shop.example.com."),
        TableOutput("datalayer", [{"event": f"e{i}", "n": i} for i in range(22)], dates=["2026-10-02"]),
        TableOutput("cookies", [{"name": f"c{i}"} for i in range(9)]),
        TableOutput("seo", []),
        TableOutput("console", [{"msg": "hi"}], title="Console"),  # not in the catalog: always delivered
    ]
    kw = dict(tables=tables, description="Browser capture of shop.example.com.", dates=["2026-10-01"],
              manifest={"pages": [{"page_index": 0, "url": "https://shop.example.com/"}]})
    kw.update(over)
    return MultiExtraction(**kw)


def settings(**kw):
    base = dict(row_limit=5, field_limit=4, catalog=CATALOG, selection=["ga4_hits", "datalayer", "seo"])
    base.update(kw)
    return BuildSettings(**base)


def test_multitable_shape_and_notices():
    built = build_multitable(capture(), settings())
    mr = built.model_response
    assert list(mr) == ["notice", "description", "dates", "manifest", "tables", "not_extracted"]
    assert mr["notice"] == (
        "Extracted 3 table(s) with data: ga4_hits (14), datalayer (22), console (1). You see a reduced view; the host "
        "stores every table in full. Not extracted because they were not requested: cookies (9). Ask for them with "
        "tables only if the analysis needs them."
    )
    assert mr["not_extracted"] == {"cookies": 9}
    assert list(mr["tables"]) == ["ga4_hits", "datalayer", "seo", "console"]  # tool order, empty ones included
    assert mr["manifest"]["pages"][0]["page_index"] == 0
    hits_t = mr["tables"]["ga4_hits"]
    assert list(hits_t) == ["title", "description", "dates", "notice", "total_rows", "returned_rows", "fields",
                            "fields_total", "rows"]
    assert hits_t["title"] == "GA4 hits" and hits_t["description"] == "GA4 hits of shop.example.com."
    assert hits_t["dates"] == ["2026-10-01"]
    # model_view: first field_limit fields of the view that exist, in view order; no row_limit (10 per table)
    assert hits_t["fields"] == ["en", "dl", "items", "empty"]
    assert hits_t["fields_total"] == 35
    assert hits_t["returned_rows"] == 10 and len(hits_t["rows"]) == 10 and hits_t["total_rows"] == 14
    assert hits_t["notice"] == "ga4_hits: 10 of 14 rows, 4 of 35 fields."
    row = hits_t["rows"][0]
    assert set(row) == {"en", "dl", "items"}  # "" and null cells omitted
    assert len(row["dl"]) == 80 and row["dl"].endswith("…")
    assert row["items"] == '[{"id":0}]'  # arrays serialized to JSON text first
    dl = mr["tables"]["datalayer"]
    assert dl["fields"] == ["event", "n"] and dl["fields_total"] == 2
    assert dl["returned_rows"] == 5 and dl["notice"] == "datalayer: 5 of 22 rows, all fields."
    assert dl["description"] == "Browser capture of shop.example.com." and dl["dates"] == ["2026-10-02"]
    assert mr["tables"]["seo"]["notice"] == "seo: no rows." and mr["tables"]["seo"]["rows"] == []
    assert mr["tables"]["console"]["notice"] == "console: 1 rows, all fields."
    assert mr["tables"]["console"]["title"] == "Console"
    assert built.messages[0] == mr["notice"] and "ga4_hits: 10 of 14 rows, 4 of 35 fields." in built.messages


def test_system_data_tables_and_system_info():
    built = build_multitable(capture(), settings())
    sd = built.system_data
    assert sd["format"] == "tables" and sd["headers"] == [] and sd["row_count"] == 14 + 22 + 0 + 1
    assert [t["name"] for t in sd["tables"]] == ["ga4_hits", "datalayer", "seo", "console"]  # cookies never here
    first = sd["tables"][0]
    assert list(first) == ["name", "title", "format", "row_count", "headers", "table", "model_view"]
    assert first["model_view"] == {"fields": ["en", "nope", "dl", "items", "empty", "f1", "f2", "f3"]}
    assert len(first["table"]) == 14 and len(first["table"][0]) == 35  # full table, every field
    assert "model_view" not in sd["tables"][1]
    assert "manifest" not in orjson.dumps(sd).decode()
    assert built.total_rows == 37 and built.returned_rows == 10 + 5 + 0 + 1 and built.truncated is True
    info = built.info_extra
    assert info["field_limit"] == 4 and info["tables_selected"] == ["ga4_hits", "datalayer", "seo"]
    assert info["tables"][0] == {"name": "ga4_hits", "title": "GA4 hits", "total_rows": 14, "returned_rows": 10,
                                 "fields_total": 35, "fields_shown": 4}
    assert info["tables"][3] == {"name": "console", "title": "Console", "total_rows": 1, "returned_rows": 1,
                                 "fields_total": 1, "fields_shown": 1}


def test_single_table_view_shows_50_rows_and_max_rows_caps():
    one = MultiExtraction(tables=[TableOutput("ga4_hits", hits(80), model_view=ModelView(["en"]))], description="d")
    t = build_multitable(one, settings(selection=None))
    assert t.model_response["tables"]["ga4_hits"]["returned_rows"] == 50
    capped = MultiExtraction(tables=[TableOutput("ga4_hits", hits(80), model_view=ModelView(["en"], max_rows=7))],
                             description="d")
    assert build_multitable(capped, settings(selection=None)).model_response["tables"]["ga4_hits"]["returned_rows"] == 7
    none = MultiExtraction(tables=[TableOutput("ga4_hits", hits(80), model_view=ModelView(["en", "dl"], max_rows=0))],
                           description="d")
    t = build_multitable(none, settings(selection=None)).model_response["tables"]["ga4_hits"]
    assert t["rows"] == [] and t["fields"] == ["en", "dl"] and t["notice"] == "ga4_hits: 0 of 80 rows, 2 of 35 fields."


def test_max_value_chars_and_row_limit_does_not_apply_to_views():
    view = ModelView(["dl", "en"], max_value_chars=10)
    out = MultiExtraction(tables=[TableOutput("ga4_hits", hits(3), model_view=view)], description="d")
    t = build_multitable(out, settings(row_limit=1, selection=None)).model_response["tables"]["ga4_hits"]
    assert t["returned_rows"] == 3
    assert t["rows"][0] == {"dl": "https://s…", "en": "page_view"}


def test_no_selection_means_no_catalog_everything_delivered():
    built = build_multitable(capture(), settings(selection=None))
    assert "not_extracted" not in built.model_response
    assert "tables_selected" not in built.info_extra
    assert list(built.model_response["tables"]) == ["ga4_hits", "datalayer", "cookies", "seo", "console"]


def test_empty_selection_nothing_requested():
    out = capture(tables=[TableOutput("cookies", [{"name": "a"}]), TableOutput("seo", [])], manifest={"steps": 1})
    built = build_multitable(out, settings(selection=["seo"]))  # [] + the required seo
    mr = built.model_response
    assert mr["notice"] == (
        "No tables were requested, so no data was extracted. Not extracted because they were not requested: "
        "cookies (1). Ask for them with tables only if the analysis needs them."
    )
    assert mr["manifest"] == {"steps": 1}  # manifest always delivered (8.7)
    assert list(mr["tables"]) == ["seo"]
    assert [t["name"] for t in built.system_data["tables"]] == ["seo"]


def test_no_data_notice():
    out = MultiExtraction(tables=[TableOutput("a", []), TableOutput("b", iter(()))], description="d")
    built = build_multitable(out, settings(selection=None))
    assert built.model_response["notice"] == "No data was extracted."
    assert built.total_rows == 0 and built.truncated is False


def test_multi_table_false_gives_primary_as_plain_extraction():
    out = capture()
    out.tables[1].primary = True
    built = build_multitable(out, settings(multi_table=False))
    mr = built.model_response
    assert mr["notice"] == "Showing 5 of 22 extracted rows."
    assert mr["columns"] == ["event", "n"] and mr["dates"] == ["2026-10-02"]
    assert mr["extra"] == {"manifest": out.manifest}
    assert built.system_data["format"] == "inline" and built.system_data["row_count"] == 22
    assert "tables" not in mr and built.info_extra == {"tables_selected": ["ga4_hits", "datalayer", "seo"]}


def test_multi_table_false_without_primary_takes_first_delivered():
    built = build_multitable(capture(), settings(multi_table=False, selection=["datalayer"]))
    assert built.model_response["columns"] == ["event", "n"]  # ga4_hits not selected, so datalayer is first
    built = build_multitable(capture(), settings(multi_table=False))
    assert built.model_response["total_rows"] == 14 and len(built.model_response["rows"]) == 5


def test_each_table_spills_separately(tmp_path):
    out = MultiExtraction(tables=[TableOutput("big", ({"i": i} for i in range(5000))), TableOutput("small", [{"i": 1}])],
                          description="d")
    built = build_multitable(out, settings(selection=None, inline_max_bytes=1000, tmp_dir=tmp_path, file_prefix="browser"))
    big, small = built.system_data["tables"]
    assert big["format"] == "file" and small["format"] == "inline"
    assert read_table_uri(big["table_uri"]) == [{"i": i} for i in range(5000)]
    assert len(built.files) == 1 and built.files[0].name.startswith("browser-")


def test_duplicate_table_names_rejected_and_files_cleaned(tmp_path):
    out = MultiExtraction(tables=[TableOutput("a", []), TableOutput("a", [])], description="d")
    with pytest.raises(UpstreamError, match="several tables named a"):
        build_multitable(out, settings(selection=None))

    def broken():
        yield {"x": 1}
        raise RuntimeError("page crashed")

    out = MultiExtraction(
        tables=[TableOutput("big", ({"i": i} for i in range(5000))), TableOutput("bad", broken())], description="d"
    )
    with pytest.raises(RuntimeError):
        build_multitable(out, settings(selection=None, inline_max_bytes=100, tmp_dir=tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_typed_headers_in_multitable():
    out = MultiExtraction(
        tables=[TableOutput("t", [("1", "x")], columns=["n", "s"], headers=[Header("n", "integer", role="dimension")])],
        description="d",
    )
    built = build_multitable(out, settings(selection=None))
    part = built.system_data["tables"][0]
    assert part["headers"] == [{"name": "n", "type": "integer", "role": "dimension"}, {"name": "s", "type": "string"}]
    assert part["table"] == [{"n": 1, "s": "x"}]
    assert "title" not in part
