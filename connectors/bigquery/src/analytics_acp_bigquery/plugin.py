"""Hook implementations of the `bigquery` connector (nothing else lives here).

Start-up imports only declaration.py; google-cloud-bigquery loads on the first call.
"""

from __future__ import annotations

from analytics_acp import hookimpl
from analytics_acp_google.hooks import credential_identity  # noqa: F401  (shared hookimpl: importing registers it)

from . import declaration


@hookimpl
def connector_declaration():
    """The connector's ConnectorInfo (4.2)."""
    return declaration.connector_info()


@hookimpl
def list_resources(ctx):
    """Projects and datasets the credentials can list (6.3)."""
    from .resources import list_resources as _list

    return _list(ctx)


@hookimpl
def normalize_resource_id(resource_id):
    """Backticks, '/' separators, REST paths and domain-scoped projects -> project[.dataset[.table]] with its level (6.1)."""
    from .resource_ids import normalize

    return normalize(resource_id)


@hookimpl
def estimate_cost(tool, arguments, ctx):
    """9.2 preflight of execute_query: dry run, read-only and table_rules checks, price."""
    if tool.name != "execute_query":
        return None
    from .preflight import estimate

    return estimate(arguments, ctx)


@hookimpl
def connector_ready():
    """Import the google-cloud-bigquery in the background once the server is initialized (issue 26.6: the first call
    does not pay for them; start-up still imports none)."""
    from analytics_acp_google.warm import preload

    preload(["google.auth.transport.requests", "google.cloud.bigquery", "analytics_acp_bigquery.execute",
             "analytics_acp_bigquery.validate", "analytics_acp_bigquery.blocks"])
