// MCP Workbench's web UI. Everything a server or the configuration wrote
// reaches the page through textContent, never as markup.
"use strict";

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v; else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat()) {
    if (k === undefined || k === null || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

async function post(path, body) {
  const r = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), credentials: "same-origin" });
  const text = await r.text();
  if (!r.ok) throw new Error(text.trim() || r.statusText);
  return JSON.parse(text);
}

// --- pages -----------------------------------------------------------------
const pages = ["now", "try", "review", "questions", "activity", "logins"];
function show(name) {
  if (!pages.includes(name)) name = "now";
  if (name === "logins") loadLogins();
  if (name === "activity") loadActivity();
  for (const p of pages) {
    document.getElementById(p).hidden = p !== name;
    document.getElementById("tab-" + p).setAttribute("aria-selected", p === name ? "true" : "false");
  }
}
window.addEventListener("hashchange", () => show(location.hash.slice(1)));
document.querySelector("[role=tablist]").addEventListener("keydown", (ev) => {
  if (ev.key !== "ArrowRight" && ev.key !== "ArrowLeft") return;
  const cur = pages.indexOf(location.hash.slice(1) || "now");
  const next = pages[(cur + (ev.key === "ArrowRight" ? 1 : pages.length - 1)) % pages.length];
  location.hash = next;
  document.getElementById("tab-" + next).focus();
});

// --- Now -------------------------------------------------------------------
const labels = { connected: "running", starting: "starting", installing: "installing", error: "failed", idle: "not started", disabled: "disabled" };

function ago(t) {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(t)) / 1000));
  if (s < 90) return s + "s";
  if (s < 5400) return Math.round(s / 60) + "m";
  return Math.round(s / 3600) + "h";
}

function badge(status, extra) {
  return el("span", { class: "badge s-" + status }, extra || labels[status] || status);
}

function stateCell(st) {
  const parts = [];
  let status = st.status, text = labels[status] || status;
  if (st.needsLogin) { status = "login"; text = "needs login"; }
  if (status === "idle" && st.stoppedIdle) text = "stopped (idle)";
  parts.push(badge(status, text), " ");
  parts.push(el("span", {}, `${st.command || "workbench"} pid ${st.pid}`));
  if (st.since) parts.push(el("span", { class: "hint" }, ` · for ${ago(st.since)}`));
  if (st.tools) parts.push(` · ${st.tools} tools`);
  if (st.withheld) parts.push(" ", badge("pins", `pins changed: ${st.withheld} withheld`));
  if (st.failures > 1) parts.push(` · ${st.failures} failed starts`);
  if (st.error) parts.push(el("div", { class: "err" }, st.error));
  return el("div", { class: "state" }, parts);
}

function renderNow(n) {
  document.getElementById("config-path").textContent = n.config;
  const probs = document.getElementById("problems");
  probs.replaceChildren();
  if (n.problems && n.problems.length) {
    probs.append(el("div", { class: "problems", role: "alert" },
      el("strong", {}, "The configuration cannot be used:"),
      el("ul", {}, n.problems.map(p => el("li", {}, p.path ? el("code", {}, p.path) : "", p.path ? ": " : "", p.message)))));
  }
  if (n.warnings && n.warnings.length) {
    probs.append(el("div", { class: "warnings" }, el("strong", {}, "Warnings:"), el("ul", {}, n.warnings.map(w => el("li", {}, w)))));
  }
  const tbs = document.getElementById("toolboxes");
  tbs.replaceChildren(...n.toolboxes.map(tb => el("div", { class: "toolbox" },
    el("h3", {}, "Toolbox ", el("code", {}, tb.name)),
    tb.description ? el("p", { class: "hint" }, tb.description) : "",
    el("table", {},
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Server"), el("th", { scope: "col" }, "State"), el("th", { scope: "col" }, "In each workbench"))),
      el("tbody", {}, tb.servers.map(s => el("tr", { "data-server": tb.name + "/" + s.name, "data-status": s.status },
        el("td", { "data-label": "Server" }, el("code", {}, s.name), el("div", { class: "hint" }, s.transport)),
        el("td", { "data-label": "State" }, badge(s.status)),
        el("td", { "data-label": "Workbenches" }, s.states.length ? s.states.map(stateCell) : el("span", { class: "hint" }, "no running workbench has started it")))))))));
  const wbs = document.getElementById("workbenches");
  const items = n.workbenches.map(w => el("li", {}, `${w.command || "workbench"} · pid ${w.pid} · version ${w.version} · up ${ago(w.started)}`));
  if (n.others && n.others.length) items.push(el("li", { class: "hint" }, `and ${n.others.length} of other configurations`));
  wbs.replaceChildren(...(items.length ? items : [el("li", { class: "hint" }, "None has started a server yet.")]));
  const sel = document.getElementById("search-toolbox");
  const want = ["", ...n.toolboxes.map(t => t.name)];
  if (sel.options.length !== want.length) {
    const v = sel.value;
    sel.replaceChildren(...want.map(name => el("option", { value: name }, name || "every toolbox")));
    sel.value = v;
  }
}

