"""A fake BigQuery REST API (v2) on googlefakes.FakeServer, speaking the shapes google-cloud-bigquery sends and reads.

Shapes come from the client library (google/cloud/bigquery/client.py, job/query.py, _job_helpers.py,
table.py) and the v2 discovery document:

- ``POST /projects/{p}/jobs``: jobs.insert. A dry run (``configuration.dryRun``) answers DONE with
  ``statistics.query.{totalBytesProcessed, statementType, referencedTables, schema}``; a real query
  job answers RUNNING, then jobs.get answers DONE with totalBytesBilled / cacheHit. ``maximumBytesBilled``
  is enforced: a job that would bill more fails with errorResult ``bytesBilledLimitExceeded``.
- ``GET /projects/{p}/queries/{job}``: jobs.getQueryResults, paged with maxResults/pageToken.
- ``POST /projects/{p}/queries``: jobs.query (first page inline, then getQueryResults).
- ``GET /projects/{p}/jobs/{job}``, ``POST .../cancel``; projects, datasets and tables list/get.
- Load jobs: ``POST /upload/bigquery/v2/projects/{p}/jobs?uploadType=multipart|resumable`` (+ ``PUT`` of the
  resumable session), applying WRITE_APPEND / CREATE_IF_NEEDED / CREATE_NEVER to the fake's tables.

SQL is not executed: tests register what a query "is" (QuerySpec) by a substring of its text.
Errors use BigQuery's body: ``{"error": {"code", "message", "errors": [{"reason", "message", "domain"}], "status"}}``.
"""

from __future__ import annotations

import base64
import datetime as dt
import itertools
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from googlefakes.server import FakeServer, Request

V2 = "/bigquery/v2"
MIB10 = 10 * (1 << 20)
_ids = itertools.count(1)


def bq_error(status: int, message: str, reason: str) -> dict[str, Any]:
    """BigQuery's JSON error body."""
    names = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
             429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
    return {"error": {"code": status, "message": message, "errors": [{"message": message, "domain": "global", "reason": reason}],
                      "status": names.get(status, "UNKNOWN")}}


def wire(value: Any, field_: dict[str, Any]) -> Any:
    """A Python value as BigQuery's REST row JSON encodes it for ``field_`` (useInt64Timestamp)."""
    if value is None:
        return None
    if (field_.get("mode") or "").upper() == "REPEATED":
        return [{"v": wire(v, {**field_, "mode": "NULLABLE"})} for v in value]
    kind = field_.get("type", "STRING").upper()
    if kind in ("RECORD", "STRUCT"):
        return {"f": [{"v": wire(value.get(s["name"]), s)} for s in field_["fields"]]}
    if kind in ("BOOL", "BOOLEAN"):
        return "true" if value else "false"
    if kind == "TIMESTAMP" and isinstance(value, dt.datetime):
        delta = value.astimezone(dt.UTC) - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
        return str(delta // dt.timedelta(microseconds=1))
    if kind == "JSON" and not isinstance(value, str):
        return json.dumps(value)
    if kind == "BYTES" and isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, float):
        return repr(value)
    return str(value)


