"""dataLayer capture: an init script that sees every element added to ``window.dataLayer``.

The script replaces ``window.dataLayer`` with a Proxy of the site's array (installed through
an accessor on ``window``, so ``window.dataLayer = window.dataLayer || []`` and later
reassignments are seen too). The Proxy's ``set`` trap records each appended element, which
covers ``Array.prototype.push`` and the push wrappers GTM installs without touching them.
Each element is snapshotted to JSON at push time (GTM mutates pushed objects later), with
cycles, functions and DOM nodes replaced by short markers. Only the top frame records.
"""

from __future__ import annotations

import json
from typing import Any

BINDING = "__acpBrowserRecord"

INIT_SCRIPT = r"""
(() => {
  if (window.top !== window || window.__acpDataLayerHooked) return;
  Object.defineProperty(window, '__acpDataLayerHooked', {value: true});
  const NAME = 'dataLayer';
  const doc = Math.random().toString(36).slice(2);
  let seq = 0;
  const snapshot = (value) => {
    const seen = new WeakSet();
    const walk = (v, depth) => {
      if (v === null || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') return v;
      if (typeof v === 'undefined') return null;
      if (typeof v === 'function') return '[function]';
      if (typeof v === 'bigint' || typeof v === 'symbol') return String(v);
      if (depth > 12) return '[depth]';
      if (typeof Node !== 'undefined' && v instanceof Node) {
        return '[element ' + (v.nodeName || '').toLowerCase() + (v.id ? '#' + v.id : '') + ']';
      }
      if (seen.has(v)) return '[circular]';
      seen.add(v);
      if (Array.isArray(v) || Object.prototype.toString.call(v) === '[object Arguments]') {
        return Array.from(v, (x) => walk(x, depth + 1));
      }
      if (v instanceof Date) return v.toISOString();
      const out = {};
      for (const k of Object.keys(v)) {
        try { out[k] = walk(v[k], depth + 1); } catch (e) { out[k] = '[unreadable]'; }
      }
      return out;
    };
    try { return walk(value, 0); } catch (e) { return '[unserializable]'; }
  };
  const record = (item, how) => {
    const entry = {kind: 'datalayer', how, doc, seq: seq++, url: location.href, t: performance.now()};
    try { entry.payload = JSON.stringify(snapshot(item)); } catch (e) { entry.payload = '"[unserializable]"'; }
    try { window.__acpBrowserRecord && window.__acpBrowserRecord(entry); } catch (e) {}
  };
  const proxies = new WeakSet();
  const wrap = (arr) => {
    if (!Array.isArray(arr) || proxies.has(arr)) return arr;
    for (const item of arr) record(item, 'initial');
    const proxy = new Proxy(arr, {
      set(target, prop, value, receiver) {
        if (typeof prop === 'string' && /^\d+$/.test(prop) && Number(prop) >= target.length) record(value, 'push');
        return Reflect.set(target, prop, value, receiver);
      },
    });
    proxies.add(proxy);
    return proxy;
  };
  let current = wrap(window[NAME]);
  try {
    Object.defineProperty(window, NAME, {
      configurable: true,
      enumerable: true,
      get() { return current; },
      set(v) { current = wrap(v); },
    });
  } catch (e) {}
})();
"""


def push_row(entry: dict[str, Any], page_index: int, push_index: int) -> dict[str, Any]:
    """One ``datalayer`` row from a recorded push (payload parsed back from its JSON snapshot)."""
    try:
        payload = json.loads(entry.get("payload") or "null")
    except ValueError:
        payload = entry.get("payload")
    event = None
    kind = "object"
    if isinstance(payload, dict):
        event = payload.get("event") if isinstance(payload.get("event"), str) else None
        keys = [k for k in payload if k != "event"]
    elif isinstance(payload, list):
        # gtag() pushes its arguments object: ['event', 'purchase', {...}] / ['config', 'G-..'] / ['consent', ...]
        kind = "gtag"
        command = payload[0] if payload and isinstance(payload[0], str) else None
        name = payload[1] if len(payload) > 1 and isinstance(payload[1], str) else None
        if command is None:
            event = "gtag"
        elif name and command in ("event", "config", "consent", "get", "set"):
            event = f"gtag:{command}:{name}"
        else:
            event = f"gtag:{command}"
        keys = []
    else:
        kind = type(payload).__name__ if payload is not None else "null"
        keys = []
    return {
        "page_index": page_index,
        "push_index": push_index,
        "event": event,
        "kind": kind,
        "keys": ", ".join(keys) if keys else None,
        "payload": payload,
        "page_url": entry.get("url"),
        "time_ms": round(float(entry.get("t") or 0), 1),
        "initial": entry.get("how") == "initial",
    }
