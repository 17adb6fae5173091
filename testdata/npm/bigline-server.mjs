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
// write: the answer right after the newline, in the same read. With
// BIG_INTERLEAVE=inside it writes that answer before the line's end
// instead: inside the line, past the limit, ending it. With BIG_ORDER=ts
// its messages put "jsonrpc" and "id" last, as the TypeScript SDK writes
// them ({"result":…,"jsonrpc":"2.0","id":1}).
// Usage: node bigline-server.mjs
import { once } from "node:events";
import { createInterface } from "node:readline";

const bigBytes = Number(process.env.BIG_BYTES ?? 70 * 1024 * 1024);
const piece = 1024 * 1024;

const tsOrder = process.env.BIG_ORDER === "ts";
const interleave = process.env.BIG_INTERLEAVE;

// order puts a message's members in the order its SDK writes them.
function order(message) {
  if (!tsOrder) return message;
  const { jsonrpc, id, ...rest } = message;
  return id === undefined ? { ...rest, jsonrpc } : { ...rest, jsonrpc, id };
}

let queue = Promise.resolve();
// tailWaits, when set, takes the next answer: the end of a long line
// waits for it (BIG_INTERLEAVE=tail).
let tailWaits = null;
function send(message) {
  message = order(message);
  if (tailWaits) {
    const take = tailWaits;
    tailWaits = null;
    take(JSON.stringify(message) + "\n");
    return queue;
  }
  if (interleave === "1") {
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
    const next = interleave === "tail" || interleave === "inside" ? new Promise((resolve) => { tailWaits = resolve; }) : null;
    if (next) {
      process.stderr.write("bigline: writing a long line, whose end waits for the next request\n");
    }
    await write(head);
    let left = size - head.length - tail.length;
    const chunk = "x".repeat(piece);
    while (left > 0) {
      await write(left >= piece ? chunk : chunk.slice(0, left));
      left -= piece;
    }
    if (next) {
      const answer = await next;
      await write(interleave === "inside" ? answer + tail : tail + answer);
    } else {
      await write(tail);
    }
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
        if (tsOrder) {
          sendPadded(`{"result":{"content":[{"type":"text","text":"`, bigBytes, `"}]},"jsonrpc":"2.0","id":${id}}\n`);
        } else {
          sendPadded(`{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`, bigBytes, `"}]}}\n`);
        }
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
