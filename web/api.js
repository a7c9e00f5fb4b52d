// The pages' one door to the API: configuration, sign-in, JSON calls, the streamed turn, errors
// in plain words. Plain ES module, no build step, no dependency. Nothing secret lives here: the
// only credential is the signed-in person's own token, kept in sessionStorage for this tab.

const TOKEN_KEY = "csagent.token";
let config = null;

/** The deployment's public settings: /config.json beside the pages (written by the local server,
 * or uploaded with the pages in AWS). {auth: "dev"|"cognito", api_base, stream_base, cognito?} */
export async function loadConfig() {
  if (config) return config;
  const response = await fetch("config.json", { cache: "no-store" });
  if (!response.ok) throw new Error("the page's configuration (config.json) could not be read");
  config = await response.json();
  config.api_base = config.api_base || "";
  config.stream_base = config.stream_base || config.api_base;
  return config;
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function signInDev(subject, role = "customer") {
  const prefix = role === "agent" ? "dev-agent:" : "dev:";
  sessionStorage.setItem(TOKEN_KEY, prefix + subject);
}

export function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** Who the token says is signed in: {subject, role} (dev tokens) or the ID token's claims. */
export function whoAmI() {
  const value = token();
  if (!value) return null;
  const dev = /^dev(-agent)?:(.+)$/.exec(value);
  if (dev) return { subject: dev[2], role: dev[1] ? "agent" : "customer" };
  try {
    const claims = JSON.parse(atob(value.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
    const groups = claims["cognito:groups"] || [];
    return { subject: claims["custom:customer_id"] || claims.email || claims.sub,
             role: groups.includes("agent") ? "agent" : "customer", expires: claims.exp };
  } catch {
    return null;
  }
}

// -- Cognito hosted UI: authorization code with PKCE (no client secret; public app client) ------
function base64url(bytes) {
  return btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

export async function signInCognito() {
  const { cognito } = await loadConfig();
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(48)));
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const challenge = base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  sessionStorage.setItem("csagent.pkce", JSON.stringify({ verifier, state }));
  const query = new URLSearchParams({
    response_type: "code", client_id: cognito.client_id, redirect_uri: location.origin + location.pathname,
    scope: "openid email", code_challenge_method: "S256", code_challenge: challenge, state,
  });
  location.assign(`https://${cognito.domain}/oauth2/authorize?${query}`);
}

/** Back from the hosted UI with ?code=…: exchange it for the ID token, then clean the address. */
export async function completeCognitoSignIn() {
  const params = new URLSearchParams(location.search);
  const code = params.get("code");
  if (!code) return false;
  const saved = JSON.parse(sessionStorage.getItem("csagent.pkce") || "null");
  sessionStorage.removeItem("csagent.pkce");
  history.replaceState(null, "", location.pathname);
  if (!saved || saved.state !== params.get("state")) throw new ApiError(401, "sign_in_failed",
    "the sign-in could not be completed; please sign in again");
  const { cognito } = await loadConfig();
  const response = await fetch(`https://${cognito.domain}/oauth2/token`, {
    method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", client_id: cognito.client_id, code,
                                redirect_uri: location.origin + location.pathname,
                                code_verifier: saved.verifier }),
  });
  if (!response.ok) throw new ApiError(401, "sign_in_failed", "the sign-in could not be completed");
  sessionStorage.setItem(TOKEN_KEY, (await response.json()).id_token);
  return true;
}

