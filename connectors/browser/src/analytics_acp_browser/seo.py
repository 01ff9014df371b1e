"""On-page SEO facts of each page: title, meta description, canonical, robots, hreflang,
headings, Open Graph and JSON-LD types (read from the rendered DOM)."""

from __future__ import annotations

from typing import Any

COLLECT_JS = r"""
() => {
  const meta = (sel) => { const m = document.querySelector(sel); return m ? (m.getAttribute('content') || '') : null; };
  const heads = {};
  for (const level of [1, 2, 3, 4, 5, 6]) heads['h' + level] = document.querySelectorAll('h' + level).length;
  const text = (el) => (el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 200);
  const og = {};
  document.querySelectorAll('meta[property^="og:"]').forEach((m) => { og[m.getAttribute('property')] = m.getAttribute('content'); });
  const types = [];
  let ldErrors = 0;
  const addTypes = (node) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) { node.forEach(addTypes); return; }
    const t = node['@type'];
    if (typeof t === 'string') types.push(t); else if (Array.isArray(t)) t.forEach((x) => types.push(String(x)));
    if (node['@graph']) addTypes(node['@graph']);
  };
  document.querySelectorAll('script[type="application/ld+json"]').forEach((s) => {
    try { addTypes(JSON.parse(s.textContent)); } catch (e) { ldErrors += 1; }
  });
  const canonical = document.querySelector('link[rel="canonical"]');
  const hreflang = Array.from(document.querySelectorAll('link[rel="alternate"][hreflang]'))
    .map((l) => ({hreflang: l.getAttribute('hreflang'), href: l.href}));
  const links = Array.from(document.querySelectorAll('a[href]'));
  const internal = links.filter((a) => { try { return new URL(a.href).host === location.host; } catch (e) { return false; } }).length;
  return {
    title: document.title || null,
    meta_description: meta('meta[name="description"]'),
    canonical: canonical ? canonical.href : null,
    robots: meta('meta[name="robots"]'),
    lang: document.documentElement.getAttribute('lang'),
    viewport: meta('meta[name="viewport"]'),
    hreflang: hreflang,
    h1: Array.from(document.querySelectorAll('h1')).slice(0, 5).map(text),
    headings: heads,
    open_graph: og,
    twitter_card: meta('meta[name="twitter:card"]'),
    json_ld_types: types,
    json_ld_errors: ldErrors,
    links_internal: internal,
    links_external: links.length - internal,
    images_without_alt: Array.from(document.images).filter((i) => !i.hasAttribute('alt')).length,
  };
}
"""

COLUMNS = [
    "page_index", "url", "final_url", "status", "title", "meta_description", "canonical", "robots", "x_robots_tag",
    "lang", "viewport", "hreflang", "h1", "headings", "open_graph", "twitter_card", "json_ld_types", "json_ld_errors",
    "links_internal", "links_external", "images_without_alt",
]


def page_row(page_index: int, url: str, final_url: str | None, status: int | None, x_robots: str | None,
             data: dict[str, Any] | None) -> dict[str, Any]:
    """One ``seo`` row; every column present."""
    data = data or {}
    row = {name: data.get(name) for name in COLUMNS}
    row.update(page_index=page_index, url=url, final_url=final_url, status=status, x_robots_tag=x_robots)
    return row
