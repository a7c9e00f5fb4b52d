// The customer chat: sign in, talk to the assistant (streamed), confirm changes, resume after a
// reload, see a person's replies. Reads and writes only through the public API (api.js).
import {
  ApiError, STATUS_LABELS, call, el, showErrorIn, signInCognito, signInDev, signOut, signedIn,
  streamTurn,
} from "./api.js";

const $ = (id) => document.getElementById(id);
const MAX_IMAGE_BYTES = 3 * 1024 * 1024;
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"];
const POLL_MS = 3000;

let me = null;
let sessionId = null;
let busy = false;
let attachment = null; // {name, image}: `image` is what the API takes, the name is for the log
let pollTimer = null;
let lastSeen = "";

// -- the session --------------------------------------------------------------------------------
function sessionKey() {
  return `csagent.session.${me.subject}`;
}

function newSessionId() {
  return "web-" + crypto.randomUUID().replace(/-/g, "").slice(0, 20);
}

function useSession(id) {
  sessionId = id;
  localStorage.setItem(sessionKey(), id);
  $("session-label").textContent = `Conversation ${id}`;
}

// -- rendering ----------------------------------------------------------------------------------
function badge(status) {
  if (!status) return null;
  return el("span", { class: `badge ${status}`, "data-status": status,
                      "aria-label": `Status: ${STATUS_LABELS[status] || status}` },
            STATUS_LABELS[status] || status);
}

function citations(list) {
  if (!list || !list.length) return null;
  const seen = new Set();
  const items = list.filter((c) => !seen.has(c.chunk_id) && seen.add(c.chunk_id));
  return el("div", { class: "citations", "aria-label": "Sources" },
    el("span", { class: "hint" }, "Sources:"),
    items.map((c) => el("details", { class: "citation" },
      el("summary", {}, [c.title, c.section].filter(Boolean).join(" — ")),
      el("blockquote", {}, c.text || ""))));
}

function proposal(proposed, live) {
  if (!proposed || !proposed.length) return null;
  const box = el("div", { class: "proposal", role: "group", "aria-label": "Proposed change" },
    el("strong", {}, proposed.length > 1 ? "If you say yes, these will change:" : "If you say yes, this will change:"),
    el("ul", {}, proposed.map((p) => el("li", { class: "proposed" }, p.summary,
      p.requires_approval ? el("span", { class: "hint" }, " (a colleague approves refunds this large first)") : null))));
  if (live) {
    box.append(el("div", { class: "actions" },
      el("button", { type: "button", class: "yes", onclick: () => answer("yes"),
                     "aria-label": "Yes, make the change" }, "Yes"),
      el("button", { type: "button", class: "no secondary", onclick: () => answer("no"),
                     "aria-label": "No, leave it as it is" }, "No")));
  }
  return box;
}

function message(role, text, extra = {}) {
  const from = { customer: "You", assistant: "Assistant", agent: "Our team" }[role] || role;
  const body = el("div", { class: "body" }, text);
  const item = el("li", { class: `msg ${role}`, "data-role": role },
    el("span", { class: "from" }, from), body);
  if (extra.status) item.append(badge(extra.status));
  const box = proposal(extra.proposed, extra.live);
  if (box) item.append(box);
  const cites = citations(extra.citations);
  if (cites) item.append(cites);
  return item;
}

/** Disable every Yes / No still live; the buttons it disabled. */
function disableOldAnswers() {
  const live = [...document.querySelectorAll(".proposal button:not([disabled])")];
  for (const button of live) button.disabled = true;
  return live;
}

/** The public messages with a person's replies placed where they came in the thread. */
function timeline(session) {
  const log = (session.messages || []).map((m) => ({ role: m.role, text: m.text }));
  const thread = session.handoff?.messages || [];
  const after = new Map();
  let pointer = -1;
  let waiting = [];
  const place = (index, items) => after.set(index, [...(after.get(index) || []), ...items]);
  for (const m of thread) {
    if (m.role === "customer") {
      const j = log.findIndex((x, i) => i > pointer && x.role === "customer" && x.text === m.text);
      if (j < 0) continue;
      if (waiting.length) place(j - 1, waiting);
      waiting = [];
      pointer = log[j + 1]?.role === "assistant" ? j + 1 : j;
    } else if (m.role === "agent") {
      if (pointer >= 0) place(pointer, [{ role: "agent", text: m.text }]);
      else waiting.push({ role: "agent", text: m.text });
    }
  }
  place(log.length - 1, waiting);
  const out = [...(after.get(-1) || [])];
  log.forEach((m, i) => out.push(m, ...(after.get(i) || [])));
  return out;
}