// Answers given here stay on the page (newest first) until it is left, so
// a question answered in one stream update is not wiped by the next; the
// list is rebuilt only when what it shows changes, so a button the user
// has tabbed to keeps the focus.
const answered = new Map();
let waitingQuestions = [], questionsShown = "";
function renderQuestions(qs) {
  waitingQuestions = qs;
  qs = qs.filter(q => !answered.has(q.id));
  document.getElementById("questions-count").textContent = qs.length ? String(qs.length) : "";
  const key = JSON.stringify([qs.map(q => q.id), [...answered.keys()]]);
  if (key === questionsShown) return;
  questionsShown = key;
  const out = document.getElementById("questions-list");
  const done = [...answered.values()].reverse().slice(0, 10).map(t => el("p", { role: "status", class: "answered" }, t));
  if (!qs.length) { out.replaceChildren(el("p", { id: "questions-none" }, "No question is waiting."), ...done); return; }
  out.replaceChildren(...qs.map(q => {
    const buttons = [["once", "Allow once"], ["session", "Allow for the session"], ["deny", "Deny"]].map(([action, text]) => {
      const b = el("button", { type: "button", class: action === "deny" ? "secondary" : "", "data-answer": action }, text);
      b.addEventListener("click", async () => {
        try {
          await post("api/answer", { id: q.id, action });
          answered.set(q.id, `${text}: ${q.toolbox}/${q.server}/${q.tool}`);
          renderQuestions(waitingQuestions);
        } catch (e) { card.append(el("p", { class: "err", role: "alert" }, e.message)); }
      });
      return b;
    });
    const card = el("article", { class: "card question", "data-question": `${q.toolbox}/${q.server}/${q.tool}` },
      el("h3", {}, "Run ", el("code", {}, `${q.toolbox}/${q.server}/${q.tool}`), "?"),
      el("p", { class: "hint" }, (q.askIn === "page" ? `Asked by ${q.rule}, in this page by "askIn": ${q.why}.` : `Asked by ${q.rule}; the host could not ask: ${q.why}.`) +
        ` Waiting until ${new Date(q.deadline).toLocaleTimeString()}.`),
      el("pre", {}, q.arguments),
      el("div", {}, buttons.flatMap(b => [b, " "])));
    return card;
  }), ...done);
}

function startNow() {
  const live = document.getElementById("live");
  const es = new EventSource("api/events");
  es.addEventListener("now", (ev) => {
    const n = JSON.parse(ev.data);
    renderNow(n);
    renderQuestions(n.questions || []);
    live.textContent = "live · updated " + new Date().toLocaleTimeString();
  });
  es.onerror = () => { live.textContent = "reconnecting…"; };
}

// --- Try -------------------------------------------------------------------
document.getElementById("search-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const out = document.getElementById("search-result");
  out.replaceChildren(el("p", {}, "Searching…"));
  const f = ev.target;
  try {
    const a = await post("api/search", { query: f.query.value, toolbox: f.toolbox.value, limit: Number(f.limit.value) });
    out.replaceChildren(
      el("h3", {}, "Ranked tools"),
      a.ranked.length ? el("ol", { class: "ranked", id: "ranked" }, a.ranked.map(t => el("li", {},
        el("code", {}, `${t.toolbox}/${t.server}/${t.tool}`), t.more ? el("span", { class: "hint" }, " (named only)") : "",
        t.description ? el("div", { class: "hint" }, t.description) : "",
        el("button", { type: "button", class: "secondary", "data-use": "1" }, "Call…")))) : el("p", {}, "No tool matched."),
      el("h3", {}, "What the model reads"),
      el("p", { id: "search-size" }, `${a.bytes} bytes, about ${a.tokens} tokens`),
      el("pre", { id: "search-text", class: a.isError ? "err" : "" }, a.text));
    out.querySelectorAll("[data-use]").forEach((b, i) => b.addEventListener("click", () => {
      const t = a.ranked[i];
      document.getElementById("call-toolbox").value = t.toolbox;
      document.getElementById("call-server").value = t.server;
      document.getElementById("call-tool").value = t.tool;
      document.getElementById("call-args").focus();
    }));
  } catch (e) {
    out.replaceChildren(el("p", { class: "err", role: "alert" }, e.message));
  }
});

