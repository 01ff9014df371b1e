"""Normative notice phrases, exact wording (8.2, 8.2.1, 8.7)."""

from analytics_acp.results import extraction_notice, not_extracted_notice, table_notice, tables_notice
from analytics_acp.results.notices import NO_DATA, NO_ROWS, NOTHING_REQUESTED


def test_extraction_notices_8_2():
    assert extraction_notice(0, 0) == "The query returned no rows." == NO_ROWS
    assert extraction_notice(12, 12) == "Showing all 12 extracted rows."
    assert extraction_notice(254, 25) == "Showing 25 of 254 extracted rows."
    assert extraction_notice(254, 0) == "Showing 0 of 254 extracted rows."


def test_table_notices_8_2_1():
    assert table_notice("cookies", 0, 0, 0, 15) == "cookies: no rows."
    assert table_notice("ga4_hits", 14, 14, 8, 31) == "ga4_hits: 14 rows, 8 of 31 fields."  # spec example
    assert table_notice("cookies", 9, 9, 8, 15) == "cookies: 9 rows, 8 of 15 fields."
    assert table_notice("net", 120, 10, 8, 31) == "net: 10 of 120 rows, 8 of 31 fields."
    assert table_notice("seo", 3, 3, 5, 5) == "seo: 3 rows, all fields."
    assert table_notice("seo", 30, 25, 5, 5) == "seo: 25 of 30 rows, all fields."


def test_overall_and_catalog_notices():
    assert tables_notice([("ga4_hits", 14), ("datalayer", 22), ("cookies", 9)]) == (
        "Extracted 3 table(s) with data: ga4_hits (14), datalayer (22), cookies (9). "
        "You see a reduced view; the host stores every table in full."
    )
    assert tables_notice([("a", 0), ("b", 2)]) == (
        "Extracted 1 table(s) with data: b (2). You see a reduced view; the host stores every table in full."
    )
    assert tables_notice([("a", 0)]) == "No data was extracted." == NO_DATA
    assert not_extracted_notice({"cookies": 9}) == (
        "Not extracted because they were not requested: cookies (9). Ask for them with tables only if the analysis needs them."
    )
    assert not_extracted_notice({"cookies": 9, "network": 120}).startswith(
        "Not extracted because they were not requested: cookies (9), network (120). "
    )
    assert NOTHING_REQUESTED == "No tables were requested, so no data was extracted."
