"""The Google connectors' offline check of a set-up (``ConnectorInfo.check_setup``): what google-auth tells
without the network, so a host learns before the first call that a key cannot work.

The credentials are built exactly as a call builds them (credentials.py): a service account key's private_key
must load as a key (google-auth's RSA signer), an OAuth client-secrets file given as a key is named as such,
OAuth/authorized_user credentials need a token or a complete refresh triplet and a readable expiry. Building
google-auth credentials sends nothing: no token is fetched here.
"""

from __future__ import annotations

from typing import Any


def check_setup(credentials: dict[str, Any] | None, config: dict[str, Any]) -> None:
    """Raise ACP_CREDENTIALS_INVALID when the credentials cannot become google-auth credentials; never the network."""
    if not credentials:
        return  # the core reports missing credentials where they are needed
    from .credentials import build_credentials

    build_credentials(credentials, scopes=[])