document.getElementById("call-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const out = document.getElementById("call-result");
  const f = ev.target;
  let args;
  try { args = JSON.parse(f.arguments.value || "{}"); } catch (e) {
    out.replaceChildren(el("p", { class: "err", role: "alert" }, "The arguments are not JSON: " + e.message));
    return;
  }
  out.replaceChildren(el("p", {}, "Calling…"));
  try {
    const res = await post("api/call", { toolbox: f.toolbox.value, server: f.server.value, tool: f.tool.value, arguments: args });
    const texts = (res.content || []).filter(c => c.type === "text").map(c => c.text);
    out.replaceChildren(el("h3", {}, res.isError ? "The call failed" : "Result"),
      el("pre", { id: "call-text", class: res.isError ? "err" : "" }, texts.length ? texts.join("\n") : JSON.stringify(res, null, 2)));
  } catch (e) {
    out.replaceChildren(el("p", { class: "err", role: "alert" }, e.message));
  }
});

// --- Review ----------------------------------------------------------------
function diffView(text) {
  return el("pre", { class: "diff" }, text.split("\n").map(l =>
    el("span", { class: l.startsWith("+") && !l.startsWith("+++") ? "diff-add" : l.startsWith("-") && !l.startsWith("---") ? "diff-del" : "" }, l + "\n")));
}

async function loadReview() {
  const out = document.getElementById("review-result");
  out.replaceChildren(el("p", {}, "Starting the servers and comparing their tools with the pins…"));
  try {
    const r = await fetch("api/review", { credentials: "same-origin" });
    const text = await r.text();
    if (!r.ok) throw new Error(text.trim());
    const a = JSON.parse(text);
    const kids = [];
    if (a.failed) kids.push(el("div", { class: "problems" }, el("strong", {}, "Could not start:"), el("ul", {}, a.failed.map(f => el("li", {}, f)))));
    if (!a.items.length) kids.push(el("p", { id: "review-none" }, "No changes: every tool is as it was pinned, and none is flagged."));
    for (const it of a.items) {
      kids.push(el("article", { class: "card review-item" },
        el("h3", {}, el("code", {}, `${it.toolbox}/${it.server}/${it.tool}`), " ", badge(it.kind === "changed" ? "pins" : "idle", it.kind + (it.what ? " (" + it.what.join(", ") + ")" : ""))),
        it.withheld ? el("p", {}, "Withheld: " + it.withheld) : "",
        (it.flags || []).map(f => el("div", { class: "flag" }, "Flagged: " + f)),
        el("div", { class: "side" },
          el("div", {}, el("h4", {}, "Pinned"), el("pre", {}, it.old || "(none)")),
          el("div", {}, el("h4", {}, "Now"), el("pre", {}, it.new || "(removed)"))),
        it.diff ? el("details", {}, el("summary", {}, "Unified diff"), diffView(it.diff)) : ""));
    }
    if (a.pending > 0) {
      const approve = el("button", { type: "button", id: "review-approve" }, a.pending === 1 ? "Approve this definition" : `Approve these ${a.pending} definitions`);
      const keep = el("button", { type: "button", class: "secondary", id: "review-keep" }, "Keep them blocked");
      approve.addEventListener("click", async () => {
        try {
          const done = await post("api/approve", { code: a.code });
          out.replaceChildren(el("p", { id: "review-approved", role: "status" }, "Approved: " + done.approved.join(", ") + ". Hosts see them at their next open_toolbox."));
        } catch (e) { out.append(el("p", { class: "err", role: "alert" }, e.message)); }
      });
      keep.addEventListener("click", () => out.replaceChildren(el("p", { role: "status" }, "Nothing approved: the changed tools stay withheld.")));
      kids.push(el("div", {}, approve, " ", keep));
    }
    out.replaceChildren(...kids);
  } catch (e) {
    out.replaceChildren(el("p", { class: "err", role: "alert" }, e.message));
  }
}
document.getElementById("review-load").addEventListener("click", loadReview);

