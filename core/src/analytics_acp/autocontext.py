"""Autocontext blocks (7.1-7.4): descriptors, fetch with per-block TTL cache and error isolation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio

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
        """All applicable blocks (or the requested ones, in order); a failing block carries ``error``.

        Blocks missing from the cache are fetched one after the other, or ``info.autocontext_concurrency``
        at a time (bounded), each keeping its place in the answer.
        """
        if request_data:
            self.check_ids(request_data)
            chosen = [self.blocks[i] for i in request_data]
        else:
            chosen = [b for b in self.blocks.values() if _applies(b, resource.level)]
        entries: list[dict[str, Any]] = [{"id": b.id, "description": b.description} for b in chosen]
        pending: list[int] = []
        for i, block in enumerate(chosen):
            if not _applies(block, resource.level):
                entries[i]["error"] = (
                    f"This block applies to {', '.join(block.applies_to or [])} resources, not to {resource.level}."
                )
                continue
            hit = self.cache.get(self._key(ctx, resource, block))
            if hit is not None:
                entries[i]["data"] = hit["data"]
            else:
                pending.append(i)
        limit = max(1, int(self.info.autocontext_concurrency or 1))
        if limit == 1 or len(pending) < 2:
            for i in pending:
                await self._fetch_one(chosen[i], entries[i], resource, ctx)
        else:  # bounded concurrency; each block keeps its place in the answer
            limiter = anyio.CapacityLimiter(limit)

            async def one(i: int) -> None:
                async with limiter:
                    await self._fetch_one(chosen[i], entries[i], resource, ctx)

            async with anyio.create_task_group() as group:
                for i in pending:
                    group.start_soon(one, i)
        failed = sum(1 for e in entries if "error" in e)
        return FetchResult(blocks=entries, failed=failed, cached=bool(chosen) and not pending)

    def _key(self, ctx: CallContext, resource: ResourceRef, block: BlockSpec) -> tuple[str, ...]:
        return ("autocontext", self.info.id, ctx.credential_identity, resource.id, block.id)

    async def _fetch_one(self, block: BlockSpec, entry: dict[str, Any], resource: ResourceRef, ctx: CallContext) -> None:
        """Fetch one block into ``entry`` (data, cached with its TTL, or error: 7.3, a failing block never fails the call)."""
        from .schemas import redact, secret_values

        try:
            if block.needs_credentials:
                ctx.require_credentials()
            data = await call_maybe_async(block.fetch, resource.id, ctx)
            self.cache.set(self._key(ctx, resource, block), {"data": data}, block.ttl_s or self.info.cache_ttl_s)
            entry["data"] = data
        except CredentialsMissing as exc:
            entry["error"] = f"{exc.name}: {exc.message}"
        except AcpError as exc:  # the typed name tells the model what kind of failure (12.1)
            entry["error"] = f"{exc.name}: " + redact(exc.message, secret_values(ctx.credentials, self.info.credentials_schema))
        except Exception as exc:
            secrets = secret_values(ctx.credentials, self.info.credentials_schema)
            entry["error"] = "Failed: " + redact(f"{type(exc).__name__}: {exc}", secrets)
            log_traceback(f"autocontext block {block.id}", exc, secrets)

    @staticmethod
    def warning_for(failed: int) -> str | None:
        """The system_info warning counting failed blocks (7.3)."""
        return f"{failed} autocontext block(s) failed; see their error field." if failed else None
