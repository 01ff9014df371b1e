"""Keep the long-lived objects of a serving process out of the cyclic garbage collector's full passes.

A served connector holds hundreds of thousands of objects that live as long as the process: the modules it
imported (the SDK, pydantic models, and, once the first calls ran, SQLAlchemy, sqlglot, a cloud client) and
their caches. Every full (generation 2) collection walks all of them, and the SDK's own per-request objects
trigger one every few hundred calls: in bench case 4b (50 HTTP sessions) the collector took about 0.7 ms per
call, more than half of it in full passes over those modules.

``gc.freeze()`` moves every object tracked at that moment to the permanent generation, which collections never
walk (reference counting still frees them). The serving process freezes once it has loaded the connector
(``enable``) and again after any call that imported modules (``after_call``: a lazy tool module, a driver
loaded by ``acp/configure``); modules stop being imported after the first calls, so that happens a few times
in a process's life. The cost: garbage in reference cycles that exists at such a moment is never collected
(a few requests' worth, a bounded, one-time amount). Only ``analytics-acp serve`` enables it; a process that
embeds the core (tests, the bridge) keeps the collector as it is.
"""

from __future__ import annotations

import gc
import sys

_state = {"enabled": False, "modules": 0}


def enable() -> None:
    """Freeze what the process holds now (the loaded connector) and freeze again after calls that import."""
    _state["enabled"] = True
    _freeze()


def after_call() -> None:
    """Freeze if modules were imported since the last freeze (cheap otherwise: one length test)."""
    if _state["enabled"] and len(sys.modules) != _state["modules"]:
        _freeze()


def _freeze() -> None:
    _state["modules"] = len(sys.modules)
    gc.freeze()
