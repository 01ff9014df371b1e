"""Warm-up after initialize (issue 26.6): the Google client libraries take seconds to import, so a
connector imports them in the core's background ``connector_ready`` thread while the host is still
setting up, instead of making the first call pay. Start-up itself still imports none of them."""

from __future__ import annotations

import importlib


def preload(modules: list[str]) -> None:
    """Import ``modules`` in order; a module that fails is left for the first call to report."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # the call that needs it raises a typed error itself
            continue