/** The session's standing as the customer should read it: once an agent has closed the hand-off
 * and nobody has written since, "closed by our team" (the API says the session is active again;
 * the last assistant message is still the one that handed off). */
function standing(session) {
  const closed = session.handoff?.status === "closed" && ["active", "handed_off"].includes(session.status);
  return closed ? "handoff_closed" : session.status;
}

function render(session) {
  const list = $("log");
  list.replaceChildren();
  const items = timeline(session);
  const lastAssistant = items.map((m) => m.role).lastIndexOf("assistant");
  items.forEach((m, i) => {
    const last = i === lastAssistant;
    list.append(message(m.role, m.text, last ? {
      status: standing(session), proposed: session.proposed, live: session.status === "awaiting_confirmation",
    } : {}));
  });
  if (session.handoff) {
    $("progress").textContent = session.handoff.status === "closed"
      ? "Our team has closed this conversation. Write again any time: the assistant answers." : session.handoff.status === "claimed"
        ? "A person from our team is looking after you." : "Waiting for a person from our team.";
  }
  if (list.lastElementChild) reveal(list.lastElementChild);
}

/** Scroll the log (it scrolls inside the page) to show `item`: its end, or its start when it is
 * taller than the log, so a long answer is read from its first line. Scrolling moves nothing. */
function reveal(item) {
  item.scrollIntoView({ block: item.offsetHeight > $("log").clientHeight ? "start" : "end" });
}

function showError(error) {
  showErrorIn($("error"), error, start);
}

function clearError() {
  $("error").hidden = true;
  $("error").textContent = "";
}

// -- polling while a person is involved ---------------------------------------------------------
function fingerprint(session) {
  return JSON.stringify([session.status, session.messages?.length, session.handoff?.status,
                         session.handoff?.messages?.length]);
}

async function refresh() {
  try {
    const session = await call(`/v1/sessions/${encodeURIComponent(sessionId)}`);
    const seen = fingerprint(session);
    if (seen !== lastSeen && !busy) {
      lastSeen = seen;
      render(session);
    }
    schedulePoll(session.status, session.handoff);
    return session;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null; // a new conversation
    showError(error);
    return null;
  }
}

/** Poll while someone else has the next move: a refund waits for approval, or a person has (or
 * is about to take) the conversation. A closed hand-off ends it; a turn that just handed off
 * (`handoff` not read yet) polls until the session says how the hand-off stands. */
function schedulePoll(status, handoff) {
  clearTimeout(pollTimer);
  const withPerson = handoff ? handoff.status !== "closed" : status === "handed_off";
  if (status === "awaiting_approval" || withPerson) pollTimer = setTimeout(refresh, POLL_MS);
}

// -- sending ------------------------------------------------------------------------------------
function setBusy(value) {
  busy = value;
  $("send").disabled = value;
  $("text").setAttribute("aria-busy", String(value));
}

/** Send `text` as the next turn. If it is refused or fails, nothing is lost: the message leaves
 * the log, typed text goes back into the box (unless something new was typed there), the photo
 * stays attached, and a Yes / No that was pressed can be pressed again. */
