// The TypeScript MCP SDK as a plain MCP client of the ACP Bridge (stdio): what a desktop client
// does. Run by test_bridge_ts_sdk_e2e.py with tests/external as the working folder (so the pinned
// @modelcontextprotocol/sdk resolves); prints ONE JSON object on stdout, logs go to stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const command = JSON.parse(process.env.BRIDGE_COMMAND);
const report = { ok: false, calls: {} };
const texts = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text);

const client = new Client({ name: "ts-bridge-test", version: "0.0.1" }, { capabilities: {} });
const transport = new StdioClientTransport({
  command: command[0],
  args: command.slice(1),
  env: { ...process.env },
  stderr: "inherit",
});
try {
  await client.connect(transport);
  report.serverName = client.getServerVersion()?.name;
  report.tools = (await client.listTools()).tools.map((t) => ({ name: t.name, description: t.description }));
  const numbers = await client.callTool({ name: "fx__numbers", arguments: { count: 40 } });
  report.calls.numbers = { isError: Boolean(numbers.isError), texts: texts(numbers) };
  const id = texts(numbers)[1].split("«")[1].split("»")[0];
  const query = await client.callTool({ name: "acp_query", arguments: { sql: `SELECT COUNT(*) AS n, SUM(sq) AS s FROM ${id}` } });
  report.calls.query = { isError: Boolean(query.isError), texts: texts(query) };
  const sum = await client.callTool({ name: "fx__table_sum", arguments: { table_ref: `acp-data/${id}.csv`, column: "i" } });
  report.calls.tableSum = { isError: Boolean(sum.isError), texts: texts(sum) };
  const leak = await client.callTool({ name: "fx__leak", arguments: {} });
  report.calls.leak = { isError: Boolean(leak.isError), texts: texts(leak) };
  const sources = await client.callTool({ name: "acp_sources", arguments: {} });
  report.calls.sources = { isError: Boolean(sources.isError), texts: texts(sources) };
  report.ok = true;
} catch (err) {
  report.failure = String(err?.stack ?? err);
} finally {
  await client.close().catch(() => {});
}
console.log(JSON.stringify(report));
