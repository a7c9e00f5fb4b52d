// The agent console: the handoff queue (claim, reply, close), the approvals queue (approve,
// reject: the customer's paused turn resumes) and the session viewer (messages beside the turn
// traces). Agent role only: the API refuses a customer's token on every route used here.
import {
  STATUS_LABELS, call, el, showErrorIn, signInCognito, signInDev, signOut, signedIn,
} from "./api.js";

const $ = (id) => document.getElementById(id);
const REFRESH_MS = 5000;
let me = null;
let openHandoff = null;
let timer = null;
const shown = { handoffs: null, approvals: null };
const PAGE = 50;
const wanted = { handoffs: PAGE, approvals: PAGE }; // "Show more" raises these by a page

// The first `want` items of a queue, oldest first, following the API's cursors (a page may hold
// fewer than it was asked for), and how many wait in all (the first page's `total`).
async function queue(path, want) {
  const items = [];
  let total = null;
  let cursor = null;
  do {
    const query = new URLSearchParams({ limit: String(Math.min(100, want - items.length)) });
    if (cursor) query.set("cursor", cursor);
    const page = await call(`${path}?${query}`);
    if (total === null) total = page.total ?? null;
    items.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor && items.length < want);
  return { items, total: total ?? items.length, more: Boolean(cursor) };
}

// The "Show more" button under a queue while older items remain unshown.
function showMore(list, name, more, load) {
  if (!more) return;
  $(list).append(el("li", { class: "more" }, el("button", { type: "button", class: "secondary", id: `more-${name}`,
    onclick: async () => { wanted[name] += PAGE; shown[name] = null; await load(); } }, "Show more")));
}

function showError(error) {
  showErrorIn($("error"), error, start);
}

function notice(text) {
  $("error").hidden = true;
  $("notice").textContent = text;
}

function when(value) {
  return value ? new Date(value).toLocaleString() : "";
}

function money(value) {
  return value === null || value === undefined ? "—" : `$${Number(value).toFixed(2)}`;
}

// -- tabs ---------------------------------------------------------------------------------------
const TABS = ["handoffs", "approvals", "session"];

function select(name) {
  for (const tab of TABS) {
    const on = tab === name;
    $(`tab-${tab}`).setAttribute("aria-selected", String(on));
    $(`tab-${tab}`).tabIndex = on ? 0 : -1;
    $(`panel-${tab}`).hidden = !on;
  }
  $(`tab-${name}`).focus();
}

TABS.forEach((tab, i) => {
  $(`tab-${tab}`).addEventListener("click", () => select(tab));
  $(`tab-${tab}`).addEventListener("keydown", (event) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    if (step) select(TABS[(i + step + TABS.length) % TABS.length]);
  });
});

// -- handoffs -----------------------------------------------------------------------------------
async function loadHandoffs() {
  const page = await queue("/v1/agent/handoffs", wanted.handoffs);
  $("count-handoffs").textContent = `(${page.total})`;
  const seen = JSON.stringify([page.more, page.items.map((h) => [h.handoff_id, h.status, h.claimed_by])]);
  if (seen === shown.handoffs) return; // unchanged: leave the list (and the focus) alone
  shown.handoffs = seen;
  $("handoffs").replaceChildren(...page.items.map((h) => el("li", { "data-handoff": h.handoff_id, "data-session": h.session_id },
    el("div", { class: "row" },
      el("strong", {}, `${h.urgency} · ${h.reasons.join(", ").replace(/_/g, " ")}`),
      el("span", { class: "badge" }, h.status)),
    el("div", {}, h.requests[0] || ""),
    el("div", { class: "meta" }, `${h.customer_id} · ${when(h.created_at)}${h.claimed_by ? ` · claimed by ${h.claimed_by}` : ""}`),
    el("button", { type: "button", class: "secondary open-handoff", onclick: () => showHandoff(h.handoff_id),
                   "aria-label": `Open handoff from ${h.customer_id}` }, "Open"))));
  if (!page.items.length) $("handoffs").append(el("li", { class: "meta" }, "Nothing waiting."));
  showMore("handoffs", "handoffs", page.more, loadHandoffs);
}

