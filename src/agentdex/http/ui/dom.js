// Small DOM and formatting helpers. Text from the server only ever becomes text nodes
// (never innerHTML), so a transcript cannot inject markup into the page.

/**
 * h("a.cls#id", {href, onclick, title, dataset...}, ...children): an element.
 * Strings become text nodes; null/false children are skipped; arrays are flattened.
 */
export function h(tag, attrs, ...children) {
  const [name, ...rest] = tag.split(/(?=[.#])/);
  const el = document.createElement(name || "div");
  for (const part of rest) {
    if (part[0] === ".") el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "class") el.className = value;
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

/** Replace the children of `el` (arrays flattened, null skipped, strings as text). */
export function fill(el, ...children) {
  append(clear(el), children);
  return el;
}

const units = ["B", "KB", "MB", "GB"];

export function bytes(n) {
  if (n === null || n === undefined) return "";
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

export function count(n) {
  return Number(n || 0).toLocaleString("en-US");
}

/** A token count in three significant digits: 2.35M, 48.2k, 950. */
export function tokens(n) {
  const value = Number(n || 0);
  for (const [unit, size] of [
    ["B", 1e9],
    ["M", 1e6],
    ["k", 1e3],
  ]) {
    if (value < size) continue;
    const scaled = value / size;
    // 2.35M, 48.2k, 100k (only zeros after a point go: "100" stays 100)
    const text = scaled >= 1000 ? Math.round(scaled).toLocaleString("en-US") : scaled.toPrecision(3);
    return `${text.includes(".") ? text.replace(/\.?0+$/, "") : text}${unit}`;
  }
  return String(value);
}

export function plural(n, word, many = `${word}s`) {
  return `${count(n)} ${n === 1 ? word : many}`;
}

// What the server reads (GET /api/v0/limits): its home, so paths read `~/...` as in the
// CLI, and its pinned "now" ($AGENTDEX_NOW), so ages read as the CLI prints them.
const place = { home: null, now: null };

export function setPlace({ home, now }) {
  place.home = home || null;
  place.now = now ? Date.parse(now) : null;
}

/** "2d ago", as the CLI writes it: whole units, rounded down ("just now" under a minute). */
export function ago(iso) {
  if (!iso) return "";
  const seconds = ((place.now ?? Date.now()) - Date.parse(iso)) / 1000;
  if (!Number.isFinite(seconds)) return "";
  if (seconds < 0) return "in the future";
  const units = [
    [86400 * 365, "y"],
    [86400 * 30, "mo"],
    [86400, "d"],
    [3600, "h"],
    [60, "m"],
  ];
  for (const [size, unit] of units) {
    if (seconds >= size) return `${Math.floor(seconds / size)}${unit} ago`;
  }
  return "just now";
}

/** A path as the CLI shows it on a terminal: `~/...` under the home, else whole. */
export function tilde(path) {
  if (!path) return "";
  const home = place.home && place.home.replace(/\/+$/, "");
  if (home && path === home) return "~";
  return home && path.startsWith(`${home}/`) ? `~/${path.slice(home.length + 1)}` : path;
}

/** "2026-11-19 15:40" in the viewer's time zone (full ISO in the title). */
export function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n) => String(n).padStart(2, "0");
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}`
  );
}

export function time(iso) {
  return h("time", { datetime: iso || "", title: iso || "" }, when(iso));
}

export function basename(path) {
  if (!path) return "";
  const parts = String(path).split(/[\\/]/).filter(Boolean);
  return parts.length ? parts[parts.length - 1] : String(path);
}

/** A path as the CLI shows it (`~/...`), the whole path in the tooltip. */
export function pathLabel(path, cls = "path") {
  if (!path) return null;
  return h(`span.${cls}`, { title: path }, tilde(path));
}

export function badge(text, kind = "") {
  return h(`span.badge${kind ? `.${kind}` : ""}`, {}, text);
}

/** The mark of a record only agentdex's archive still holds (`source_gone`, docs/archive.md). */
export function goneMark() {
  return h(
    "span.gone",
    { title: "The agent's file no longer holds this; agentdex's archive kept it" },
    "source gone",
  );
}

let toastTimer = 0;

export function toast(message, kind = "") {
  const el = document.getElementById("toast");
  el.textContent = message;
  el.className = kind;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.hidden = true;
  }, 3500);
}

export function errorBox(error) {
  return h("p.error", { role: "alert" }, error && error.message ? error.message : String(error));
}

/** Run `fn` at most once per animation frame. */
export function perFrame(fn) {
  let queued = false;
  return (...args) => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      fn(...args);
    });
  };
}

export function debounce(fn, ms) {
  let timer = 0;
  const run = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
  run.cancel = () => clearTimeout(timer);
  return run;
}

/** Copy text to the clipboard; true when it worked. */
export async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h("textarea", { "aria-hidden": "true", class: "offscreen" });
    area.value = text;
    document.body.append(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    return done;
  }
}

/** A modal question; resolves true when confirmed. */
export function confirmDialog(title, message, confirmLabel = "Remove", danger = true) {
  return new Promise((resolve) => {
    const dialog = h(
      "dialog.confirm",
      {},
      h("h2", {}, title),
      h("p", {}, message),
      h(
        "form",
        { method: "dialog" },
        h("button.quiet", { value: "cancel", type: "submit" }, "Cancel"),
        h(`button${danger ? ".danger" : ""}`, { value: "ok", type: "submit" }, confirmLabel),
      ),
    );
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "ok");
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

/**
 * Give each cell of every `table.grid` under `root` its column's name (`data-label`), so
 * a phone can show the table stacked, one card per row, each cell under its name
 * (app.css). app.js runs it on every change of the page: new tables need nothing.
 */
export function labelTables(root) {
  for (const table of root.querySelectorAll("table.grid")) {
    const names = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
    for (const row of table.querySelectorAll("tbody tr:not([data-labelled])")) {
      row.dataset.labelled = "";
      [...row.children].forEach((cell, i) => {
        if (cell.tagName === "TD" && names[i] && !cell.dataset.label) cell.dataset.label = names[i];
      });
    }
  }
}
