"""A GA4 Data API (v1beta, v1alpha funnels) and Admin API fake on googlefakes.FakeServer.

Speaks the REST JSON the official clients send and parse (field names and paths taken from
google/analytics/data_v1beta and admin_v1beta/v1alpha: types/*.py and transports/rest_base.py).
Reports are computed from fact rows (group by, filters, order, offset/limit paging capped at
``page_size``, TOTAL aggregations), so tests check real arithmetic. User metrics' TOTAL is
de-duplicated (not the sum of rows), like GA4's.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from googlefakes.server import FakeServer, Request, google_error

INTEGER, FLOAT, CURRENCY, SECONDS = "TYPE_INTEGER", "TYPE_FLOAT", "TYPE_CURRENCY", "TYPE_SECONDS"
BASE_METRICS = {
    "sessions": INTEGER, "totalUsers": INTEGER, "newUsers": INTEGER, "activeUsers": INTEGER, "eventCount": INTEGER,
    "keyEvents": FLOAT, "engagedSessions": INTEGER, "totalRevenue": CURRENCY, "purchaseRevenue": CURRENCY,
    "ecommercePurchases": INTEGER, "screenPageViews": INTEGER, "userEngagementDuration": SECONDS,
}
DERIVED_METRICS = {"engagementRate": FLOAT, "bounceRate": FLOAT, "averageSessionDuration": SECONDS,
                   "sessionKeyEventRate": FLOAT}
USER_METRICS = {"totalUsers", "newUsers", "activeUsers"}
DIMENSIONS = ["date", "dateHour", "sessionDefaultChannelGroup", "firstUserDefaultChannelGroup", "defaultChannelGroup",
              "sessionSourceMedium", "deviceCategory", "country", "eventName", "landingPage", "pagePath", "contentGroup",
              "itemName"]
ITEM_SCOPED = {"itemName"}
SESSION_ONLY_METRICS = {"sessions", "engagedSessions", "engagementRate", "bounceRate", "averageSessionDuration"}
RESERVED = re.compile(r"^(date_range_|RESERVED_)")
# The REST transport sends enums as integers (json_format use_integers_for_enums); Google accepts both forms.
MATCH_TYPES = {1: "EXACT", 2: "BEGINS_WITH", 3: "ENDS_WITH", 4: "CONTAINS", 5: "FULL_REGEXP", 6: "PARTIAL_REGEXP"}
OPERATIONS = {1: "EQUAL", 2: "LESS_THAN", 3: "LESS_THAN_OR_EQUAL", 4: "GREATER_THAN", 5: "GREATER_THAN_OR_EQUAL"}
AGGREGATIONS = {1: "TOTAL", 4: "COUNT", 5: "MINIMUM", 6: "MAXIMUM"}


def enum(value: Any, table: dict[int, str]) -> str:
    """An enum field as its name, whether the client sent the name or the number."""
    return table.get(value, str(value)) if isinstance(value, int) else str(value)


@dataclass
class Property:
    id: str
    display_name: str
    account_id: str
    account_name: str
    time_zone: str = "Europe/Madrid"
    currency: str = "EUR"
    facts: list[dict[str, Any]] = field(default_factory=list)
    realtime: list[dict[str, Any]] = field(default_factory=list)
    journeys: list[list[dict[str, str]]] = field(default_factory=list)
    key_events: list[dict[str, Any]] = field(default_factory=list)
    custom_dimensions: list[dict[str, Any]] = field(default_factory=list)
    custom_metrics: list[dict[str, Any]] = field(default_factory=list)
    calculated_metrics: list[dict[str, Any]] = field(default_factory=list)
    channel_groups: list[dict[str, Any]] = field(default_factory=list)
    allowed: set[str] | None = None  # identities that may read it (None = everyone)
    thresholded: bool = False
    other_row: bool = False
    sampled: tuple[int, int] | None = None


class GA4Fake:
    """Routes of the Data and Admin APIs on a FakeServer; ``properties`` holds the data."""

    def __init__(self, server: FakeServer, today: dt.date | None = None, page_size: int = 10_000):
        self.server = server
        self.today = today or dt.date.today()
        self.page_size = page_size
        self.properties: dict[str, Property] = {}
        self.tokens_used: dict[str, int] = {}
        self._grouped: dict[str, Any] = {}
        s = server
        s.route("POST", r"/v1beta/properties/(\d+):runReport", self.run_report)
        s.route("POST", r"/v1beta/properties/(\d+):runRealtimeReport", self.run_realtime)
        s.route("POST", r"/v1beta/properties/(\d+):checkCompatibility", self.check_compatibility)
        s.route("GET", r"/v1beta/properties/(\d+)/metadata", self.metadata)
        s.route("POST", r"/v1alpha/properties/(\d+):runFunnelReport", self.run_funnel)
        s.route("GET", r"/v1beta/accountSummaries", self.account_summaries)
        s.route("GET", r"/v1beta/properties/(\d+)", self.get_property)
        s.route("GET", r"/v1beta/properties/(\d+)/dataRetentionSettings", self.retention)
        s.route("GET", r"/v1alpha/properties/(\d+)/attributionSettings", self.attribution)
        s.route("GET", r"/v1beta/properties/(\d+)/keyEvents", self._lister("keyEvents", "key_events"))
        s.route("GET", r"/v1beta/properties/(\d+)/customDimensions", self._lister("customDimensions", "custom_dimensions"))
        s.route("GET", r"/v1beta/properties/(\d+)/customMetrics", self._lister("customMetrics", "custom_metrics"))
        s.route("GET", r"/v1alpha/properties/(\d+)/calculatedMetrics", self._lister("calculatedMetrics", "calculated_metrics"))
        s.route("GET", r"/v1alpha/properties/(\d+)/channelGroups", self._lister("channelGroups", "channel_groups"))

    # ---------------------------------------------------------------- helpers
    def add(self, prop: Property) -> Property:
        self.properties[prop.id] = prop
        return prop

    def _prop(self, req: Request) -> tuple[Property | None, tuple[int, Any] | None]:
        pid = req.match.group(1) if req.match else ""
        prop = self.properties.get(pid)
        if prop is None:
            return None, (404, google_error(404, f"Property properties/{pid} not found."))
        if prop.allowed is not None and req.identity not in prop.allowed:
            return None, (403, google_error(403, "User does not have sufficient permissions for this property. "
                                                 "To learn more about Property ID, see https://developers.google.com/analytics/devguides/reporting/data/v1/property-id."))
        return prop, None

    def metric_names(self, prop: Property) -> dict[str, str]:
        out = {**BASE_METRICS, **DERIVED_METRICS}
        for cm in prop.custom_metrics:
            out[f"customEvent:{cm['parameterName']}"] = "TYPE_STANDARD" if cm.get("measurementUnit", "STANDARD") == "STANDARD" else CURRENCY
        for calc in prop.calculated_metrics:
            out[f"calcMetric:{calc['calculatedMetricId']}"] = FLOAT
        return out

    def dimension_names(self, prop: Property) -> list[str]:
        scopes = {"EVENT": "customEvent", "USER": "customUser", "ITEM": "customItem"}
        return DIMENSIONS + [f"{scopes[cd['scope']]}:{cd['parameterName']}" for cd in prop.custom_dimensions]

    def _metric_type(self, prop: Property, name: str) -> str | None:
        table = self.metric_names(prop)
        if name in table:
            return table[name]
        if name.startswith("keyEvents:"):
            return FLOAT
        return None

    def resolve(self, value: str) -> dt.date:
        if value == "today":
            return self.today
        if value == "yesterday":
            return self.today - dt.timedelta(days=1)
        m = re.fullmatch(r"(\d+)daysAgo", value)
        if m:
            return self.today - dt.timedelta(days=int(m.group(1)))
        return dt.date.fromisoformat(value)

    # ---------------------------------------------------------------- filters
    def _match(self, expr: dict[str, Any] | None, row: dict[str, Any], values: dict[str, Any] | None = None) -> bool:
        if not expr:
            return True
        if "andGroup" in expr:
            return all(self._match(e, row, values) for e in expr["andGroup"].get("expressions", []))
        if "orGroup" in expr:
            return any(self._match(e, row, values) for e in expr["orGroup"].get("expressions", []))
        if "notExpression" in expr:
            return not self._match(expr["notExpression"], row, values)
        flt = expr["filter"]
        name = flt["fieldName"]
        if "numericFilter" in flt or "betweenFilter" in flt:
            v = float((values or {}).get(name, 0))
            if "betweenFilter" in flt:
                b = flt["betweenFilter"]
                return _num(b["fromValue"]) <= v <= _num(b["toValue"])
            nf = flt["numericFilter"]
            x = _num(nf["value"])
            return {"EQUAL": v == x, "LESS_THAN": v < x, "LESS_THAN_OR_EQUAL": v <= x, "GREATER_THAN": v > x,
                    "GREATER_THAN_OR_EQUAL": v >= x}[enum(nf["operation"], OPERATIONS)]
        value = str(row.get(name, "(not set)"))
        if "inListFilter" in flt:
            lf = flt["inListFilter"]
            case = lf.get("caseSensitive", False)
            return (value if case else value.lower()) in [v if case else v.lower() for v in lf.get("values", [])]
        sf = flt["stringFilter"]
        case, target, mt = sf.get("caseSensitive", False), sf.get("value", ""), enum(sf.get("matchType", "EXACT"), MATCH_TYPES)
        a, b = (value, target) if case else (value.lower(), target.lower())
        if mt == "EXACT":
            return a == b
        if mt == "BEGINS_WITH":
            return a.startswith(b)
        if mt == "ENDS_WITH":
            return a.endswith(b)
        if mt == "CONTAINS":
            return b in a
        flags = 0 if case else re.I
        if mt == "FULL_REGEXP":
            return re.fullmatch(target, value, flags) is not None
        return re.search(target, value, flags) is not None

    # ---------------------------------------------------------------- reports
    def _validate(self, prop: Property, dims: list[str], mets: list[str]) -> tuple[int, Any] | None:
        for m in mets:
            if self._metric_type(prop, m) is None:
                return 400, google_error(400, f"Field {m} is not a valid metric. For a list of valid dimensions and metrics, "
                                              "see https://developers.google.com/analytics/devguides/reporting/data/v1/api-schema ")
        valid_dims = self.dimension_names(prop) + ["minutesAgo", "unifiedScreenName"]
        for d in dims:
            if d not in valid_dims:
                return 400, google_error(400, f"Field {d} is not a valid dimension. For a list of valid dimensions and "
                                              "metrics, see https://developers.google.com/analytics/devguides/reporting/data/v1/api-schema ")
        if ITEM_SCOPED & set(dims) and SESSION_ONLY_METRICS & set(mets):
            bad = sorted(SESSION_ONLY_METRICS & set(mets))[0]
            return 400, google_error(400, f"Please remove {bad} to make the request compatible. The request's dimensions & "
                                          "metrics are incompatible. To learn more, see https://ga-dev-tools.web.app/ga4/dimensions-metrics-explorer/")
        return None

    def _metric_value(self, name: str, sums: dict[str, float]) -> float:
        if name in sums:
            return sums[name]
        sessions = sums.get("sessions", 0) or 0
        if name == "engagementRate":
            return sums.get("engagedSessions", 0) / sessions if sessions else 0.0
        if name == "bounceRate":
            return 1 - sums.get("engagedSessions", 0) / sessions if sessions else 0.0
        if name == "averageSessionDuration":
            return sums.get("userEngagementDuration", 0) / sessions if sessions else 0.0
        if name == "sessionKeyEventRate":
            return min(1.0, sums.get("keyEvents", 0) / sessions) if sessions else 0.0
        if name.startswith("calcMetric:"):
            return sums.get("totalRevenue", 0) / sessions if sessions else 0.0
        return 0.0

    @staticmethod
    def _fmt(value: float, mtype: str) -> str:
        if mtype == INTEGER:
            return str(int(round(value)))
        text = repr(float(value))
        return text[:-2] if text.endswith(".0") else text

    def _aggregate(self, prop: Property, facts: list[dict[str, Any]], body: dict[str, Any], ranges: list[tuple[str, Any]]
                   ) -> tuple[list[str], list[str], list[tuple[list[str], list[float]]], list[tuple[str, dict[str, float]]]]:
        dims = [d["name"] for d in body.get("dimensions", [])]
        mets = [m["name"] for m in body.get("metrics", [])]
        needed = set(BASE_METRICS)
        groups: dict[tuple[str, ...], dict[str, float]] = {}
        totals: list[tuple[str, dict[str, float]]] = []
        for label, test in ranges:
            tot: dict[str, float] = {}
            for fact in facts:
                if not test(fact) or not self._match(body.get("dimensionFilter"), fact):
                    continue
                key = tuple(str(fact.get(d, "(not set)")) for d in dims) + ((label,) if len(ranges) > 1 else ())
                acc = groups.setdefault(key, {})
                for m in needed:
                    acc[m] = acc.get(m, 0) + fact.get(m, 0)
                    tot[m] = tot.get(m, 0) + fact.get(m, 0)
                for m in mets:
                    if m.startswith("keyEvents:"):
                        inc = fact.get("keyEvents", 0) if fact.get("eventName") == m.split(":", 1)[1] else 0
                        acc[m] = acc.get(m, 0) + inc
                        tot[m] = tot.get(m, 0) + inc
                    elif m.startswith("customEvent:"):
                        acc[m] = acc.get(m, 0) + fact.get(m, 0)
                        tot[m] = tot.get(m, 0) + fact.get(m, 0)
            for m in USER_METRICS:  # GA4 de-duplicates users across rows: the total is not the sum
                if m in tot:
                    tot[m] = float(int(tot[m] * 0.85))
            totals.append((label, tot))
        out_dims = dims + (["dateRange"] if len(ranges) > 1 else [])
        rows = []
        for key, sums in groups.items():
            values = {m: self._metric_value(m, sums) for m in mets}
            if not body.get("keepEmptyRows") and all(v == 0 for v in values.values()):
                continue
            if not self._match(body.get("metricFilter"), {}, values):
                continue
            rows.append((list(key), [values[m] for m in mets]))
        for ob in reversed(body.get("orderBys", [])):
            desc = ob.get("desc", False)
            if "metric" in ob:
                i = mets.index(ob["metric"]["metricName"])
                rows.sort(key=lambda r, i=i: r[1][i], reverse=desc)
            else:
                i = out_dims.index(ob["dimension"]["dimensionName"])
                rows.sort(key=lambda r, i=i: r[0][i], reverse=desc)
        return out_dims, mets, rows, [(label, {m: self._metric_value(m, t) for m in mets}) for label, t in totals]

    def _quota(self, prop: Property, cost: int) -> dict[str, Any]:
        used = self.tokens_used.get(prop.id, 0) + cost
        self.tokens_used[prop.id] = used
        return {"tokensPerDay": {"consumed": cost, "remaining": 200000 - used},
                "tokensPerHour": {"consumed": cost, "remaining": 40000 - used},
                "concurrentRequests": {"consumed": 0, "remaining": 10},
                "serverErrorsPerProjectPerHour": {"consumed": 0, "remaining": 10},
                "potentiallyThresholdedRequestsPerHour": {"consumed": 0, "remaining": 120},
                "tokensPerProjectPerHour": {"consumed": cost, "remaining": 14000 - used}}

    def run_report(self, req: Request) -> tuple[int, Any]:
        prop, err = self._prop(req)
        if err:
            return err
        body = req.body or {}
        dims = [d["name"] for d in body.get("dimensions", [])]
        mets = [m["name"] for m in body.get("metrics", [])]
        bad = self._validate(prop, dims, mets)
        if bad:
            return bad
        import json

        cache_key = prop.id + json.dumps({k: v for k, v in body.items() if k not in ("offset", "limit", "metricAggregations",
                                                                                     "returnPropertyQuota")}, sort_keys=True)
        if cache_key not in self._grouped:  # paging re-asks the same report: group once
            ranges = []
            for i, r in enumerate(body.get("dateRanges", [])):
                start, end = self.resolve(r["startDate"]), self.resolve(r["endDate"])
                lo, hi = start.strftime("%Y%m%d"), end.strftime("%Y%m%d")
                ranges.append((r.get("name") or f"date_range_{i}", lambda f, lo=lo, hi=hi: lo <= f["date"] <= hi))
            self._grouped = {cache_key: self._aggregate(prop, prop.facts, body, ranges)}
        out_dims, mets, rows, totals = self._grouped[cache_key]
        offset = int(body.get("offset", 0) or 0)
        limit = min(int(body.get("limit", 10_000) or 10_000), self.page_size)
        page = rows[offset: offset + limit]
        types = [self._metric_type(prop, m) for m in mets]
        resp: dict[str, Any] = {
            "dimensionHeaders": [{"name": d} for d in out_dims],
            "metricHeaders": [{"name": m, "type": t} for m, t in zip(mets, types, strict=True)],
            "rows": [{"dimensionValues": [{"value": v} for v in dv],
                      "metricValues": [{"value": self._fmt(v, t)} for v, t in zip(mv, types, strict=True)]} for dv, mv in page],
            "rowCount": len(rows),
            # Like GA4, a requested currencyCode is the one the response reports (values are not converted here).
            "metadata": {"currencyCode": body.get("currencyCode") or prop.currency, "timeZone": prop.time_zone},
            "kind": "analyticsData#runReport",
        }
        if not page:
            resp.pop("rows")
        if prop.thresholded:
            resp["metadata"]["subjectToThresholding"] = True
        if prop.other_row:
            resp["metadata"]["dataLossFromOtherRow"] = True
        if prop.sampled:
            resp["metadata"]["samplingMetadatas"] = [{"samplesReadCount": str(prop.sampled[0]), "samplingSpaceSize": str(prop.sampled[1])}]
        if "TOTAL" in [enum(a, AGGREGATIONS) for a in body.get("metricAggregations", [])]:
            resp["totals"] = [{"dimensionValues": [{"value": "RESERVED_TOTAL"} for _ in out_dims[: len(out_dims) - (1 if len(totals) > 1 else 0)]]
                               + ([{"value": label}] if len(totals) > 1 else []),
                               "metricValues": [{"value": self._fmt(t[m], ty)} for m, ty in zip(mets, types, strict=True)]}
                              for label, t in totals]
        if body.get("returnPropertyQuota"):
            resp["propertyQuota"] = self._quota(prop, 1 + len(page) // 10_000)
        return 200, resp

    def run_realtime(self, req: Request) -> tuple[int, Any]:
        prop, err = self._prop(req)
        if err:
            return err
        body = req.body or {}
        dims = [d["name"] for d in body.get("dimensions", [])]
        mets = [m["name"] for m in body.get("metrics", [])]
        bad = self._validate(prop, dims, mets)
        if bad:
            return bad
        ranges = [(r.get("name") or f"date_range_{i}",
                   lambda f, r=r: int(r.get("endMinutesAgo", 0)) <= f["minutesAgo"] <= int(r.get("startMinutesAgo", 29)))
                  for i, r in enumerate(body.get("minuteRanges") or [{}])]
        out_dims, mets, rows, totals = self._aggregate(prop, prop.realtime, body, ranges)
        rows = rows[: int(body.get("limit", 10_000) or 10_000)]
        types = [self._metric_type(prop, m) for m in mets]
        resp = {"dimensionHeaders": [{"name": d} for d in out_dims],
                "metricHeaders": [{"name": m, "type": t} for m, t in zip(mets, types, strict=True)],
                "rows": [{"dimensionValues": [{"value": v} for v in dv],
                          "metricValues": [{"value": self._fmt(v, t)} for v, t in zip(mv, types, strict=True)]} for dv, mv in rows],
                "rowCount": len(rows), "kind": "analyticsData#runRealtimeReport"}
        if "TOTAL" in [enum(a, AGGREGATIONS) for a in body.get("metricAggregations", [])]:
            resp["totals"] = [{"dimensionValues": [{"value": "RESERVED_TOTAL"} for _ in out_dims],
                               "metricValues": [{"value": self._fmt(t[m], ty)} for m, ty in zip(mets, types, strict=True)]}
                              for _label, t in totals]
        if body.get("returnPropertyQuota"):
            resp["propertyQuota"] = self._quota(prop, 1)
        return 200, resp

    def check_compatibility(self, req: Request) -> tuple[int, Any]:
        prop, err = self._prop(req)
        if err:
            return err
        body = req.body or {}
        dims = [d["name"] for d in body.get("dimensions", [])]
        mets = [m["name"] for m in body.get("metrics", [])]
        clash_d = set(dims) & ITEM_SCOPED if SESSION_ONLY_METRICS & set(mets) else set()
        clash_m = set(mets) & SESSION_ONLY_METRICS if ITEM_SCOPED & set(dims) else set()
        return 200, {
            "dimensionCompatibilities": [{"dimensionMetadata": {"apiName": d, "uiName": d},
                                          "compatibility": "INCOMPATIBLE" if d in clash_d else "COMPATIBLE"} for d in dims],
            "metricCompatibilities": [{"metricMetadata": {"apiName": m, "uiName": m, "type": self._metric_type(prop, m) or FLOAT},
                                       "compatibility": "INCOMPATIBLE" if m in clash_m else "COMPATIBLE"} for m in mets],
        }

    def metadata(self, req: Request) -> tuple[int, Any]:
        prop, err = self._prop(req)
        if err:
            return err
        descriptions = {"sessions": "The number of sessions that began on your site or app.",
                        "totalUsers": "The number of distinct users who have logged at least one event.",
                        "ecommercePurchases": "The number of times users completed a purchase.",
                        "sessionDefaultChannelGroup": "The session's default channel group."}
        custom_dims = {f"custom{cd['scope'].title()}:{cd['parameterName']}": cd for cd in prop.custom_dimensions}
        dims = [{"apiName": d, "uiName": custom_dims[d]["displayName"] if d in custom_dims else d,
                 "description": descriptions.get(d, f"The {d} dimension."), "category": "Custom" if d in custom_dims else "General",
                 **({"customDefinition": True} if d in custom_dims else {})} for d in self.dimension_names(prop)]
        mets = [{"apiName": m, "uiName": m, "description": descriptions.get(m, f"The {m} metric."), "type": t,
                 "category": "Custom" if ":" in m else "General", **({"customDefinition": True} if ":" in m else {})}
                for m, t in self.metric_names(prop).items()]
        return 200, {"name": f"properties/{prop.id}/metadata", "dimensions": dims, "metrics": mets}

    def run_funnel(self, req: Request) -> tuple[int, Any]:
        prop, err = self._prop(req)
        if err:
            return err
        funnel = (req.body or {}).get("funnel", {})
        steps = funnel.get("steps", [])
        is_open = funnel.get("isOpenFunnel", False)
        reached = [0] * len(steps)
        for journey in prop.journeys:
            pos = 0
            started = False
            for k, step in enumerate(steps):
                found = None
                for j in range(pos, len(journey)):
                    if self._step_matches(step.get("filterExpression", {}), journey[j]):
                        found = j
                        break
                    if step.get("isDirectlyFollowedBy") and started:
                        break
                if found is None:
                    if not is_open or started:
                        break
                    continue
                reached[k] += 1
                started = True
                pos = found + 1
        rows = []
        for k, step in enumerate(steps):
            users = reached[k]
            nxt = reached[k + 1] if k + 1 < len(steps) else None
            completion = (nxt / users if users else 0.0) if nxt is not None else 0.0
            abandon = (users - nxt) if nxt is not None else 0
            rows.append({"dimensionValues": [{"value": f"{k + 1}. {step.get('name', '')}"}],
                         "metricValues": [{"value": str(users)}, {"value": repr(completion)}, {"value": str(abandon)},
                                          {"value": repr((abandon / users) if users and nxt is not None else 0.0)}]})
        table = {"dimensionHeaders": [{"name": "funnelStepName"}],
                 "metricHeaders": [{"name": "activeUsers", "type": INTEGER}, {"name": "funnelStepCompletionRate", "type": FLOAT},
                                   {"name": "funnelStepAbandonments", "type": INTEGER},
                                   {"name": "funnelStepAbandonmentRate", "type": FLOAT}],
                 "rows": rows, "metadata": {}}
        resp = {"funnelTable": table, "funnelVisualization": {"dimensionHeaders": [], "metricHeaders": [], "rows": []},
                "kind": "analyticsData#runFunnelReport"}
        if (req.body or {}).get("returnPropertyQuota"):
            resp["propertyQuota"] = self._quota(prop, 2)
        return 200, resp

    @staticmethod
    def _step_matches(expr: dict[str, Any], hit: dict[str, str]) -> bool:
        if "funnelEventFilter" in expr:
            return hit.get("event_name") == expr["funnelEventFilter"].get("eventName")
        if "funnelFieldFilter" in expr:
            ff = expr["funnelFieldFilter"]
            value = hit.get("page_path", "") if ff.get("fieldName") == "pagePath" else hit.get(ff.get("fieldName", ""), "")
            sf = ff.get("stringFilter", {})
            mt, target = enum(sf.get("matchType", "EXACT"), MATCH_TYPES), sf.get("value", "")
            return {"EXACT": value == target, "BEGINS_WITH": value.startswith(target), "CONTAINS": target in value,
                    "FULL_REGEXP": re.fullmatch(target, value) is not None,
                    "PARTIAL_REGEXP": re.search(target, value) is not None}.get(mt, False)
        if "andGroup" in expr:
            return all(GA4Fake._step_matches(e, hit) for e in expr["andGroup"].get("expressions", []))
        return False

    # ---------------------------------------------------------------- admin
    def account_summaries(self, req: Request) -> tuple[int, Any]:
        accounts: dict[str, dict[str, Any]] = {}
        for p in self.properties.values():
            if p.allowed is not None and req.identity not in p.allowed:
                continue
            acc = accounts.setdefault(p.account_id, {"name": f"accountSummaries/{p.account_id}", "account": f"accounts/{p.account_id}",
                                                     "displayName": p.account_name, "propertySummaries": []})
            acc["propertySummaries"].append({"property": f"properties/{p.id}", "displayName": p.display_name,
                                             "propertyType": "PROPERTY_TYPE_ORDINARY", "parent": f"accounts/{p.account_id}"})
        items = list(accounts.values())
        size = int((req.query.get("pageSize") or ["200"])[0])
        start = int((req.query.get("pageToken") or ["0"])[0])
        page = items[start: start + size]
        out: dict[str, Any] = {"accountSummaries": page}
        if start + size < len(items):
            out["nextPageToken"] = str(start + size)
        return 200, out

    def get_property(self, req: Request) -> tuple[int, Any]:
        prop, err = self._prop(req)
        if err:
            return err
        return 200, {"name": f"properties/{prop.id}", "propertyType": "PROPERTY_TYPE_ORDINARY", "parent": f"accounts/{prop.account_id}",
                     "displayName": prop.display_name, "industryCategory": "SHOPPING", "timeZone": prop.time_zone,
                     "currencyCode": prop.currency, "serviceLevel": "GOOGLE_ANALYTICS_STANDARD", "account": f"accounts/{prop.account_id}",
                     "createTime": "2021-03-01T10:00:00Z"}

    def retention(self, req: Request) -> tuple[int, Any]:
        prop, err = self._prop(req)
        if err:
            return err
        return 200, {"name": f"properties/{prop.id}/dataRetentionSettings", "eventDataRetention": "FOURTEEN_MONTHS",
                     "userDataRetention": "FOURTEEN_MONTHS", "resetUserDataOnNewActivity": True}

    def attribution(self, req: Request) -> tuple[int, Any]:
        prop, err = self._prop(req)
        if err:
            return err
        return 200, {"name": f"properties/{prop.id}/attributionSettings",
                     "acquisitionConversionEventLookbackWindow": "ACQUISITION_CONVERSION_EVENT_LOOKBACK_WINDOW_30_DAYS",
                     "otherConversionEventLookbackWindow": "OTHER_CONVERSION_EVENT_LOOKBACK_WINDOW_90_DAYS",
                     "reportingAttributionModel": "PAID_AND_ORGANIC_CHANNELS_DATA_DRIVEN",
                     "adsWebConversionDataExportScope": "NOT_SELECTED_YET"}

    def _lister(self, key: str, attr: str):
        def handler(req: Request) -> tuple[int, Any]:
            prop, err = self._prop(req)
            if err:
                return err
            items = getattr(prop, attr)
            return 200, ({key: items} if items else {})
        return handler


def _num(value: dict[str, Any]) -> float:
    return float(value.get("doubleValue", value.get("int64Value", 0)))
