"""Resource suggestions (6.3): the projects the credentials can list, then their datasets with location.

The core orders them (default first, recent ones, then this order) and caches the listing per
credential identity. Datasets are listed for the first MAX_PROJECTS projects only.
"""

from __future__ import annotations

from analytics_acp import CallContext, Resource

from . import client as bq
from .errors import to_acp

MAX_PROJECTS = 20


def list_resources(ctx: CallContext) -> list[Resource]:
    """Projects (group: the project) and each project's datasets (description: location)."""
    ctx.require_credentials()
    seed = bq.billing_project(ctx, bq.call_ref(ctx)) if (ctx.config or {}).get("billing_project") or ctx.resource_id else None
    try:
        client = bq.client_for(ctx, seed or "-")
        projects = bq.call(ctx, client.list_projects, listing=True)
        out: list[Resource] = []
        for p in projects[:MAX_PROJECTS]:
            out.append(Resource(resource_id=p.project_id, name=p.friendly_name or p.project_id, group=p.project_id,
                                description="Project"))
            for d in bq.call(ctx, client.list_datasets, p.project_id, listing=True):
                location = d._properties.get("location")
                out.append(Resource(resource_id=f"{p.project_id}.{d.dataset_id}", name=d.dataset_id, group=p.project_id,
                                    description=f"Dataset in {location}" if location else "Dataset"))
        for p in projects[MAX_PROJECTS:]:
            out.append(Resource(resource_id=p.project_id, name=p.friendly_name or p.project_id, group=p.project_id,
                                description="Project"))
        return out
    except Exception as exc:
        raise to_acp(exc, ctx=ctx) from None