// -- errors ---------------------------------------------------------------------------------------
export class ApiError extends Error {
  constructor(status, code, message, retryAfter = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

async function errorOf(response) {
  let code = "http_error";
  let message = response.statusText;
  try {
    const body = await response.json();
    code = body.error?.code || code;
    message = body.error?.message || message;
  } catch { /* not JSON: keep the status text */ }
  const retry = response.headers.get("Retry-After");
  return new ApiError(response.status, code, message, retry ? Number(retry) : null);
}

/** What to tell a person about an error, in their words. */
export function describe(error) {
  if (!(error instanceof ApiError)) {
    return "We could not reach the store's assistant. Check your connection and try again.";
  }
  switch (error.status) {
    case 401: return error.code === "sign_in_failed"
      ? "We could not complete your sign-in. Please sign in again."
      : "You are signed out. Please sign in again.";
    case 403: return "This is not yours to open: " + error.message + ".";
    case 404: return "Not found: " + error.message + ".";
    case 409: return error.code === "session_busy" || /busy|still/i.test(error.message)
      ? "Still working on your last message. Please wait for its answer, then send this one again."
      : "That was already done by someone else: " + error.message + ".";
    case 413: return error.code === "image_too_large"
      ? "That photo is too large. Please send one under 3 MB."
      : "That is too large to send. A message with its pictures must be under 6 MB.";
    case 422: return "That could not be sent: " + error.message + ".";
    case 429: return `You are sending messages faster than we can answer. Please wait ${
      error.retryAfter ?? "a few"} seconds and try again.`;
    default: return "Something went wrong on our side. Nothing was changed; please try again.";
  }
}

// -- calls ----------------------------------------------------------------------------------------
function headers(json = true) {
  const out = {};
  if (json) out["Content-Type"] = "application/json";
  const value = token();
  if (value) out.Authorization = "Bearer " + value;
  return out;
}

/** Show `error` in `box` in plain words; a 401 signs out and runs `restart` (the sign-in again). */
export function showErrorIn(box, error, restart) {
  box.textContent = describe(error);
  box.dataset.status = error instanceof ApiError ? String(error.status) : "network";
  box.hidden = false;
  if (error instanceof ApiError && error.status === 401) {
    signOut();
    setTimeout(restart, 0);
  }
}

/** The pages' configuration and who is signed in, once a Cognito sign-in the hosted UI redirected
 * back from is completed (`onError` shows a failed one). */
export async function signedIn(onError) {
  const cfg = await loadConfig();
  if (cfg.auth === "cognito") {
    try { await completeCognitoSignIn(); } catch (error) { onError(error); }
  }
  return { cfg, me: whoAmI() };
}

export async function call(path, { method = "GET", body } = {}) {
  const { api_base } = await loadConfig();
  let response;
  try {
    response = await fetch(api_base + path, {
      method, headers: headers(body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "network", "the network request failed");
  }
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

/** One streamed turn: calls onEvent(name, data) for each server-sent event; resolves with the
 * `done` body. A refusal before the stream starts is an ApiError (401/409/413/422/429). */
export async function streamTurn(sessionId, message, onEvent) {
  const { stream_base } = await loadConfig();
  let response;
  try {
    response = await fetch(`${stream_base}/v1/sessions/${encodeURIComponent(sessionId)}/messages:stream`, {
      method: "POST", headers: headers(), body: JSON.stringify(message),
    });
  } catch {
    throw new ApiError(0, "network", "the network request failed");
  }
  if (!response.ok) throw await errorOf(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let done = null;
  for (;;) {
    const { value, done: finished } = await reader.read();
    if (finished) break;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = null;
      let data = null;
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data = JSON.parse(line.slice(6));
      }
      if (!name) continue; // a keep-alive comment
      if (name === "error") throw new ApiError(500, data.error.code, data.error.message);
      if (name === "done") done = data;
      onEvent(name, data);
    }
  }
  if (!done) throw new ApiError(500, "interrupted", "the answer was cut off");
  return done;
}

/** An element with text content (never innerHTML: replies and names are untrusted text). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export const STATUS_LABELS = {
  answered: "Answered",
  partial: "Partly answered",
  needs_clarification: "Needs your answer",
  awaiting_confirmation: "Waiting for your yes",
  awaiting_approval: "Waiting for approval",
  handed_off: "With a person",
  handoff_closed: "Closed by our team",
  refused: "Not something we can help with",
  active: "Open",
};