@dataclass
class QuerySpec:
    """What a registered query is: its dry-run facts and its result."""

    statement_type: str = "SELECT"
    total_bytes_processed: int = 0
    referenced_tables: list[str] = field(default_factory=list)  # "project.dataset.table"
    schema: list[dict[str, Any]] = field(default_factory=list)
    total_rows: int = 0
    row: Callable[[int], list[Any]] | None = None  # Python values of row i, encoded with ``wire``
    wire_row: Callable[[int], list[Any]] | None = None  # or wire values directly (fast path for big results)
    location: str = "US"
    cache_hit: bool = False
    syntax_error: str | None = None  # e.g. "Syntax error: Unexpected keyword FROM at [1:8]"
    fail_at_row: int | None = None  # getQueryResults of a page starting at or past this row fails (404 job gone)
    billed_bytes: int | None = None  # what the real job bills when it differs from the dry run's estimate
    cache_pages: bool = False  # keep each page's encoded rows (benchmarks: the fake should not be the bottleneck)
    runs_until_cancelled: bool = False  # the job stays RUNNING (jobComplete false) until jobs.cancel
    _encoded: dict[tuple[int, int], bytes] = field(default_factory=dict, repr=False)

    def encoded_page(self, start: int, size: int) -> bytes:
        """The page's rows as JSON bytes, cached when ``cache_pages``."""
        key = (start, size)
        found = self._encoded.get(key)
        if found is None:
            found = json.dumps(self.page(start, size)).encode()
            if self.cache_pages:
                self._encoded[key] = found
        return found

    def page(self, start: int, size: int) -> list[dict[str, Any]]:
        end = min(self.total_rows, start + size)
        if self.wire_row is not None:
            return [{"f": [{"v": v} for v in self.wire_row(i)]} for i in range(start, end)]
        assert self.row is not None
        return [{"f": [{"v": wire(v, f)} for v, f in zip(self.row(i), self.schema, strict=True)]} for i in range(start, end)]


@dataclass
class FakeTable:
    """A table the fake lists and describes (and load jobs append to)."""

    project: str
    dataset: str
    name: str
    schema: list[dict[str, Any]] = field(default_factory=list)
    num_rows: int = 0
    num_bytes: int = 0
    type: str = "TABLE"
    time_partitioning: dict[str, Any] | None = None
    clustering: list[str] | None = None
    description: str | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)  # rows appended by load jobs

    def ref(self) -> dict[str, str]:
        return {"projectId": self.project, "datasetId": self.dataset, "tableId": self.name}

    def list_item(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "bigquery#table", "id": f"{self.project}:{self.dataset}.{self.name}",
                               "tableReference": self.ref(), "type": self.type, "creationTime": "1758000000000"}
        if self.time_partitioning:
            out["timePartitioning"] = self.time_partitioning
        if self.clustering:
            out["clustering"] = {"fields": self.clustering}
        return out

    def resource(self, location: str) -> dict[str, Any]:
        out = {**self.list_item(), "schema": {"fields": self.schema}, "numRows": str(self.num_rows + len(self.rows)),
               "numBytes": str(self.num_bytes), "location": location}
        if self.description:
            out["description"] = self.description
        return out


