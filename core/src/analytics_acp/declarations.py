"""What a connector declares and returns. Connectors never build protocol JSON:
they fill these objects and the core turns them into the ACP wire format.

- ``ConnectorInfo``: identity, defaults, setup schemas, resource_id, cost, catalog (spec 4.2).
- ``ToolSpec`` / ``BlockSpec``: tools and autocontext blocks (spec 7, 8).
- ``Extraction`` / ``MultiExtraction`` / ``Info``: what a tool run returns (spec 8).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .arguments import TYPED_ARGUMENTS_SINCE, NoArguments, ToolArguments, check_model
from .constants import ACP_DEFAULT_FIELD_LIMIT
from .lazy import LazyRef

if TYPE_CHECKING:  # pragma: no cover
    from .context import CallContext

ColumnType = Literal["string", "integer", "number", "boolean", "date", "datetime", "json"]
ColumnRole = Literal["dimension", "metric", "attribute"]


@dataclass
class Header:
    """A typed column (8.6). ``type`` is one of ``COLUMN_TYPES``."""

    name: str
    type: ColumnType = "string"
    role: ColumnRole | None = None
    description: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Wire form: ``{name, type, role?, description?}``."""
        out: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.role:
            out["role"] = self.role
        if self.description:
            out["description"] = self.description
        return out

    @classmethod
    def coerce(cls, value: Header | dict[str, Any] | str) -> Header:
        """Accept a Header, a ``{name, type, ...}`` dict or a bare column name."""
        if isinstance(value, Header):
            return value
        if isinstance(value, str):
            return cls(name=value)
        return cls(
            name=value["name"],
            type=value.get("type", "string"),
            role=value.get("role"),
            description=value.get("description"),
        )


@dataclass
class Defaults:
    """``capabilities.experimental.acp.defaults`` (4.2). cost_limit_usd is always set."""

    row_limit: int = 25
    cost_limit_usd: float = 0
    field_limit: int | None = None  # declare it only when the connector has model_view tables
    tables: list[str] | None = None  # only with a table_catalog; None = all, [] = none

    def to_json(self) -> dict[str, Any]:
        """Wire form of defaults."""
        out: dict[str, Any] = {"row_limit": self.row_limit, "cost_limit_usd": self.cost_limit_usd}
        if self.field_limit is not None:
            out["field_limit"] = self.field_limit
        if self.tables is not None:
            out["tables"] = list(self.tables)
        return out

    @property
    def effective_field_limit(self) -> int:
        """field_limit or the protocol default 20."""
        return self.field_limit if self.field_limit is not None else ACP_DEFAULT_FIELD_LIMIT


@dataclass
class ResourceIdSpec:
    """``resource_id`` metadata (4.2, 6). ``format="none"`` when no tool uses one (6.1)."""

    description: str
    format: str
    examples: list[str]
    title: str | None = None
    separators: list[str] | None = None
    levels: list[str] | None = None  # hierarchical sources (6.1), e.g. ["database", "schema", "table"]

    def to_json(self) -> dict[str, Any]:
        """Wire form (levels are not part of the capability; they travel in applies_to)."""
        out: dict[str, Any] = {"description": self.description, "format": self.format, "examples": list(self.examples)}
        if self.title:
            out["title"] = self.title
        if self.separators:
            out["separators"] = list(self.separators)
        return out


NO_RESOURCE = ResourceIdSpec(
    title="No remote resource",
    description="This server works on host tables only; it has no remote resource.",
    format="none",
    examples=[],
)


@dataclass
class CostSpec:
    """``cost`` of the capability (9.1)."""

    model: Literal["free", "per_query", "per_byte", "per_row"] = "free"
    description: str = "No monetary cost per call."

    def to_json(self) -> dict[str, Any]:
        """Wire form, always in USD."""
        return {"currency": "USD", "model": self.model, "description": self.description}


@dataclass
class CatalogEntry:
    """One table of ``table_catalog`` (8.7)."""

    name: str
    title: str
    description: str | None = None
    group: str | None = None
    required: bool = False
    tools: list[str] | None = None  # None = every extraction tool

    def to_json(self) -> dict[str, Any]:
        """Wire form."""
        out: dict[str, Any] = {"name": self.name, "title": self.title}
        for key in ("description", "group", "tools"):
            value = getattr(self, key)
            if value:
                out[key] = value
        if self.required:
            out["required"] = True
        return out