async function showHandoff(id) {
  const h = await call(`/v1/agent/handoffs/${encodeURIComponent(id)}`);
  openHandoff = h.handoff_id;
  const mine = h.claimed_by === me.subject;
  const box = $("handoff");
  box.hidden = false;
  box.dataset.handoff = h.handoff_id;
  box.dataset.status = h.status;
  box.replaceChildren(
    el("h2", {}, `Handoff · ${h.customer_id}`),
    el("dl", { class: "kv" },
      el("dt", {}, "Status"), el("dd", { id: "handoff-status" }, h.status + (h.claimed_by ? ` (${h.claimed_by})` : "")),
      el("dt", {}, "Urgency"), el("dd", {}, h.urgency),
      el("dt", {}, "Why"), el("dd", {}, h.reasons.join(", ").replace(/_/g, " ")),
      el("dt", {}, "At stake"), el("dd", {}, money(h.amount_at_stake)),
      el("dt", {}, "Session"), el("dd", {}, el("button", { type: "button", class: "link",
        onclick: () => { select("session"); $("session-id").value = h.session_id; showSession(h.session_id); } },
        h.session_id))),
    el("h3", {}, "Summary"), el("p", {}, h.summary),
    el("h3", {}, "Next action"), el("p", {}, h.next_action),
    el("h3", {}, "What the customer asked"), el("ul", {}, h.requests.map((r) => el("li", {}, r))),
    h.tasks.length ? el("h3", {}, "What the assistant tried") : null,
    h.tasks.length ? taskTable(h.tasks.map((t) => ({ ...t, error: t.error_message }))) : null,
    el("h3", {}, "Conversation with the customer"),
    el("ol", { class: "log", id: "thread" }, h.messages.map((m) => el("li", { class: `msg ${m.role}` },
      el("span", { class: "from" }, `${m.role === "agent" ? m.author || "agent" : "Customer"} · ${when(m.at)}`),
      m.text))),
    h.status === "open" ? el("button", { type: "button", id: "claim", onclick: () => act(`claim`) }, "Claim") : null,
    h.status === "claimed" && mine ? el("form", { id: "reply-form", "aria-label": "Reply to the customer",
      onsubmit: (event) => { event.preventDefault(); reply(); } },
      el("label", { for: "reply" }, "Reply to the customer"),
      el("textarea", { id: "reply", rows: "3", maxlength: "4000", required: true }),
      el("div", { class: "row" },
        el("button", { type: "submit", id: "send-reply" }, "Send reply"),
        el("button", { type: "button", id: "close", class: "secondary", onclick: () => act("close") },
           "Close handoff"))) : null,
    h.status === "claimed" && !mine ? el("p", { class: "hint" }, `Claimed by ${h.claimed_by}.`) : null,
  );
}

async function act(what) {
  try {
    await call(`/v1/agent/handoffs/${encodeURIComponent(openHandoff)}/${what}`, { method: "POST" });
    notice(what === "claim" ? "Claimed: you can reply now." : "Closed.");
    await showHandoff(openHandoff);
    await loadHandoffs();
  } catch (error) {
    showError(error);
  }
}

async function reply() {
  const text = $("reply").value.trim();
  if (!text) return;
  try {
    await call(`/v1/agent/handoffs/${encodeURIComponent(openHandoff)}/replies`, { method: "POST", body: { text } });
    notice("Reply sent: the customer sees it in their chat.");
    await showHandoff(openHandoff);
  } catch (error) {
    showError(error);
  }
}

// -- approvals ----------------------------------------------------------------------------------
async function loadApprovals() {
  const page = await queue("/v1/agent/approvals", wanted.approvals);
  $("count-approvals").textContent = `(${page.total})`;
  const seen = JSON.stringify([page.more, page.items.map((a) => a.approval_id)]);
  if (seen === shown.approvals) return; // unchanged: a note being typed stays
  shown.approvals = seen;
  $("approvals").replaceChildren(...page.items.map((a) => {
    const note = el("input", { "aria-label": "Note for the record (optional)", placeholder: "Note (optional)",
                               maxlength: "1000", class: "note" });
    return el("li", { "data-approval": a.approval_id },
      el("div", { class: "row" }, el("strong", {}, `${a.action.replace(/_/g, " ")} · ${money(a.amount)}`),
         el("span", { class: "meta" }, `${a.customer_id} · expires ${when(a.expires_at)}`)),
      el("p", {}, a.summary),
      el("div", { class: "meta" }, el("button", { type: "button", class: "link",
        onclick: () => { select("session"); $("session-id").value = a.session_id; showSession(a.session_id); } },
        `session ${a.session_id}`)),
      note,
      el("div", { class: "row" },
        el("button", { type: "button", class: "approve", onclick: () => decide(a, "approve", note.value),
                       "aria-label": `Approve ${a.action} of ${money(a.amount)} for ${a.customer_id}` }, "Approve"),
        el("button", { type: "button", class: "reject danger", onclick: () => decide(a, "reject", note.value),
                       "aria-label": `Reject ${a.action} of ${money(a.amount)} for ${a.customer_id}` }, "Reject")));
  }));
  if (!page.items.length) $("approvals").append(el("li", { class: "meta" }, "Nothing waiting."));
  showMore("approvals", "approvals", page.more, loadApprovals);
}

async function decide(approval, decision, note) {
  try {
    const body = { decision };
    if (note.trim()) body.note = note.trim();
    const out = await call(`/v1/approvals/${encodeURIComponent(approval.approval_id)}`, { method: "POST", body });
    notice(`${decision === "approve" ? "Approved" : "Rejected"}${out.resumed
      ? ": the customer's conversation went on and they see the outcome." : "."}`);
    await loadApprovals();
  } catch (error) {
    showError(error);
  }
}

