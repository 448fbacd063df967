// The agentdex explorer: log in (one-time code or pasted token), then route between views.
// Routes live in the URL fragment (#/search?q=…, #/c/REF, #/context?dir=…), which the
// browser never sends to the server.

import { api, ApiError, onUnauthorized, redeemLoginCode, setToken, token } from "./api.js";
import { clear, h, labelTables, perFrame, setPlace } from "./dom.js";
import "./pages.js";
import { navViews, view } from "./views.js";

const main = document.getElementById("main");
let current = null; // {name, cleanup, update}

/** "#/c/abc%40line%3A9?agent=x" -> {name: "c", rest: "abc@line:9", params} */
function parseRoute(hash) {
  const raw = hash.replace(/^#\/?/, "");
  const cut = raw.indexOf("?");
  const path = cut >= 0 ? raw.slice(0, cut) : raw;
  const params = new URLSearchParams(cut >= 0 ? raw.slice(cut + 1) : "");
  const slash = path.indexOf("/");
  const name = (slash >= 0 ? path.slice(0, slash) : path) || "search";
  let rest = slash >= 0 ? path.slice(slash + 1) : "";
  try {
    rest = decodeURIComponent(rest);
  } catch {
    // a hand-typed REF with a stray % stays as typed
  }
  return { name, rest, params };
}

function buildNav() {
  const nav = document.getElementById("nav");
  clear(nav).append(
    ...navViews().map((v) =>
      h("a", { href: `#/${v.name}`, "data-view": v.name, onclick: () => setMenu(false) }, v.title),
    ),
  );
}

/** The nav folded behind the menu button (narrow screens): open or closed. */
function setMenu(open) {
  const button = document.getElementById("menu");
  document.body.classList.toggle("menu-open", open);
  button.setAttribute("aria-expanded", String(open));
}

function route() {
  const next = parseRoute(location.hash);
  const spec = view(next.name);
  if (!spec) {
    location.replace("#/search");
    return;
  }
  if (current && current.name === next.name && current.update && current.update(next)) return;
  if (current && current.cleanup) current.cleanup();
  clear(main);
  main.scrollTop = 0;
  setMenu(false);
  const navName = spec.navOf || spec.name;
  for (const link of document.querySelectorAll("#nav a")) {
    const active = link.dataset.view === navName;
    link.classList.toggle("active", active);
    if (active) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.getElementById("where").textContent = spec.title;
  document.title = `${spec.title} · agentdex`;
  const result = spec.mount(main, next);
  current =
    typeof result === "function" ? { name: next.name, cleanup: result } : { name: next.name, ...result };
}

function showLogin(message) {
  if (current && current.cleanup) current.cleanup();
  current = null;
  setToken(null);
  document.body.classList.remove("ready");
  document.getElementById("logout").hidden = true;
  const input = h("input#token", {
    type: "password",
    autocomplete: "off",
    "aria-label": "Token",
    placeholder: "Token, e.g. the 43 characters agentdex serve printed",
  });
  const note = h("p#login-message.error", { role: "alert", hidden: !message }, message || "");
  const form = h(
    "form#login.card.login",
    {
      onsubmit: async (event) => {
        event.preventDefault();
        setToken(input.value.trim());
        await start("That token was refused.");
      },
    },
    h("h1", {}, "agentdex"),
    h(
      "p",
      {},
      "This page reads your agents' history through the local agentdex server. Run ",
      h("code", {}, "agentdex ui"),
      " to open it logged in, or paste the token ",
      h("code", {}, "agentdex serve"),
      " printed (it is stored, mode 0600, in the data dir's ",
      h("code", {}, "serve-token"),
      ").",
    ),
    note,
    input,
    h("button", { type: "submit" }, "Log in"),
  );
  clear(main).append(form);
  input.focus();
}

/** Check the token against the API, then show the route; back to the login form on 401. */
async function start(refusedMessage) {
  if (!token()) {
    showLogin();
    return;
  }
  try {
    setPlace(await api("/api/v0/limits"));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      showLogin(refusedMessage || "The server refused the stored token; log in again.");
    } else {
      clear(main).append(h("p.error", {}, `Cannot reach the agentdex server: ${error.message}`));
    }
    return;
  }
  document.getElementById("logout").hidden = false;
  document.body.classList.add("ready");
  route();
}

async function boot() {
  const fragment = location.hash.slice(1);
  if (fragment.startsWith("login=")) {
    const params = new URLSearchParams(fragment);
    const next = params.get("next") || "/search";
    // Drop the code from the address bar and this history entry before anything else.
    history.replaceState(null, "", `#${next.startsWith("/") ? next : `/${next}`}`);
    try {
      setToken(await redeemLoginCode(params.get("login") || ""));
    } catch (error) {
      if (!token()) {
        showLogin(error.message);
        return;
      }
    }
  }
  await start();
}

window.addEventListener("hashchange", () => {
  if (document.body.classList.contains("ready")) route();
});
onUnauthorized(() => showLogin("The server refused the token; log in again."));
buildNav();
new MutationObserver(perFrame(() => labelTables(main))).observe(main, { childList: true, subtree: true });
document
  .getElementById("menu")
  .addEventListener("click", () => setMenu(!document.body.classList.contains("menu-open")));
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && document.body.classList.contains("menu-open")) setMenu(false);
});
document.getElementById("logout").addEventListener("click", () => showLogin("Logged out of this tab."));
boot();
