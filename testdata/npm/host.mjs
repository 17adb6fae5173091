// A host for end-to-end tests: the official TypeScript client, pinned in
// package-lock.json, starts the workbench over stdio and runs the steps in
// HOST_STEPS (a JSON array), printing one JSON line per step:
//   {"list": true}                      → the tools/list result
//   {"call": "<tool>", "arguments": {}} → the tools/call result
// With HOST_ROOT set, the host declares elicitation, sampling and roots and
// answers them: a form with {"name": "Ada"}, a sampled message from
// "ts-host-model", and HOST_ROOT as its one root. HOST_ELICIT, a JSON array
// of elicitation results, answers the forms in turn instead (the last one
// again once they run out).
// With HOST_URL set, the host reaches a workbench served over Streamable
// HTTP at that URL instead of starting one (HOST_TOKEN: a bearer token to
// send), and prints the session's id on stderr.
// Usage: HOST_STEPS='[...]' node host.mjs COMMAND [ARGS...]
//        HOST_URL=http://127.0.0.1:PORT/mcp HOST_STEPS='[...]' node host.mjs
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const steps = JSON.parse(process.env.HOST_STEPS ?? "[]");
const root = process.env.HOST_ROOT;
const answers = JSON.parse(process.env.HOST_ELICIT ?? "[]");
const url = process.env.HOST_URL;
const headers = process.env.HOST_TOKEN ? { Authorization: `Bearer ${process.env.HOST_TOKEN}` } : {};
const transport = url
  ? new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
  : new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "test-host", version: "1.0.0" },
  root ? { capabilities: { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } } } : {});
if (root) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    console.error(`host: elicitation: ${req.params.message}`);
    if (answers.length > 0) {
      return answers.length > 1 ? answers.shift() : answers[0];
    }
    return { action: "accept", content: { name: "Ada" } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () =>
    ({ role: "assistant", model: "ts-host-model", content: { type: "text", text: "hi from the TypeScript host" } }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: root, name: "project" }] }));
}
await client.connect(transport);
if (url) {
  console.error(`host: session ${transport.sessionId ?? ""}`);
}
for (const step of steps) {
  if (step.list) {
    console.log(JSON.stringify(await client.listTools()));
  } else {
    console.log(JSON.stringify(await client.callTool({ name: step.call, arguments: step.arguments ?? {} }, undefined, { timeout: 120000 })));
  }
}
await client.close();
