// Starts a Claude Desktop bundle's server as Claude Desktop would: the
// manifest's mcp_config command and args, with ${__dirname} and the
// user_config values filled in, then initializes an MCP session on its
// stdin and lists its tools. Exits 0 if it answers as the workbench does.
//
//   node .ci/mcpb-serve.js UNPACKED-BUNDLE VERSION CONFIG
"use strict";
const fs = require("fs");
const path = require("path");
const { spawn } = require("child_process");

const [dir, version, config] = process.argv.slice(2);
const manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
const fail = (msg) => { console.error(`mcpb-serve: ${msg}`); process.exit(1); };

if (manifest.version !== version) fail(`the manifest's version is ${manifest.version}, want ${version}`);
if (manifest.server.type !== "binary") fail(`server.type is ${manifest.server.type}, want binary`);
if (!fs.existsSync(path.join(dir, manifest.server.entry_point))) fail(`no entry_point ${manifest.server.entry_point} in the bundle`);
const userConfig = { config_path: config };
for (const key of Object.keys(manifest.user_config || {})) {
  if (!(key in userConfig)) fail(`user_config.${key} has no value to test with`);
}
const fill = (s) => s
  .replaceAll("${__dirname}", dir)
  .replace(/\$\{user_config\.([^}]+)\}/g, (_, k) => {
    if (!(k in userConfig)) fail(`\${user_config.${k}} is not declared in user_config`);
    return userConfig[k];
  });
const cmd = fill(manifest.server.mcp_config.command);
const args = (manifest.server.mcp_config.args || []).map(fill);

const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
const timer = setTimeout(() => { child.kill("SIGKILL"); fail(`no answer within 60 s from ${cmd} ${args.join(" ")}`); }, 60000);
child.on("error", (err) => fail(`starting ${cmd}: ${err.message}`));
let listed = false;
child.on("exit", (code, signal) => {
  clearTimeout(timer);
  if (!listed) fail(`${cmd} ${args.join(" ")} exited with ${code ?? signal} before it listed its tools`);
  if (code !== 0) fail(`exited with ${code ?? signal} when its stdin ended`);
  process.exit(0);
});
let buf = "";
const waiting = new Map();
child.stdout.on("data", (chunk) => {
  buf += chunk;
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    let msg;
    try { msg = JSON.parse(line); } catch { fail(`not JSON-RPC on stdout: ${line.slice(0, 200)}`); }
    if (msg.id !== undefined && waiting.has(msg.id)) {
      waiting.get(msg.id)(msg);
      waiting.delete(msg.id);
    }
  }
});
const send = (msg) => child.stdin.write(JSON.stringify(msg) + "\n");
const request = (id, method, params) => new Promise((resolve) => {
  waiting.set(id, resolve);
  send({ jsonrpc: "2.0", id, method, params });
});

(async () => {
  const init = await request(1, "initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "release-check", version: "1" },
  });
  if (init.error) fail(`initialize: ${JSON.stringify(init.error)}`);
  if (init.result.serverInfo.version !== version) fail(`serverInfo.version is ${init.result.serverInfo.version}, want ${version}`);
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const list = await request(2, "tools/list", {});
  if (list.error) fail(`tools/list: ${JSON.stringify(list.error)}`);
  const names = list.result.tools.map((t) => t.name).sort().join(",");
  if (names !== "open_toolbox,use_tool") fail(`tools/list gave ${names}, want open_toolbox,use_tool`);
  listed = true;
  child.stdin.end(); // the workbench ends with its stdin
})();
