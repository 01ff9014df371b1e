"""What the kit records and reports: checklist items, results and every response it saw."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["pass", "fail", "n/a"]

# item id -> (spec section, what 14.2 asks). Order = report order.
ITEMS: dict[str, tuple[str, str]] = {
    "handshake.capability": ("4.2", "capabilities.experimental.acp has version, defaults, credentials_schema, resource_id, autocontext, cost, extraction_tools"),
    "handshake.cost_limit": ("4.2", "defaults.cost_limit_usd is defined (0 when free) and row_limit is 0..5000"),
    "handshake.setup_schemas": ("5.5", "credentials_schema/config_schema are setup schemas: flat primitives or oneOf with const, titles, writeOnly secrets"),
    "handshake.resource_id": ("4.2", "resource_id has title/description/format/examples; extraction_tools[0] is a published extraction tool"),
    "handshake.english": ("5.5.0", "every published text (forms, tools, blocks, notices, errors) is English"),
    "handshake.plain_mcp": ("2.2", "a plain MCP client sees every tool, gets model_response as text and ACP_CREDENTIALS_MISSING where credentials are needed"),
    "config.configure": ("5.1", "acp/configure merges per session and answers effective without credentials"),
    "config.invalid_limit": ("5.1", "invalid limits are refused with -32016 and the session is unchanged"),
    "config.precedence": ("5.3", "_meta.acp > acp/configure > defaults"),
    "config.no_system_arguments": ("5.4", "limits and credentials inside arguments are rejected"),
    "resources.suggestions": ("6.3", "autocontext without resource_id: at most 25 resources, total_available, notice when partial"),
    "resources.examples": ("6.1", "the published resource_id examples are accepted"),
    "resources.default": ("6.1", "default_resource_id is used when the argument is missing; else ACP_RESOURCE_REQUIRED"),
    "resources.injection": ("6.2", "tools that need a resource publish an optional resource_id with resource_id.description; others do not"),
    "autocontext.data_without_credentials": ("7.2", "autocontext_data answers without credentials; block ids match ^[a-z][a-z0-9_]*$"),
    "autocontext.all_blocks": ("7.3", "autocontext with empty request_data returns every applicable block"),
    "autocontext.failing_block": ("7.3", "a failing block carries error and the call does not fail (warnings count it)"),
    "autocontext.unknown_block": ("7.3", "an unknown block gives ACP_UNKNOWN_BLOCK listing the valid ids"),
    "autocontext.cache_partition": ("7.4", "the autocontext cache is partitioned by credential identity"),
    "autocontext.on_first_call": ("7.5", "when on_first_call is declared, the delivery table of 7.5 is followed"),
    "results.content_text": ("8", "content[0].text is the model_response JSON on every response"),
    "results.system_info": ("8.4", "every response carries _meta.acp with a complete system_info"),
    "results.system_data": ("8.5", "extractions carry system_data with typed headers and the full table (inline or table_uri)"),
    "results.rows": ("8.2", "rows <= row_limit with exactly the columns; notice is the normative sentence"),
    "results.date_window": ("8.9", "date-window extractions declare x-acp-date (start+end or template)"),
    "results.table_ref": ("8.8", "table_ref arguments are marked; acp/read_table only with host_tables"),
    "results.access_mode": ("10.6", "a server that can write defaults to onlyRead and refuses with ACP_READ_ONLY_VIOLATION"),
    "results.skills": ("13.4", "skills/<name>/SKILL.md have English name/description and a valid folder name"),
    "cost.preflight": ("9.2", "paid calls are estimated first and refused with ACP_COST_LIMIT_EXCEEDED above the limit"),
    "cost.reported": ("9.2", "system_info reports cost_estimate_usd and cost_actual_usd"),
    "security.secrets": ("10.1", "credentials never appear in responses, errors, logs, caches or temp files"),
    "security.transport": ("10.5", "remote HTTP uses TLS and transport authentication"),
    "errors.typed": ("12.1", "tool errors are isError with _meta.acp.error {code, name, message} equal to content[0].text"),
    "errors.messages": ("12.1", "error messages tell the model what to do next"),
    "catalog.declared": ("8.7", "table_catalog entries are valid and defaults.tables is a subset"),
    "catalog.tables_argument": ("8.7", "covered extraction tools publish tables (enum of the catalog)"),
    "catalog.selection": ("8.7", "arguments.tables > _meta/configure > defaults.tables > all; unknown names rejected; required always in"),
    "catalog.delivery": ("8.7", "only selected tables are delivered; the others with data are listed in not_extracted"),
    "catalog.plain_host": ("8.2.1", "a client without multi_table receives only the primary table"),
    "calls.progress": ("MCP", "an extraction called with a progressToken sends notifications/progress with that token, increasing"),
    "calls.cancel": ("MCP", "after notifications/cancelled for a running call the server answers at once and the session keeps working"),
}


@dataclass
class CheckResult:
    """One checklist item: ``status`` is pass, fail or n/a; ``evidence`` says what was seen."""

    item: str
    status: Status
    evidence: str
    section: str = ""

    def __str__(self) -> str:
        return f"{self.status:4} {self.item} ({self.section}): {self.evidence}"


@dataclass
class Seen:
    """One tools/call the kit made and what came back."""

    tool: str
    arguments: dict[str, Any]
    meta: dict[str, Any] | None
    raw: dict[str, Any]
    result: Any  # analytics_acp.host.ToolResult
    label: str = ""
    kind: str | None = None  # published kind of the tool (extraction/info/...)
    tables: list[Any] | None = None  # loaded system_data tables (successful extractions)


@dataclass
class Findings:
    """Verdicts collected while probing: per item a list of failures and passes (evidence)."""

    fails: dict[str, list[str]] = field(default_factory=dict)
    passes: dict[str, list[str]] = field(default_factory=dict)
    na: dict[str, str] = field(default_factory=dict)

    def fail(self, item: str, why: str) -> None:
        """Record a failure of ``item``."""
        self.fails.setdefault(item, []).append(why)

    def ok(self, item: str, what: str) -> None:
        """Record evidence that ``item`` holds."""
        self.passes.setdefault(item, []).append(what)

    def not_applicable(self, item: str, why: str) -> None:
        """Mark ``item`` as not applicable (unless something else decided it)."""
        self.na.setdefault(item, why)

    def check(self, item: str, condition: bool, ok: str, fail: str) -> bool:
        """``ok`` or ``fail`` depending on ``condition``; returns it."""
        (self.ok if condition else self.fail)(item, ok if condition else fail)
        return condition

    def results(self) -> list[CheckResult]:
        """One CheckResult per item of ITEMS, in order."""
        out = []
        for item, (section, text) in ITEMS.items():
            if item in self.fails:
                out.append(CheckResult(item, "fail", "; ".join(_unique(self.fails[item]))[:1500], section))
            elif item in self.passes:
                out.append(CheckResult(item, "pass", "; ".join(_unique(self.passes[item]))[:600], section))
            else:
                out.append(CheckResult(item, "n/a", self.na.get(item, f"not exercised: {text}"), section))
        return out


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))