class FakeBigQuery:
    """BigQuery v2 routes on a FakeServer; ``queries``, ``tables``, ``jobs`` hold the state."""

    def __init__(self, server: FakeServer):
        self.server = server
        self.projects: list[str] = []
        self.datasets: dict[tuple[str, str], dict[str, Any]] = {}  # (project, dataset) -> {location, description}
        self.tables: dict[tuple[str, str, str], FakeTable] = {}
        self.queries: list[tuple[str, QuerySpec]] = []
        self.jobs: dict[str, dict[str, Any]] = {}
        self.uploads: dict[str, dict[str, Any]] = {}
        self.page_size_default = 1000
        # hold_loads: a load job stays RUNNING (nothing created or appended) until jobs.cancel; load_held is set then
        self.hold_loads = False
        self.load_held = threading.Event()
        p = r"/projects/([^/]+)"
        r = server.route
        r("GET", f"{V2}/projects", self._projects)
        r("GET", f"{V2}{p}/datasets", self._datasets)
        r("GET", f"{V2}{p}/datasets/([^/]+)", self._dataset)
        r("GET", f"{V2}{p}/datasets/([^/]+)/tables", self._tables)
        r("GET", f"{V2}{p}/datasets/([^/]+)/tables/([^/]+)", self._table)
        r("POST", f"{V2}{p}/jobs", self._jobs_insert)
        r("GET", f"{V2}{p}/jobs/([^/]+)", self._jobs_get)
        r("POST", f"{V2}{p}/jobs/([^/]+)/cancel", self._jobs_cancel)
        r("GET", f"{V2}{p}/queries/([^/]+)", self._get_query_results)
        r("POST", f"{V2}{p}/queries", self._jobs_query)
        r("POST", f"/upload{V2}{p}/jobs", self._upload)
        r("PUT", f"/upload{V2}{p}/jobs", self._upload_put)

    # -- setup helpers
    def add_dataset(self, project: str, dataset: str, location: str = "US", description: str | None = None) -> None:
        if project not in self.projects:
            self.projects.append(project)
        self.datasets[(project, dataset)] = {"location": location, "description": description}

    def add_table(self, table: FakeTable) -> FakeTable:
        self.tables[(table.project, table.dataset, table.name)] = table
        return table

    def on_query(self, contains: str, spec: QuerySpec) -> QuerySpec:
        """Register ``spec`` for every query whose text contains ``contains`` (latest registration wins)."""
        self.queries.insert(0, (contains, spec))
        return spec

    def spec_for(self, sql: str) -> QuerySpec | None:
        return next((s for c, s in self.queries if c in sql), None)

    def sent_jobs(self, dry_run: bool | None = None) -> list[dict[str, Any]]:
        """Bodies of jobs.insert requests the client sent (optionally only dry runs / real jobs)."""
        out = []
        for req in self.server.requests_to(r"/bigquery/v2/projects/[^/]+/jobs$", "POST"):
            if isinstance(req.body, dict):
                dry = bool(req.body.get("configuration", {}).get("dryRun"))
                if dry_run is None or dry == dry_run:
                    out.append(req.body)
        return out

    # -- projects, datasets, tables
    def _projects(self, req: Request) -> tuple[int, Any]:
        items = [{"kind": "bigquery#project", "id": p, "numericId": str(1000 + i), "projectReference": {"projectId": p},
                  "friendlyName": p.replace("-", " ").title()} for i, p in enumerate(self.projects)]
        return 200, {"kind": "bigquery#projectList", "projects": items, "totalItems": len(items)}

    def _datasets(self, req: Request) -> tuple[int, Any]:
        project = req.match.group(1)  # type: ignore[union-attr]
        items = [{"kind": "bigquery#dataset", "id": f"{p}:{d}", "datasetReference": {"projectId": p, "datasetId": d},
                  "location": meta["location"]} for (p, d), meta in self.datasets.items() if p == project]
        return 200, {"kind": "bigquery#datasetList", "datasets": items}

    def _dataset(self, req: Request) -> tuple[int, Any]:
        project, dataset = req.match.groups()  # type: ignore[union-attr]
        meta = self.datasets.get((project, dataset))
        if meta is None:
            return 404, bq_error(404, f"Not found: Dataset {project}:{dataset}", "notFound")
        out = {"kind": "bigquery#dataset", "id": f"{project}:{dataset}", "datasetReference": {"projectId": project, "datasetId": dataset},
               "location": meta["location"]}
        if meta.get("description"):
            out["description"] = meta["description"]
        return 200, out

    def _tables(self, req: Request) -> tuple[int, Any]:
        project, dataset = req.match.groups()  # type: ignore[union-attr]
        if (project, dataset) not in self.datasets:
            return 404, bq_error(404, f"Not found: Dataset {project}:{dataset}", "notFound")
        items = [t.list_item() for (p, d, _), t in self.tables.items() if (p, d) == (project, dataset)]
        size = int(req.query.get("maxResults", ["50"])[0])
        start = int(req.query.get("pageToken", ["0"])[0])
        out: dict[str, Any] = {"kind": "bigquery#tableList", "tables": items[start:start + size], "totalItems": len(items)}
        if start + size < len(items):
            out["nextPageToken"] = str(start + size)
        return 200, out

    def _table(self, req: Request) -> tuple[int, Any]:
        project, dataset, name = req.match.groups()  # type: ignore[union-attr]
        table = self.tables.get((project, dataset, name))
        if table is None:
            return 404, bq_error(404, f"Not found: Table {project}:{dataset}.{name}", "notFound")
        return 200, table.resource(self.datasets[(project, dataset)]["location"])

    # -- query jobs
    def _location_error(self, spec: QuerySpec, asked: str | None) -> tuple[int, Any] | None:
        if asked and asked.upper() != spec.location.upper() and spec.referenced_tables:
            project, dataset, _ = spec.referenced_tables[0].split(".", 2)
            return 404, bq_error(404, f"Not found: Dataset {project}:{dataset} was not found in location {asked}", "notFound")
        return None

    def _jobs_insert(self, req: Request) -> tuple[int, Any]:
        project = req.match.group(1)  # type: ignore[union-attr]
        body = req.body if isinstance(req.body, dict) else {}
        config = body.get("configuration", {})
        ref = dict(body.get("jobReference") or {})
        ref.setdefault("projectId", project)
        ref.setdefault("jobId", f"job_fake{next(_ids)}")
        if "query" not in config:
            return 400, bq_error(400, "Only query jobs are accepted by jobs.insert in this fake; loads use /upload.", "invalid")
        sql = config["query"].get("query", "")
        spec = self.spec_for(sql)
        if spec is None:
            return 400, bq_error(400, "Unrecognized name: no fake result registered for the query [1:1]", "invalidQuery")
        if spec.syntax_error:
            return 400, bq_error(400, spec.syntax_error, "invalidQuery")
        wrong = self._location_error(spec, ref.get("location"))
        if wrong:
            return wrong
        ref["location"] = spec.location
        stats_query: dict[str, Any] = {
            "totalBytesProcessed": str(spec.total_bytes_processed), "statementType": spec.statement_type,
            "referencedTables": [dict(zip(("projectId", "datasetId", "tableId"), t.split(".", 2), strict=True)) for t in spec.referenced_tables],
        }
        if spec.schema and spec.statement_type == "SELECT":
            stats_query["schema"] = {"fields": spec.schema}
        job: dict[str, Any] = {"kind": "bigquery#job", "id": f"{project}:{spec.location}.{ref['jobId']}", "jobReference": ref,
                               "configuration": config, "statistics": {"creationTime": "1758000000000",
                                                                       "totalBytesProcessed": str(spec.total_bytes_processed),
                                                                       "query": stats_query}}
        if config.get("dryRun"):
            job["status"] = {"state": "DONE"}
            return 200, job
        billed = 0 if spec.cache_hit else spec.billed_bytes if spec.billed_bytes is not None else max(
            spec.total_bytes_processed, MIB10 * len(spec.referenced_tables))
        cap = config["query"].get("maximumBytesBilled")
        if cap is not None and billed > int(cap):
            need = -(-billed // MIB10) * MIB10
            err = {"reason": "bytesBilledLimitExceeded", "message": f"Query exceeded limit for bytes billed: {cap}. {need} or higher required."}
            job["status"] = {"state": "DONE", "errorResult": err, "errors": [err]}
        else:
            job["status"] = {"state": "RUNNING"}
            stats_query.update({"totalBytesBilled": str(billed), "cacheHit": spec.cache_hit})
        job["_spec"] = spec
        self.jobs[ref["jobId"]] = job
        return 200, _public(job)

    def _job(self, req: Request, index: int = 2) -> dict[str, Any] | None:
        return self.jobs.get(req.match.group(index))  # type: ignore[union-attr]

    def _jobs_get(self, req: Request) -> tuple[int, Any]:
        job = self._job(req)
        if job is None:
            return 404, bq_error(404, f"Not found: Job {req.match.group(1)}:{req.match.group(2)}", "notFound")  # type: ignore[union-attr]
        if job["status"]["state"] == "RUNNING" and not job.get("_held") and not job["_spec"].runs_until_cancelled:
            job["status"] = {"state": "DONE"}
            job["statistics"]["totalBytesBilled"] = job["statistics"]["query"].get("totalBytesBilled", "0")
        return 200, _public(job)

    def _jobs_cancel(self, req: Request) -> tuple[int, Any]:
        job = self._job(req)
        if job is None:
            return 404, bq_error(404, "Not found: Job", "notFound")
        job["status"] = {"state": "DONE", "errorResult": {"reason": "stopped", "message": "Job execution was cancelled: User requested cancellation"}}
        return 200, {"kind": "bigquery#jobCancelResponse", "job": _public(job)}

    def _results(self, job: dict[str, Any], req_query: dict[str, list[str]]) -> tuple[int, Any]:
        spec: QuerySpec = job["_spec"]
        err = job["status"].get("errorResult")
        if err:
            return 400, bq_error(400, err["message"], err["reason"])
        if spec.runs_until_cancelled and job["status"]["state"] == "RUNNING":
            return 200, {"kind": "bigquery#getQueryResultsResponse", "jobReference": job["jobReference"], "jobComplete": False}
        size = int(req_query.get("maxResults", [str(self.page_size_default)])[0])
        start = int(req_query.get("pageToken", req_query.get("startIndex", ["0"]))[0])
        if spec.fail_at_row is not None and start + size > spec.fail_at_row and size:
            return 404, bq_error(404, f"Not found: Job {job['jobReference']['projectId']}:{job['jobReference']['jobId']}", "notFound")
        out: dict[str, Any] = {"kind": "bigquery#getQueryResultsResponse", "jobReference": job["jobReference"],
                               "jobComplete": True, "totalRows": str(spec.total_rows), "schema": {"fields": spec.schema},
                               "totalBytesProcessed": str(spec.total_bytes_processed), "cacheHit": spec.cache_hit}
        if size and start + size < spec.total_rows:
            out["pageToken"] = str(start + size)
        if size and spec.cache_pages:
            return 200, json.dumps(out).encode()[:-1] + b', "rows": ' + spec.encoded_page(start, size) + b"}"
        if size:
            out["rows"] = spec.page(start, size)
        return 200, out

    def _get_query_results(self, req: Request) -> tuple[int, Any]:
        job = self._job(req)
        if job is None:
            return 404, bq_error(404, f"Not found: Job {req.match.group(2)}", "notFound")  # type: ignore[union-attr]
        return self._results(job, req.query)

    def _jobs_query(self, req: Request) -> tuple[int, Any]:
        project = req.match.group(1)  # type: ignore[union-attr]
        body = req.body if isinstance(req.body, dict) else {}
        insert = {"jobReference": {"projectId": project, "location": body.get("location")} if body.get("location") else {"projectId": project},
                  "configuration": {"query": {k: v for k, v in body.items() if k not in ("location", "maxResults", "requestId", "timeoutMs", "formatOptions", "dryRun", "labels")},
                                    **({"dryRun": True} if body.get("dryRun") else {}), **({"labels": body["labels"]} if body.get("labels") else {})}}
        fake = Request("POST", req.path, {}, {}, insert, match=req.match)
        status, job = self._jobs_insert(fake)
        if status != 200 or body.get("dryRun"):
            return status, job
        stored = self.jobs[job["jobReference"]["jobId"]]
        stored["status"] = stored["status"] if stored["status"].get("errorResult") else {"state": "DONE"}
        status, results = self._results(stored, {"maxResults": [str(body.get("maxResults", self.page_size_default))]})
        if status != 200:
            return status, results
        if isinstance(results, bytes):
            results = json.loads(results)
        results["kind"] = "bigquery#queryResponse"
        results["totalBytesBilled"] = stored["statistics"]["query"].get("totalBytesBilled", "0")
        return 200, results

    # -- load jobs (multipart and resumable uploads of load_table_from_json / load_table_from_file)
    def _upload(self, req: Request) -> tuple[Any, ...]:
        project = req.match.group(1)  # type: ignore[union-attr]
        kind = (req.query.get("uploadType") or [""])[0]
        if kind == "multipart":
            metadata, data = _split_multipart(header(req, "Content-Type"), req.body or "")
            return self._load(project, metadata, data)
        if kind == "resumable":
            upload_id = f"up{next(_ids)}"
            self.uploads[upload_id] = {"metadata": req.body, "data": ""}
            location = f"{self.server.url}/upload{V2}/projects/{project}/jobs?uploadType=resumable&upload_id={upload_id}"
            return 200, {}, {"Location": location}
        return 400, bq_error(400, f"uploadType {kind!r} not supported", "invalid")

    def _upload_put(self, req: Request) -> tuple[Any, ...]:
        project = req.match.group(1)  # type: ignore[union-attr]
        upload_id = (req.query.get("upload_id") or [""])[0]
        session = self.uploads.get(upload_id)
        if session is None:
            return 404, bq_error(404, "upload session not found", "notFound")
        start = re.match(r"bytes (\d+)-", header(req, "Content-Range"))
        if start:  # a chunk sent again (its first try timed out under load) replaces the bytes it covers
            session["data"] = session["data"].encode()[:int(start.group(1))].decode()
        session["data"] += req.body or ""
        total = header(req, "Content-Range").rpartition("/")[2] or "*"
        if total != "*" and len(session["data"].encode()) < int(total):
            return 308, {}, {"Range": f"bytes=0-{len(session['data'].encode()) - 1}"}
        return self._load(project, session["metadata"], session["data"])

    def _load(self, project: str, metadata: dict[str, Any], data: str) -> tuple[int, Any]:
        config = metadata.get("configuration", {})
        load = config.get("load", {})
        ref = dict(metadata.get("jobReference") or {})
        ref.setdefault("projectId", project)
        ref.setdefault("jobId", f"job_load{next(_ids)}")
        dest = load.get("destinationTable", {})
        key = (dest.get("projectId"), dest.get("datasetId"), dest.get("tableId"))
        job: dict[str, Any] = {"kind": "bigquery#job", "jobReference": ref, "configuration": config, "statistics": {"creationTime": "1758000000000"}}
        table = self.tables.get(key)  # type: ignore[arg-type]
        error = None
        if (key[0], key[1]) not in self.datasets:
            error = {"reason": "notFound", "message": f"Not found: Dataset {key[0]}:{key[1]}"}
        elif table is None and load.get("createDisposition") == "CREATE_NEVER":
            error = {"reason": "notFound", "message": f"Not found: Table {key[0]}:{key[1]}.{key[2]}"}
        elif load.get("writeDisposition") not in (None, "WRITE_APPEND", "WRITE_EMPTY"):
            error = {"reason": "invalid", "message": "this fake only appends"}
        rows = [json.loads(line) for line in data.splitlines() if line.strip()]
        if error is None and self.hold_loads:  # a load job is atomic: a held one has created and appended nothing
            job["status"] = {"state": "RUNNING"}
            job["_held"] = True
            self.jobs[ref["jobId"]] = job
            self.load_held.set()
            return 200, _public(job)
        if error is None:
            if table is None:
                table = self.add_table(FakeTable(key[0], key[1], key[2], schema=load.get("schema", {}).get("fields", [])))  # type: ignore[arg-type]
            names = {f["name"] for f in table.schema}
            unknown = sorted({k for r in rows for k in r} - names)
            if unknown:
                error = {"reason": "invalid", "message": f"Error while reading data, error message: JSON parsing error in row starting at position 0: No such field: {unknown[0]}."}
            else:
                table.rows.extend(rows)
        if error:
            job["status"] = {"state": "DONE", "errorResult": error, "errors": [error]}
        else:
            job["status"] = {"state": "DONE"}
            job["statistics"]["load"] = {"outputRows": str(len(rows)), "inputFiles": "1", "inputFileBytes": str(len(data.encode()))}
        self.jobs[ref["jobId"]] = job
        return 200, _public(job)


def header(req: Request, name: str) -> str:
    """A request header, case-insensitively (clients differ in how they spell them)."""
    return next((v for k, v in req.headers.items() if k.lower() == name.lower()), "")


def _public(job: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in job.items() if not k.startswith("_")}


def _split_multipart(content_type: str, body: str) -> tuple[dict[str, Any], str]:
    """(metadata JSON, data) of a multipart/related upload (metadata part first, as google-resumable-media sends it)."""
    boundary = re.search(r'boundary="?([^";]+)"?', content_type)
    assert boundary, content_type
    parts = [p for p in body.split(f"--{boundary.group(1)}") if p.strip() and p.strip() != "--"]
    payloads = [p.split("\r\n\r\n", 1)[1].rstrip("\r\n") for p in parts]
    return json.loads(payloads[0]), payloads[1]