@dataclass
class ConnectorInfo:
    """A connector's declaration, returned by the ``connector_declaration`` hook.

    ``id`` is the serverInfo.name and acp.json id; ``name`` the human title.
    ``package_dir`` is the connector folder (README, skills/, icon) used by the build.
    """

    id: str
    name: str
    version: str
    description: str
    resource_id: ResourceIdSpec
    instructions: str = ""
    publisher: str = "analytics-acp"
    defaults: Defaults = field(default_factory=Defaults)
    credentials_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    config_schema: dict[str, Any] | None = None
    cost: CostSpec = field(default_factory=CostSpec)
    cache_ttl_s: int = 3600
    delivery: list[str] = field(default_factory=lambda: ["inject", "suggest", "on_first_call"])
    table_catalog: list[CatalogEntry] = field(default_factory=list)
    icon: str | None = None  # file name inside package_dir (svg/png/webp)
    package_dir: Path | None = None
    # Names of config keys holding 10.6 rule lists (JSON text), e.g. ["table_rules"].
    access_rule_keys: list[str] = field(default_factory=lambda: ["table_rules", "file_rules"])
    # How many autocontext blocks the engine fetches at once (7.3). 1 = one after the other; a connector whose
    # blocks are independent network calls (and thread-safe) raises it so one slow upstream is paid once.
    autocontext_concurrency: int = 1
    # The connector's tools and blocks, declared once here: the core registers them (no register_tools /
    # register_blocks hook needed; extension plugins still add theirs through those hooks).
    tools: list[ToolSpec] = field(default_factory=list, repr=False)
    blocks: list[BlockSpec] = field(default_factory=list, repr=False)
    # The connector's own offline check of a set-up, beyond its setup schemas (a key that must load, a file that
    # must exist): see ``SetupCheck``. The core runs it in acp/configure after the schemas, validate-only too.
    check_setup: SetupCheck | None = field(default=None, repr=False)


# ``check_setup(credentials, config)``: raise CredentialsInvalid (credentials) or InvalidArguments (config) with a
# message for a person (the full path tried, what to give instead), never a secret; return None when it holds.
# ``credentials`` is None when the set-up has none. It runs in a thread of its own, bounded (setup_check.SetupChecks),
# and MUST NOT use the network (a host calls it to validate a set-up offline, 5.1); it may be
# ``lazy("package.module:function")``.
SetupCheck = Callable[[dict[str, Any] | None, dict[str, Any]], None] | LazyRef


# A callable, or lazy("package.module:function") so the module doing the work (and its clients) loads on first call.
# It receives the tool's parsed argument model (a ToolArguments instance) and the call context.
ToolRun = Callable[[Any, "CallContext"], Any | Awaitable[Any]] | LazyRef



@dataclass
class ToolSpec:
    """A tool the connector publishes.

    ``arguments`` is the tool's argument model, a ``ToolArguments`` subclass (arguments.py): the core
    publishes its JSON schema as the tool's inputSchema (injecting ``resource_id`` and ``tables``, 6.2, 8.7,
    which the model never declares), validates and parses the model's arguments once, and calls
    ``run(parsed, ctx)`` with the typed object. Omit it for a tool without arguments (``NoArguments``).
    ``run`` may be sync (run in a worker thread together with result building, so a DB cursor stays on one
    thread) or async. Declare it as ``lazy("package.module:function")`` (lazy.py) to import that module on
    first call only; the argument model is imported at load (keep it in a light module).
    It returns an ``Extraction``/``MultiExtraction`` (kind extraction) or
    an ``Info``/plain JSON value (kind info), or raises an ``AcpError``.
    A hand-written ``input_schema`` dict (the form before typed arguments) is refused at load, naming the change.
    """

    name: str
    description: str
    run: ToolRun
    arguments: type[ToolArguments] = NoArguments
    kind: Literal["extraction", "info"] = "info"
    title: str | None = None
    needs_resource: bool = True  # core injects resource_id and resolves default_resource_id
    needs_credentials: bool = True  # core raises ACP_CREDENTIALS_MISSING before run
    multitable: bool = False  # returns MultiExtraction; catalog `tables` argument is injected
    paid: bool = False  # the estimate_cost hook runs before it (9.2)
    read_only_hint: bool = True  # MCP annotation readOnlyHint
    default: bool = False  # first of extraction_tools (the default tool, 4.2)
    # The form before typed arguments, kept only to refuse it by name (the published schema comes from ``arguments``:
    # ``tool.arguments.published_schema()``). A plain field, so ``dataclasses.replace`` copies a ToolSpec.
    input_schema: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.input_schema is not None:
            raise TypeError(
                f"ToolSpec(name={self.name!r}) declares input_schema by hand: declare `arguments=<a ToolArguments "
                f"model>` instead; the core publishes its schema and hands run() the parsed arguments "
                f"({TYPED_ARGUMENTS_SINCE}; see README, How to write one)."
            )
        check_model(self.name, self.arguments)


