"""Hook implementations of the `ga4` connector (nothing else lives here).

Start-up imports only declaration.py; the Google clients load on the first call that needs them.
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
    """GA4 properties the credentials can see, from accountSummaries (6.3)."""
    from .resources import list_resources as _list

    return _list(ctx)


@hookimpl
def normalize_resource_id(resource_id, ctx):
    """Accept properties/123, surrounding spaces and GA4 UI URLs containing p123 (6.1)."""
    from .resources import normalize

    return normalize(resource_id)


@hookimpl
def connector_ready():
    """Import the GA4 Data/Admin clients in the background once the server is initialized (issue 26.6: the first call
    does not pay for them; start-up still imports none)."""
    from analytics_acp_google.warm import preload

    preload(["google.auth.transport.requests", "google.analytics.data_v1beta", "google.analytics.admin_v1beta",
             "analytics_acp_ga4.report", "analytics_acp_ga4.blocks"])
