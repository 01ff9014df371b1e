// The TypeScript MCP SDK as an ACP host of `analytics-acp serve example` (stdio).
// Used by tests/test_external_ts_sdk.py: it records what it observes and prints ONE JSON
// object on stdout; the Python test asserts on it (logs go to stderr).
//
// Exercises: the experimental `acp` capability both ways (4.1, 4.2), `acp/configure` as a
// custom request (5.1), `_meta.acp` sent on tools/call and read back from the result (5.2, 8),
// and the server -> client `acp/read_table` request answered by a zod-validated handler (8.8).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { z } from "zod";

const command = JSON.parse(process.env.ACP_SERVER_COMMAND ?? '["analytics-acp", "serve", "example"]');
const secret = process.env.ACP_TEST_SECRET ?? "ex_ts_SECRET_0123456789";

// The host's own tables, as an ACP host would resolve them (8.8.1).
const HOST_TABLES = {
  ts_dataset: {
    format: "inline",
    row_count: 3,
    headers: [
      { name: "day", type: "date" },
      { name: "sessions", type: "integer" },
    ],
    table: [
      { day: "2026-01-01", sessions: 10 },
      { day: "2026-01-02", sessions: 12 },
      { day: "2026-01-03", sessions: 20 },
    ],
  },
};

const ReadTableRequestSchema = z.object({
  method: z.literal("acp/read_table"),
  params: z.object({ ref: z.string(), call_id: z.string().optional() }).passthrough(),
});
const ConfigureResultSchema = z
  .object({
    ok: z.boolean(),
    effective: z
      .object({
        row_limit: z.number(),
        cost_limit_usd: z.number(),
        has_credentials: z.boolean(),
      })
      .passthrough(),
  })
  .passthrough();

const report = { readTableRequests: [] };

const client = new Client(
  { name: "analytics-acp-ts-host", version: "1.0.0" },
  {
    capabilities: {
      experimental: {
        acp: { version: "1.0", stores_system_data: true, multi_table: true, host_tables: true },
      },
    },
  },
);

client.setRequestHandler(ReadTableRequestSchema, async (request) => {
  report.readTableRequests.push(request.params);
  const table = HOST_TABLES[request.params.ref];
  if (!table) {
    // A JSON-RPC error with the ACP code (8.8); a plain Error keeps the message free of McpError's prefix.
    throw Object.assign(new Error(`Host table ${request.params.ref} does not exist. Pass the id of a dataset.`), {
      code: -32021,
    });
  }
  return table;
});

function summarize(result) {
  const acp = result?._meta?.acp ?? null;
  let modelResponse = null;
  try {
    modelResponse = JSON.parse(result.content?.[0]?.text ?? "null");
  } catch {
    modelResponse = "<not JSON>";
  }
  return { isError: Boolean(result.isError), modelResponse, acp };
}

const transport = new StdioClientTransport({
  command: command[0],
  args: command.slice(1),
  env: { ...process.env },
  stderr: "inherit",
});

try {
  await client.connect(transport);
  report.serverVersion = client.getServerVersion();
  report.serverCapability = client.getServerCapabilities()?.experimental?.acp ?? null;

  const tools = await client.listTools();
  report.tools = tools.tools.map((t) => ({ name: t.name, properties: Object.keys(t.inputSchema?.properties ?? {}) }));

  report.configure = await client.request(
    {
      method: "acp/configure",
      params: {
        row_limit: 4,
        credentials: { type: "api_key", api_key: secret },
        default_resource_id: "acct02",
      },
    },
    ConfigureResultSchema,
  );
  try {
    await client.request({ method: "acp/configure", params: { row_limit: -1 } }, ConfigureResultSchema);
    report.invalidConfigure = { error: null };
  } catch (err) {
    report.invalidConfigure = { error: { code: err.code, message: err.message } };
  }

  // Session settings from acp/configure apply (row_limit 4, default resource acct02) ...
  report.sessionCall = summarize(
    await client.callTool({ name: "query_orders", arguments: { start_date: "2026-01-01", end_date: "2026-01-31" } }),
  );
  // ... and _meta.acp overrides them for one call (5.3).
  report.metaCall = summarize(
    await client.callTool({
      name: "query_orders",
      arguments: { resource_id: "acct05", start_date: "2026-01-01", end_date: "2026-01-31" },
      _meta: { acp: { row_limit: 2, sampling: "spread", autocontext_delivered: true } },
    }),
  );
  report.tableStats = summarize(
    await client.callTool({
      name: "table_stats",
      arguments: { table_ref: "ts_dataset", column: "sessions" },
      _meta: { acp: { call_id: "ts-call-1" } },
    }),
  );
  report.tableMissing = summarize(
    await client.callTool({
      name: "table_stats",
      arguments: { table_ref: "no_such_table" },
      _meta: { acp: { call_id: "ts-call-2" } },
    }),
  );
  report.ok = true;
} catch (err) {
  report.ok = false;
  report.failure = String(err?.stack ?? err);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(report) + "\n");