BlockFetch = Callable[[str, "CallContext"], Any | Awaitable[Any]] | LazyRef


@dataclass
class BlockSpec:
    """An autocontext block (7.1). ``fetch(resource_id, ctx)`` returns compact JSON; it may be a ``lazy(...)`` reference."""

    id: str
    description: str
    fetch: BlockFetch
    applies_to: list[str] | None = None  # resource levels; None = all
    ttl_s: int | None = None  # None = ConnectorInfo.cache_ttl_s
    needs_credentials: bool = True


@dataclass
class Resource:
    """One entry of the resource listing used for suggestions (6.3)."""

    resource_id: str
    name: str
    description: str | None = None
    group: str | None = None


@dataclass
class ResourceRef:
    """A normalized resource id and, for hierarchical sources, its level (6.1)."""

    id: str
    level: str | None = None


@dataclass
class CostEstimate:
    """What the ``estimate_cost`` hook returns (9.2).

    ``hint`` completes the model-facing message ("Narrow the query (<hint>) or ask
    the user to raise the limit."); ``data`` goes to the error data for the host.
    """

    usd: float
    hint: str = "a smaller request"
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class ModelView:
    """Field view of an event-like table (8.2.1)."""

    fields: list[str]
    max_value_chars: int | None = None
    max_rows: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Wire form of model_view."""
        out: dict[str, Any] = {"fields": list(self.fields)}
        if self.max_value_chars is not None:
            out["max_value_chars"] = self.max_value_chars
        if self.max_rows is not None:
            out["max_rows"] = self.max_rows
        return out


Rows = Iterable[dict[str, Any]]


@dataclass
class Extraction:
    """A single-table extraction result (8.2).

    ``rows`` may be any iterable (a generator streaming from a server-side cursor
    is fine: the core consumes it once). When ``columns`` is given, rows may be
    tuples/lists in that column order instead of dicts (cheaper for big tables).
    ``headers`` are declared types; missing columns are inferred (8.6).
    ``dates`` are resolved YYYY-MM-DD; None means "today's local date".
    ``source`` and ``extra`` may be zero-argument callables: the core calls each once, after it
    consumed every row, so a streamed extraction reports facts known only at its end (pages
    fetched, quota spent) without changing anything it already returned (``settled``).
    """

    rows: Iterable[Any]
    description: str
    headers: Sequence[Header | dict[str, Any]] | None = None
    columns: Sequence[str] | None = None
    title: str | None = None
    dates: list[str] | None = None
    totals: dict[str, Any] | None = None
    extra: Any = None
    warnings: list[str] = field(default_factory=list)
    source: dict[str, Any] | Callable[[], dict[str, Any] | None] | None = None
    cost_actual_usd: float | None = 0
    arguments: dict[str, Any] | None = None  # effective arguments (with defaults applied), for system_info
    cached: bool | None = None


def settled(value: Any) -> Any:
    """``value()`` for a late value (a zero-argument callable of ``Extraction.source``/``extra``), else ``value``."""
    return value() if callable(value) else value


@dataclass
class TableOutput:
    """One table of a multitable extraction (8.2.1, 8.5)."""

    name: str
    rows: Iterable[Any]
    title: str | None = None
    description: str | None = None
    headers: Sequence[Header | dict[str, Any]] | None = None
    columns: Sequence[str] | None = None
    dates: list[str] | None = None
    model_view: ModelView | None = None
    primary: bool = False


@dataclass
class MultiExtraction:
    """A multitable extraction (8.2.1). Tables not in the catalog are always delivered.

    Tables of the catalog that were not selected may be included (their row counts feed
    ``not_extracted``) or left out by the tool (then they are simply not reported).
    ``source`` may be a zero-argument callable, called after every table was consumed.
    """

    tables: list[TableOutput]
    description: str
    title: str | None = None
    dates: list[str] | None = None
    manifest: Any = None
    extra: Any = None
    warnings: list[str] = field(default_factory=list)
    source: dict[str, Any] | Callable[[], dict[str, Any] | None] | None = None
    cost_actual_usd: float | None = 0
    arguments: dict[str, Any] | None = None


@dataclass
class Info:
    """An info tool's result: free JSON for the model (8.3), optionally with warnings."""

    data: Any
    warnings: list[str] = field(default_factory=list)
    source: dict[str, Any] | None = None
    arguments: dict[str, Any] | None = None
    title: str | None = None
