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

The serving process also collects its youngest generation every 10,000 allocations instead of 700
(``THRESHOLDS``). A call leaves garbage in reference cycles (sqlglot's trees point to their parents) that only
the collector frees, and with 50 sessions calling at once most young objects are still in use when a collection
comes: at 700 they were walked again and again as they moved to the older generations, whose passes then cost
most (bench case 4b, GC time per call measured with gc.callbacks: generations 0/1/2 0.20/0.21/0.26 ms at 700,
0.27/0.07/0.00 ms at 10,000). The garbage waiting for a collection is a few calls' worth.
"""

from __future__ import annotations

import gc
import sys

_state = {"enabled": False, "modules": 0}
THRESHOLDS = (10_000, 10, 10)  # gc.set_threshold of a serving process (module docstring)


def enable() -> None:
    """Freeze what the process holds now (the loaded connector) and freeze again after calls that import; collect
    the youngest generation less often (``THRESHOLDS``)."""
    _state["enabled"] = True
    gc.set_threshold(*THRESHOLDS)
    _freeze()


def after_call() -> None:
    """Freeze if modules were imported since the last freeze (cheap otherwise: one length test)."""
    if _state["enabled"] and len(sys.modules) != _state["modules"]:
        _freeze()


def _freeze() -> None:
    _state["modules"] = len(sys.modules)
    gc.freeze()
