// The TypeScript MCP SDK's progress and cancellation against an ACP server (issue 28), stdio or
// Streamable HTTP (ACP_SERVER_URL). Used by tests/test_external_ts_sdk.py: it records what it observes and
// prints ONE JSON object on stdout; the Python test asserts on it (logs go to stderr).
//
// The server serves tests/core_fixtures/mini_connector.py: `steps` reports "step k of n" progress, `spin`
// runs a SQLite statement that never ends unless the call's cancellation interrupts it. Whether it stopped
// is read from the server's CPU (/proc/<pid>/stat), never from a timed assertion.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { z } from "zod";

const command = JSON.parse(process.env.ACP_SERVER_COMMAND ?? "[]");
const url = process.env.ACP_SERVER_URL;
const credentials = { type: "api_key", api_key: process.env.ACP_TEST_SECRET ?? "sk-test-SECRET-123456" };
const report = { clientErrors: [], lateProgress: [] };
const UNKNOWN_TOKEN = "Received a progress notification for an unknown token: ";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(")").pop().trim().split(/\s+/);
  return Number(fields[11]) + Number(fields[12]);
}

// True once the server used no CPU for ten polls in a row (bounded: ~30 s at most).
async function goesIdle(pid) {
  let last = cpuTicks(pid);
  let still = 0;
  for (let i = 0; i < 300; i++) {
    await sleep(100);
    const now = cpuTicks(pid);
    still = now === last ? still + 1 : 0;
    last = now;
    if (still >= 10) return true;
  }
  return false;
}

const client = new Client(
  { name: "analytics-acp-ts-progress", version: "1.0.0" },
  { capabilities: { experimental: { acp: { version: "1.0", stores_system_data: true } } } },
);
// TS SDK 1.32.2 runs notification handlers a microtask later but responses at once, so a last progress read
// in the same chunk as its answer reaches no onprogress and comes here as an "unknown token" error
// (modelcontextprotocol/typescript-sdk#2580, open). Kept apart so the test can say which path it took.
client.onerror = (err) => {
  const text = String(err?.message ?? err);
  if (text.startsWith(UNKNOWN_TOKEN)) report.lateProgress.push(JSON.parse(text.slice(UNKNOWN_TOKEN.length)).params);
  else report.clientErrors.push(text);
};
const transport = url
  ? new StreamableHTTPClientTransport(new URL(url))
  : new StdioClientTransport({ command: command[0], args: command.slice(1), env: { ...process.env }, stderr: "inherit" });

try {
  await client.connect(transport);
  const pid = url ? Number(process.env.ACP_SERVER_PID) : transport.pid;
  await client.request({ method: "acp/configure", params: { credentials } }, z.object({ ok: z.boolean() }).passthrough());

  // Progress: onprogress gets every notification the server sends for this call, then the result.
  const progress = [];
  const steps = await client.callTool({ name: "steps", arguments: { n: 30, step_s: 0.03 } }, undefined, {
    onprogress: (p) => progress.push(p),
  });
  report.progress = progress;
  report.stepsIsError = Boolean(steps.isError);

  // Cancellation: the AbortSignal fires once the statement runs (its first progress says "running").
  const controller = new AbortController();
  const spinProgress = [];
  try {
    await client.callTool({ name: "spin", arguments: {} }, undefined, {
      signal: controller.signal,
      onprogress: (p) => {
        spinProgress.push(p);
        if (p.message === "running") controller.abort("the user pressed stop");
      },
      timeout: 120_000,
    });
    report.spin = { rejected: false };
  } catch (err) {
    report.spin = { rejected: true, error: String(err) };
  }
  report.spinProgress = spinProgress;
  report.idleAfterCancel = await goesIdle(pid);

  // The server keeps answering: the next call on the same session works.
  const after = await client.callTool({ name: "steps", arguments: { n: 2, step_s: 0 } });
  report.afterIsError = Boolean(after.isError);
  report.ok = true;
} catch (err) {
  report.ok = false;
  report.failure = String(err?.stack ?? err);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(report) + "\n");
