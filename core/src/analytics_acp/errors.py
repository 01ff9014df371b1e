"""Typed ACP errors (spec 12.1). Every failure a tool can have is one of these.

Messages are written for the model (what to do next) and never contain secrets.
The runtime turns any other exception into ACP_UPSTREAM_ERROR.
"""

from __future__ import annotations

from typing import Any


class AcpError(Exception):
    """Base of the 13 ACP error types; ``code``/``name`` come from the table in 12.1."""

    code: int = -32018
    name: str = "ACP_UPSTREAM_ERROR"

    def __init__(self, message: str, data: dict[str, Any] | None = None):
        super().__init__(message)
        self.message = message
        self.data = data

    def payload(self) -> dict[str, Any]:
        """The ``{code, name, message, data?}`` object of 12.1."""
        out: dict[str, Any] = {"code": self.code, "name": self.name, "message": self.message}
        if self.data:
            out["data"] = self.data
        return out


class CostLimitExceeded(AcpError):
    code, name = -32010, "ACP_COST_LIMIT_EXCEEDED"


class CredentialsMissing(AcpError):
    code, name = -32011, "ACP_CREDENTIALS_MISSING"


class CredentialsInvalid(AcpError):
    code, name = -32012, "ACP_CREDENTIALS_INVALID"


class ResourceRequired(AcpError):
    code, name = -32013, "ACP_RESOURCE_REQUIRED"


class ResourceNotFound(AcpError):
    code, name = -32014, "ACP_RESOURCE_NOT_FOUND"


class UnknownBlock(AcpError):
    code, name = -32015, "ACP_UNKNOWN_BLOCK"


class InvalidLimit(AcpError):
    code, name = -32016, "ACP_INVALID_LIMIT"


class InvalidArguments(AcpError):
    code, name = -32017, "ACP_INVALID_ARGUMENTS"


class UpstreamError(AcpError):
    code, name = -32018, "ACP_UPSTREAM_ERROR"


class ReadOnlyViolation(AcpError):
    code, name = -32019, "ACP_READ_ONLY_VIOLATION"


class HostTablesUnsupported(AcpError):
    code, name = -32020, "ACP_HOST_TABLES_UNSUPPORTED"


class TableNotFound(AcpError):
    code, name = -32021, "ACP_TABLE_NOT_FOUND"


class TableTruncated(AcpError):
    code, name = -32022, "ACP_TABLE_TRUNCATED"


ERROR_TYPES: tuple[type[AcpError], ...] = (
    CostLimitExceeded,
    CredentialsMissing,
    CredentialsInvalid,
    ResourceRequired,
    ResourceNotFound,
    UnknownBlock,
    InvalidLimit,
    InvalidArguments,
    UpstreamError,
    ReadOnlyViolation,
    HostTablesUnsupported,
    TableNotFound,
    TableTruncated,
)

_BY_CODE = {cls.code: cls for cls in ERROR_TYPES}


def error_from_payload(payload: dict[str, Any]) -> AcpError:
    """Rebuild a typed error from ``{code, name, message, data?}`` (host side, read_table errors)."""
    cls = _BY_CODE.get(int(payload.get("code", -32018)), UpstreamError)
    err = cls(str(payload.get("message", "")), payload.get("data"))
    return err
