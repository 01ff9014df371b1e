"""The fake's resumable upload follows Content-Range: a chunk sent again (its first try timed out, as under a
loaded parallel run) replaces the bytes it covers instead of being appended twice (found by issue 25's runs:
"JSONDecodeError: Extra data" from test_a_big_table_goes_through_a_resumable_upload)."""

from __future__ import annotations

import json

import httpx


def test_a_resent_chunk_is_not_appended_twice(world):
    base = f"{world.url}/upload/bigquery/v2/projects/mi-proyecto/jobs"
    metadata = {"configuration": {"load": {"destinationTable": {"projectId": "mi-proyecto", "datasetId": "sandbox",
                                                                  "tableId": "resent"},
                                           "schema": {"fields": [{"name": "n", "type": "INTEGER"}]}}}}
    start = httpx.post(f"{base}?uploadType=resumable", json=metadata, timeout=10)
    session = start.headers["Location"]
    first, second = b'{"n": 1}\n{"n": 2}\n', b'{"n": 3}\n'
    total = len(first) + len(second)
    for _ in range(2):  # the same first chunk twice
        sent = httpx.put(session, content=first, headers={"Content-Range": f"bytes 0-{len(first) - 1}/{total}"}, timeout=10)
        assert sent.status_code == 308
    done = httpx.put(session, content=second, headers={"Content-Range": f"bytes {len(first)}-{total - 1}/{total}"}, timeout=10)
    assert done.status_code == 200, done.text
    assert json.loads(done.text)["statistics"]["load"]["outputRows"] == "3"
    assert world.bq.tables[("mi-proyecto", "sandbox", "resent")].rows == [{"n": 1}, {"n": 2}, {"n": 3}]