// -- session viewer ------------------------------------------------------------------------------
function taskTable(tasks) {
  return el("table", {},
    el("thead", {}, el("tr", {}, ["task", "tool", "status", "ms", "attempts", "healing / error"]
      .map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, tasks.map((t) => el("tr", {},
      el("td", {}, t.task_type), el("td", {}, t.tool), el("td", {}, t.status),
      el("td", {}, Math.round(t.latency_ms ?? 0)), el("td", {}, t.attempts ?? 1),
      el("td", {}, [
        ...(t.heal || []).map((h) => `${h.action}: ${h.reason}`),
        t.error ? (typeof t.error === "string" ? t.error : `${t.error.type}: ${t.error.message}`) : "",
      ].filter(Boolean).join("; "))))));
}

async function showSession(id) {
  try {
    const s = await call(`/v1/agent/sessions/${encodeURIComponent(id)}`);
    $("session").replaceChildren(
      el("div", { class: "card" },
        el("h2", {}, `Messages · ${s.customer_id || ""}`),
        el("p", {}, el("span", { class: `badge ${s.status}` }, STATUS_LABELS[s.status] || s.status)),
        s.summary ? el("p", { class: "hint" }, `Earlier: ${s.summary}`) : null,
        el("ol", { class: "log", "aria-label": "Public messages" },
          s.messages.map((m) => el("li", { class: `msg ${m.role}` }, el("span", { class: "from" }, m.role), m.text)))),
      el("div", { class: "card", id: "turns" },
        el("h2", {}, "Turn traces"),
        s.turns.map((t) => {
          const usage = t.trace.usage || {};
          const rest = { ...t.trace };
          delete rest.usage;
          return el("section", { class: "turn", "data-turn": t.turn, "aria-label": `Turn ${t.turn}` },
            el("h3", {}, `Turn ${t.turn} · ${t.status} · route ${t.route} (${t.confidence})`),
            el("p", { class: "hint" }, `“${t.text}”`),
            el("dl", { class: "kv" },
              el("dt", {}, "model calls"), el("dd", {}, String(usage.model_calls ?? 0)),
              el("dt", {}, "tokens in / out"), el("dd", {}, `${usage.input_tokens ?? 0} / ${usage.output_tokens ?? 0}`),
              el("dt", {}, "cost"), el("dd", {}, `$${(usage.cost_usd ?? 0).toFixed(6)}`),
              el("dt", {}, "nodes (ms)"), el("dd", {}, Object.entries(t.node_timings_ms)
                .map(([k, v]) => `${k} ${Math.round(v)}`).join(", "))),
            t.tasks.length ? taskTable(t.tasks) : el("p", { class: "hint" }, "No tasks."),
            Object.keys(rest).length ? el("details", {}, el("summary", {}, "notes (guards, degradations, handoff)"),
              el("pre", {}, JSON.stringify(rest, null, 2))) : null);
        })));
  } catch (error) {
    showError(error);
  }
}

$("session-form").addEventListener("submit", (event) => {
  event.preventDefault();
  showSession($("session-id").value.trim());
});

// -- start --------------------------------------------------------------------------------------
/** The open handoff's thread (new customer messages), leaving a reply being typed alone. */
async function refreshThread() {
  if (!openHandoff || $("handoff").hidden || !$("thread")) return;
  const h = await call(`/v1/agent/handoffs/${encodeURIComponent(openHandoff)}`);
  if (h.messages.length !== $("thread").children.length || h.status !== $("handoff").dataset.status) {
    await showHandoff(openHandoff);
  }
}

async function refreshAll() {
  try {
    await Promise.all([loadHandoffs(), loadApprovals(), refreshThread()]);
  } catch (error) {
    showError(error);
  }
  clearTimeout(timer);
  timer = setTimeout(refreshAll, REFRESH_MS);
}

async function start() {
  const signed = await signedIn(showError);
  const cfg = signed.cfg;
  me = signed.me;
  if (!me || me.role !== "agent") {
    $("work").hidden = true;
    $("signin").hidden = false;
    $("who").replaceChildren();
    if (cfg.auth === "cognito") {
      $("cognito-signin").hidden = false;
      $("cognito-button").onclick = () => signInCognito();
    } else {
      $("dev-signin").hidden = false;
      $("agent").focus();
    }
    return;
  }
  $("signin").hidden = true;
  $("work").hidden = false;
  $("who").replaceChildren(el("span", {}, `Agent ${me.subject}`),
    el("button", { type: "button", class: "link", onclick: () => { signOut(); location.reload(); } }, "Sign out"));
  await refreshAll();
}

$("dev-signin").addEventListener("submit", (event) => {
  event.preventDefault();
  signInDev($("agent").value.trim(), "agent");
  start();
});
$("refresh").addEventListener("click", refreshAll);

start().catch(showError);
