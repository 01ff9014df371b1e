"""Hook implementations of the `gsc` connector (nothing else lives here).

Start-up imports only declaration.py; googleapiclient and google-auth load on the first call.
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
    """The properties the credentials can see (sites.list), group = permission level (6.3)."""
    from .resources import list_resources as _list

    return _list(ctx)


@hookimpl
def normalize_resource_id(resource_id, ctx):
    """Lower-case host, trailing slash, sc-domain:; a bare host becomes the visible property (6.1)."""
    from .resources import normalize

    return normalize(resource_id, ctx)


@hookimpl
def connector_ready():
    """Import the googleapiclient in the background once the server is initialized (issue 26.6: the first call
    does not pay for them; start-up still imports none)."""
    from analytics_acp_google.warm import preload

    preload(["google_auth_httplib2", "googleapiclient.discovery", "google.oauth2.service_account",
             "analytics_acp_gsc.search_analytics", "analytics_acp_gsc.blocks"])
