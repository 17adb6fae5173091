// A host for end-to-end tests: the official TypeScript client, pinned in
// package-lock.json, starts the workbench over stdio and runs the steps in
// HOST_STEPS (a JSON array), printing one JSON line per step:
//   {"list": true}                      → the tools/list result
//   {"call": "<tool>", "arguments": {}} → the tools/call result
// Usage: HOST_STEPS='[...]' node host.mjs COMMAND [ARGS...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const steps = JSON.parse(process.env.HOST_STEPS ?? "[]");
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "test-host", version: "1.0.0" });
await client.connect(transport);
for (const step of steps) {
  if (step.list) {
    console.log(JSON.stringify(await client.listTools()));
  } else {
    console.log(JSON.stringify(await client.callTool({ name: step.call, arguments: step.arguments ?? {} }, undefined, { timeout: 120000 })));
  }
}
await client.close();
