// A minimal MCP Apps host (io.modelcontextprotocol/ui) for the bridge's dataset view on the Datasets page
// (issues 35.7 and 36.4: one view and one paging tool, two hosts). The view runs in a sandboxed iframe with
// no access to this page; it asks for rows with tools/call, which this host relays to the page's server,
// where the bridge's own app-only tools answer. Without JavaScript the page keeps its first-rows table.
const MAX_HEIGHT = 2000;  // px: the tallest the view's frame grows
document.addEventListener("DOMContentLoaded", () => {
  const holder = document.getElementById("dataset-view");
  if (!holder) return;
  const frame = document.createElement("iframe");  // made here, after the listener below exists
  frame.title = `Dataset ${holder.dataset.dataset}`;
  frame.setAttribute("sandbox", "allow-scripts");  // no same-origin: the view cannot reach this page
  frame.className = "view";
  frame.dataset.dataset = holder.dataset.dataset;
  frame.dataset.name = holder.dataset.name;
  const view = () => frame.contentWindow;
  const send = msg => view().postMessage(msg, "*");
  const reply = (id, result) => send({jsonrpc: "2.0", id, result});
  const fail = (id, code, message) => send({jsonrpc: "2.0", id, error: {code, message}});
  const result = {content: [], _meta: {"analytics-acp/view": {datasets: [{id: frame.dataset.dataset, name: frame.dataset.name}]}}};
  window.addEventListener("message", event => {
    if (event.source !== view()) return;
    const m = event.data;
    if (!m || m.jsonrpc !== "2.0" || typeof m.method !== "string") return;
    if (m.method === "ui/initialize") {
      // containerDimensions.maxHeight: the frame takes the view's height (up to MAX_HEIGHT), see size-changed below.
      reply(m.id, {protocolVersion: "2026-01-26", hostInfo: {name: "analytics-acp ui", version: "1"},
                   hostCapabilities: {serverTools: {}},
                   hostContext: {theme: "light", displayMode: "inline", containerDimensions: {maxHeight: MAX_HEIGHT}}});
    } else if (m.method === "ui/notifications/initialized") {
      send({jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result});
    } else if (m.method === "ui/notifications/size-changed") {
      // The frame's inside is exactly the view's content (its borders added: the page sizes border boxes), so
      // no blank space is left below it; past MAX_HEIGHT the view scrolls inside the frame.
      const height = Number(m.params && m.params.height);
      if (height > 0) frame.style.height = `${Math.min(Math.ceil(height), MAX_HEIGHT) + frame.offsetHeight - frame.clientHeight}px`;
    } else if (m.method === "tools/call") {
      const params = m.params || {};
      const query = new URLSearchParams({name: String(params.name || ""), arguments: JSON.stringify(params.arguments || {})});
      fetch(`/datasets/view/call?${query}`, {credentials: "same-origin"})
        .then(r => r.ok ? r.json() : Promise.reject(new Error(`HTTP ${r.status}`)))
        .then(answer => reply(m.id, answer))
        .catch(err => fail(m.id, -32603, String(err.message || err)));
    } else if (m.id !== undefined) {
      fail(m.id, -32601, "Method not found");
    }
  });
  frame.src = "/datasets/view";
  holder.replaceChildren(frame);
  document.documentElement.classList.add("has-view");
});
