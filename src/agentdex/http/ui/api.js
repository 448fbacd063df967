// The page's only way to the server: the documented HTTP API, with the bearer token.
// The token lives in sessionStorage (this tab only); it never goes into a URL.

const TOKEN_KEY = "agentdex.token";

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** A failed API call: `status`, and the server's message when it sent one. */
export class ApiError extends Error {
  constructor(status, body) {
    super(describe(status, body));
    this.status = status;
    this.body = body;
  }
}

function describe(status, body) {
  if (body && typeof body.message === "string") return body.message;
  if (body && Array.isArray(body.detail)) {
    return body.detail.map((d) => `${(d.loc || []).slice(1).join(".")}: ${d.msg}`).join("; ");
  }
  if (body && typeof body.detail === "string") return body.detail;
  return `request failed (HTTP ${status})`;
}

const listeners = new Set();

/** Call `fn` whenever the server refuses the token (401). */
export function onUnauthorized(fn) {
  listeners.add(fn);
}

function url(path, params) {
  const out = new URL(path, location.origin);
  for (const [key, value] of Object.entries(params || {})) {
    if (value === undefined || value === null || value === "" || value === false) continue;
    out.searchParams.set(key, value === true ? "true" : String(value));
  }
  return out;
}

function headers(extra) {
  return { Authorization: `Bearer ${token() || ""}`, ...extra };
}

async function failure(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (response.status === 401) for (const fn of listeners) fn();
  return new ApiError(response.status, body);
}

/** GET/POST/PUT/DELETE `path` under the API; resolves to the JSON body (null for 204). */
export async function api(path, { params, method = "GET", body, signal } = {}) {
  const init = { method, signal, headers: headers() };
  if (body !== undefined) {
    init.headers = headers({ "Content-Type": "application/json" });
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url(path, params), init);
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return null;
  return response.json();
}

/** GET a document (not JSON): resolves to the Response, for `.text()` or `.blob()`. */
export async function fetchDocument(path, params, signal) {
  const response = await fetch(url(path, params), { signal, headers: headers() });
  if (!response.ok) throw await failure(response);
  return response;
}

/**
 * Server-sent events over fetch (EventSource cannot send the Authorization header).
 * Calls `onEvent(name, data)` per event until the stream ends or `signal` aborts.
 */
export async function stream(path, params, onEvent, signal) {
  const response = await fetch(url(path, params), {
    signal,
    headers: headers({ Accept: "text/event-stream" }),
  });
  if (!response.ok) throw await failure(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue; // keepalive comment
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length) onEvent(name, JSON.parse(data.join("\n")));
    }
  }
}

/** Trade a one-time login code (from `agentdex ui`) for the token. */
export async function redeemLoginCode(code) {
  const response = await fetch("/ui/login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ code }),
  });
  const body = await response.json().catch(() => null);
  if (!response.ok || !body || typeof body.token !== "string") {
    throw new ApiError(response.status, body);
  }
  return body.token;
}

let openapi = null;

/** The API's own OpenAPI document (public), to offer actions only where routes exist. */
export async function routes() {
  if (!openapi) {
    openapi = fetch("/openapi.json")
      .then((r) => (r.ok ? r.json() : { paths: {} }))
      .catch(() => ({ paths: {} }));
  }
  return (await openapi).paths || {};
}
