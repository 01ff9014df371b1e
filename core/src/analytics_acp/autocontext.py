"""Autocontext blocks (7.1-7.4): descriptors, fetch with per-block TTL cache and error isolation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cache import TTLCache
from .context import CallContext
from .declarations import BlockSpec, ConnectorInfo, ResourceRef
from .errors import AcpError, CredentialsMissing, UnknownBlock
from .invoke import call_maybe_async
from .logs import log_traceback


@dataclass
class FetchResult:
    """Blocks in the 7.3 shape, how many failed, and whether every block came from cache."""

    blocks: list[dict[str, Any]]
    failed: int
    cached: bool


def _applies(block: BlockSpec, level: str | None) -> bool:
    return block.applies_to is None or level is None or level in block.applies_to


class AutocontextEngine:
    """Serves autocontext and autocontext_data for one connector."""

    def __init__(self, info: ConnectorInfo, blocks: dict[str, BlockSpec], cache: TTLCache):
        self.info, self.blocks, self.cache = info, blocks, cache

    def descriptors(self, level: str | None) -> list[dict[str, Any]]:
        """autocontext_data (7.2): {id, description, applies_to?}, filtered by level when given."""
        out = []
        for block in self.blocks.values():
            if level is not None and not _applies(block, level):
                continue
            entry: dict[str, Any] = {"id": block.id, "description": block.description}
            if block.applies_to:
                entry["applies_to"] = list(block.applies_to)
            out.append(entry)
        return out

    def check_ids(self, ids: list[str]) -> None:
        """ACP_UNKNOWN_BLOCK (7.3) for an id that does not exist, listing the valid ones."""
        unknown = [i for i in ids if i not in self.blocks]
        if unknown:
            raise UnknownBlock(
                f"Unknown autocontext block(s) {', '.join(unknown)}. Valid blocks: {', '.join(self.blocks) or 'none'}."
            )

    async def fetch(self, resource: ResourceRef, request_data: list[str] | None, ctx: CallContext) -> FetchResult:
        """All applicable blocks (or the requested ones, in order); a failing block carries ``error``."""
        from .schemas import redact, secret_values

        if request_data:
            self.check_ids(request_data)
            chosen = [self.blocks[i] for i in request_data]
        else:
            chosen = [b for b in self.blocks.values() if _applies(b, resource.level)]
        out, failed, all_cached = [], 0, True
        for block in chosen:
            entry: dict[str, Any] = {"id": block.id, "description": block.description}
            if not _applies(block, resource.level):
                entry["error"] = (
                    f"This block applies to {', '.join(block.applies_to or [])} resources, not to {resource.level}."
                )
                failed += 1
                out.append(entry)
                continue
            key = ("autocontext", self.info.id, ctx.credential_identity, resource.id, block.id)
            hit = self.cache.get(key)
            if hit is not None:
                entry["data"] = hit["data"]
                out.append(entry)
                continue
            all_cached = False
            try:
                if block.needs_credentials:
                    ctx.require_credentials()
                data = await call_maybe_async(block.fetch, resource.id, ctx)
                self.cache.set(key, {"data": data}, block.ttl_s or self.info.cache_ttl_s)
                entry["data"] = data
            except CredentialsMissing as exc:
                entry["error"] = f"{exc.name}: {exc.message}"
                failed += 1
            except AcpError as exc:  # the typed name tells the model what kind of failure (12.1)
                entry["error"] = f"{exc.name}: " + redact(exc.message, secret_values(ctx.credentials, self.info.credentials_schema))
                failed += 1
            except Exception as exc:  # 7.3: a failing block never fails the call
                secrets = secret_values(ctx.credentials, self.info.credentials_schema)
                text = redact(f"{type(exc).__name__}: {exc}", secrets)
                entry["error"] = f"Failed: {text}"
                log_traceback(f"autocontext block {block.id}", exc, secrets)
                failed += 1
            out.append(entry)
        return FetchResult(blocks=out, failed=failed, cached=bool(chosen) and all_cached)

    @staticmethod
    def warning_for(failed: int) -> str | None:
        """The system_info warning counting failed blocks (7.3)."""
        return f"{failed} autocontext block(s) failed; see their error field." if failed else None