async function send(text, { typed = true } = {}) {
  clearError();
  clearTimeout(pollTimer);
  const answered = disableOldAnswers();
  const payload = { text };
  if (attachment) payload.attachments = [attachment.image];
  const mine = message("customer", attachment ? `${text}\n📎 ${attachment.name}` : text);
  $("log").append(mine);
  const pending = message("assistant", "");
  pending.setAttribute("aria-busy", "true");
  const body = pending.querySelector(".body");
  $("log").append(pending);
  reveal(pending);
  setBusy(true);
  try {
    const turn = await streamTurn(sessionId, payload, (name, data) => {
      if (name === "progress") $("progress").textContent = data.label + "…";
      else if (name === "answer") {
        body.textContent += data.text;
        reveal(pending);
      }
    });
    const done = message("assistant", turn.reply?.text ?? body.textContent, {
      status: turn.status, citations: turn.reply?.citations, proposed: turn.proposed,
      live: turn.status === "awaiting_confirmation",
    });
    pending.replaceWith(done);
    reveal(done);
    $("progress").textContent = "";
    clearAttachment();
    lastSeen = "";
    schedulePoll(turn.status, null);
  } catch (error) {
    pending.remove();
    mine.remove();
    $("progress").textContent = "";
    if (typed && !$("text").value.trim()) $("text").value = text;
    for (const button of answered) button.disabled = false;
    showError(error);
  } finally {
    setBusy(false);
    $("text").focus();
  }
}

function answer(word) {
  if (busy) showError(new ApiError(409, "conflict", "still working on the last message"));
  else send(word, { typed: false });
}

function clearAttachment() {
  attachment = null;
  $("image").value = "";
  $("attached").textContent = "";
}

function readImage(file) {
  return new Promise((resolve, reject) => {
    if (!IMAGE_TYPES.includes(file.type)) {
      reject(new ApiError(422, "bad_attachment", "a photo must be a PNG, JPEG, WebP or GIF image"));
      return;
    }
    if (file.size > MAX_IMAGE_BYTES) {
      reject(new ApiError(413, "image_too_large", "the photo is over 3 MB"));
      return;
    }
    const reader = new FileReader();
    // The API's attachment is exactly {type, media_type, data}: another field is a 422.
    reader.onload = () => resolve({ name: file.name, image: {
      type: "image", media_type: file.type, data: String(reader.result).split(",")[1] } });
    reader.onerror = () => reject(new Error("the photo could not be read"));
    reader.readAsDataURL(file);
  });
}

// -- start --------------------------------------------------------------------------------------
function showSignedIn() {
  $("who").replaceChildren(
    el("span", {}, `Signed in as ${me.subject}`),
    el("button", { type: "button", class: "link", id: "signout", onclick: () => { signOut(); location.reload(); } },
       "Sign out"));
}

async function showSignIn(cfg) {
  $("chat").hidden = true;
  $("signin").hidden = false;
  $("who").replaceChildren();
  if (cfg.auth === "cognito") {
    $("cognito-signin").hidden = false;
    $("cognito-button").onclick = () => signInCognito();
    return;
  }
  $("dev-signin").hidden = false;
  try {
    const response = await fetch("dev/customers");
    if (response.ok) {
      const customers = await response.json();
      $("customers").replaceChildren(...customers.map((c) => el("option", { value: c.customer_id }, c.name)));
    }
  } catch { /* the list is a convenience; any customer id can be typed */ }
  $("customer").focus();
}

async function start() {
  const signed = await signedIn(showError);
  const cfg = signed.cfg;
  me = signed.me;
  if (!me || me.role !== "customer") {
    await showSignIn(cfg);
    return;
  }
  $("signin").hidden = true;
  $("chat").hidden = false;
  showSignedIn();
  useSession(localStorage.getItem(sessionKey()) || newSessionId());
  await refresh();
  $("text").focus();
}

$("dev-signin").addEventListener("submit", (event) => {
  event.preventDefault();
  const id = $("customer").value.trim();
  if (!id) return;
  signInDev(id, "customer");
  start();
});

$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  if (busy) { // kept in the box: the customer sends it once the answer to the last one is in
    showError(new ApiError(409, "conflict", "still working on the last message"));
    return;
  }
  $("text").value = "";
  send(text);
});

$("text").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
});

$("image").addEventListener("change", async () => {
  const file = $("image").files[0];
  if (!file) return clearAttachment();
  try {
    attachment = await readImage(file);
    $("attached").textContent = `${file.name} will be sent with your message`;
    clearError();
  } catch (error) {
    clearAttachment();
    showError(error);
  }
});

$("new-session").addEventListener("click", () => {
  clearTimeout(pollTimer);
  useSession(newSessionId());
  lastSeen = "";
  $("log").replaceChildren();
  $("progress").textContent = "";
  clearError();
  $("text").focus();
});

start().catch(showError);
