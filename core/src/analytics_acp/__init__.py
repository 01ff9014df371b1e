"""analytics-acp: the Analytics Context Protocol (ACP 1.0) server profile on MCP.

Connectors import what they declare and return from here; the runtime does the protocol.
"""

from .access import check_access, effective_mode
from .arguments import (
    DateText,
    EndDate,
    NoArguments,
    NotBlank,
    SqlText,
    StartDate,
    TableRef,
    ToolArguments,
    WriteTableArguments,
)
from .constants import ACP_PROTOCOL_VERSION
from .context import CallContext, ClientInfo, HostTable
from .dates import resolve_date, resolve_window
from .declarations import (
    NO_RESOURCE,
    BlockSpec,
    CatalogEntry,
    ConnectorInfo,
    CostEstimate,
    CostSpec,
    Defaults,
    Extraction,
    Header,
    Info,
    ModelView,
    MultiExtraction,
    Resource,
    ResourceIdSpec,
    ResourceRef,
    TableOutput,
    ToolSpec,
)
from .errors import (
    AcpError,
    CostLimitExceeded,
    CredentialsInvalid,
    CredentialsMissing,
    HostTablesUnsupported,
    InvalidArguments,
    InvalidLimit,
    ReadOnlyViolation,
    ResourceNotFound,
    ResourceRequired,
    TableNotFound,
    TableTruncated,
    UnknownBlock,
    UpstreamError,
)
from .hookspecs import hookimpl
from .lazy import lazy

__version__ = "0.1.0"

__all__ = [
    "ACP_PROTOCOL_VERSION",
    "NO_RESOURCE",
    "AcpError",
    "BlockSpec",
    "CallContext",
    "CatalogEntry",
    "ClientInfo",
    "ConnectorInfo",
    "CostEstimate",
    "CostLimitExceeded",
    "CostSpec",
    "DateText",
    "CredentialsInvalid",
    "CredentialsMissing",
    "Defaults",
    "EndDate",
    "Extraction",
    "Header",
    "HostTable",
    "HostTablesUnsupported",
    "Info",
    "InvalidArguments",
    "InvalidLimit",
    "ModelView",
    "MultiExtraction",
    "NoArguments",
    "NotBlank",
    "ReadOnlyViolation",
    "Resource",
    "ResourceIdSpec",
    "ResourceNotFound",
    "ResourceRef",
    "ResourceRequired",
    "SqlText",
    "StartDate",
    "TableNotFound",
    "TableOutput",
    "TableRef",
    "TableTruncated",
    "ToolArguments",
    "ToolSpec",
    "UnknownBlock",
    "UpstreamError",
    "WriteTableArguments",
    "check_access",
    "effective_mode",
    "hookimpl",
    "lazy",
    "resolve_date",
    "resolve_window",
]
