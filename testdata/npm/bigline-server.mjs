// An MCP server over stdio, written by hand (no dependencies), whose tool
// "big" answers with one line of BIG_BYTES bytes (default 70 MiB), written
// as Node servers write under backpressure: in 1 MiB pieces, waiting for
// 'drain' whenever stdout's buffer is full. Tool "echo" answers with the
// text it is given. Messages are written in turn, so that an answer never
// lands inside another; with BIG_INTERLEAVE=1 the server answers requests
// at once instead, also between the pieces of a long line: their lines
// land inside it, and the first of them ends it. With BIG_INTERLEAVE=tail
// the server writes a long line but for its end, waits for the next
// request, and writes the line's end and that request's answer in one
// write: the answer right after the newline, in the same read.
// Usage: node bigline-server.mjs
import { once } from "node:events";
import { createInterface } from "node:readline";

const bigBytes = Number(process.env.BIG_BYTES ?? 70 * 1024 * 1024);
const piece = 1024 * 1024;

let queue = Promise.resolve();
// tailWaits, when set, takes the next answer: the end of a long line
// waits for it (BIG_INTERLEAVE=tail).
let tailWaits = null;
function send(message) {
  if (tailWaits) {
    const take = tailWaits;
    tailWaits = null;
    take(JSON.stringify(message) + "\n");
    return queue;
  }
  if (process.env.BIG_INTERLEAVE === "1") {
    process.stdout.write(JSON.stringify(message) + "\n");
    return queue;
  }
  queue = queue.then(() => write(JSON.stringify(message) + "\n"));
  return queue;
}

// sendPadded sends message with a string member padded so that its line
// is about size bytes, in pieces.
function sendPadded(head, size, tail) {
  queue = queue.then(async () => {
    const next = process.env.BIG_INTERLEAVE === "tail" ? new Promise((resolve) => { tailWaits = resolve; }) : null;
    await write(head);
    let left = size - head.length - tail.length;
    const chunk = "x".repeat(piece);
    while (left > 0) {
      await write(left >= piece ? chunk : chunk.slice(0, left));
      left -= piece;
    }
    await write(next ? tail + (await next) : tail);
  });
  return queue;
}

async function write(s) {
  if (!process.stdout.write(s)) {
    await once(process.stdout, "drain");
  }
}

const tools = [
  { name: "big", description: "Answers with one very long line.", inputSchema: { type: "object" } },
  { name: "echo", description: "Echoes its text.", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
];

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (msg.id === undefined || !msg.method) return;
  const id = JSON.stringify(msg.id);
  switch (msg.method) {
    case "initialize":
      send({ jsonrpc: "2.0", id: msg.id, result: {
        protocolVersion: msg.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "bigline", version: "1.0.0" },
      } });
      break;
    case "tools/list":
      send({ jsonrpc: "2.0", id: msg.id, result: { tools } });
      break;
    case "tools/call":
      if (msg.params.name === "big") {
        sendPadded(`{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`, bigBytes, `"}]}}\n`);
        break;
      }
      send({ jsonrpc: "2.0", id: msg.id, result: { content: [{ type: "text", text: String(msg.params.arguments?.text ?? "") }] } });
      break;
    case "ping":
      send({ jsonrpc: "2.0", id: msg.id, result: {} });
      break;
    default:
      send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `no method ${msg.method}` } });
  }
});