// --- Activity --------------------------------------------------------------
let activity = [];
function renderActivity() {
  const q = document.getElementById("activity-filter").value.trim().toLowerCase();
  const rows = activity.filter(c => !q || [c.toolbox, c.server, c.tool, c.outcome, c.host].some(v => (v || "").toLowerCase().includes(q)));
  const out = document.getElementById("activity-list");
  if (!rows.length) { out.replaceChildren(el("p", { id: "activity-none" }, activity.length ? "No call matches the filter." : "No call recorded yet.")); return; }
  out.replaceChildren(el("table", { id: "activity-table" },
    el("thead", {}, el("tr", {}, ["Time", "Tool", "Outcome", "Duration", "Result", "Host"].map(h => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows.map(c => el("tr", { "data-call": `${c.toolbox}/${c.server}/${c.tool}`, "data-outcome": c.outcome },
      el("td", { "data-label": "Time" }, new Date(c.time).toLocaleString()),
      el("td", { "data-label": "Tool" }, el("code", {}, `${c.toolbox}/${c.server}/${c.tool}`), c.permission ? el("div", { class: "hint" }, "permission: " + c.permission) : (c.permissionChecked ? el("div", { class: "hint" }, "permission rules applied") : "")),
      el("td", { "data-label": "Outcome" }, badge(c.outcome === "ok" ? "connected" : "error", c.outcome)),
      el("td", { "data-label": "Duration" }, c.ms + " ms"),
      el("td", { "data-label": "Result" }, `${c.bytes} bytes (arguments ${c.argBytes})`),
      el("td", { "data-label": "Host" }, (c.host || "(no name)") + " · pid " + c.pid))))));
}
async function loadActivity() {
  try {
    const r = await fetch("api/activity", { credentials: "same-origin" });
    if (!r.ok) throw new Error((await r.text()).trim());
    activity = await r.json();
    renderActivity();
  } catch (e) {
    document.getElementById("activity-list").replaceChildren(el("p", { class: "err", role: "alert" }, e.message));
  }
}
document.getElementById("activity-filter").addEventListener("input", renderActivity);
document.getElementById("activity-load").addEventListener("click", loadActivity);

// --- Logins ----------------------------------------------------------------
let loginPoll = null;
async function loadLogins() {
  const out = document.getElementById("logins-list");
  try {
    const r = await fetch("api/logins", { credentials: "same-origin" });
    if (!r.ok) throw new Error((await r.text()).trim());
    const list = await r.json();
    if (!list.length) { out.replaceChildren(el("p", {}, "No server of the configuration logs in with OAuth.")); return; }
    const rows = list.map(l => {
      const id = `${l.toolbox}/${l.server}`;
      const actions = el("td", { "data-label": "Action" });
      if (l.busy) actions.append(el("span", { class: "hint" }, "signing in…"));
      else if (l.loggedIn) {
        const b = el("button", { type: "button", class: "secondary", "data-logout": id }, "Sign out");
        b.addEventListener("click", async () => {
          try { await post("api/logout", { toolbox: l.toolbox, server: l.server }); } catch (e) { out.append(el("p", { class: "err", role: "alert" }, e.message)); }
          loadLogins();
        });
        actions.append(b);
      } else {
        const b = el("button", { type: "button", "data-login": id }, "Sign in");
        b.addEventListener("click", async () => {
          try {
            const a = await post("api/login", { toolbox: l.toolbox, server: l.server });
            if (a.authURL) {
              actions.replaceChildren(el("a", { href: a.authURL, target: "_blank", rel: "noopener noreferrer", id: "login-link" }, "Open the sign-in page of " + id));
              actions.querySelector("a").focus();
              if (!loginPoll) loginPoll = setInterval(loadLogins, 1000);
            } else {
              actions.replaceChildren(el("span", {}, a.message));
            }
          } catch (e) { actions.replaceChildren(el("span", { class: "err", role: "alert" }, e.message)); }
        });
        actions.append(b);
      }
      return el("tr", { "data-login-row": id, "data-logged-in": l.loggedIn ? "yes" : "no" },
        el("td", { "data-label": "Server" }, el("code", {}, id)),
        el("td", { "data-label": "Login" }, badge(l.loggedIn ? "connected" : "login", l.loggedIn ? "signed in" : "not signed in"), el("div", { class: "hint" }, l.status), l.last ? el("div", { class: "hint" }, "Last sign-in here: " + l.last) : ""),
        actions);
    });
    // A row being signed in keeps its link until the sign-in ends.
    if (list.some(l => l.busy) && document.getElementById("login-link")) return;
    if (!list.some(l => l.busy) && loginPoll) { clearInterval(loginPoll); loginPoll = null; }
    out.replaceChildren(el("table", {},
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Server"), el("th", { scope: "col" }, "Login"), el("th", { scope: "col" }, "Action"))),
      el("tbody", {}, rows)));
  } catch (e) {
    out.replaceChildren(el("p", { class: "err", role: "alert" }, e.message));
  }
}

show(location.hash.slice(1));
startNow();
