// The page's registry: every view (a page with its own #/route and nav entry) and every
// panel (a piece another view shows in one of its slots) registers here, from its own
// file. app.js builds the nav and routes from it; views call panels() for their slots.
//
// Add a page:  in ./usage.js
//   import { registerView } from "./views.js";
//   registerView({ name: "usage", title: "Usage", order: 35, mount: (main, route) => cleanup });
// then one line in pages.js: import "./usage.js";
// Add a panel: registerPanel("conversation-toolbar", { id: "secrets", render: (ctx) => node });
// SLOTS below lists the slots and what `ctx` holds in each.

const views = new Map();
const slots = new Map();

/** The slots views offer to panels, and the `ctx` each one passes to `render(ctx)`. */
export const SLOTS = {
  "search-toolbar": "beside the search box's switches: {state, run} (state.q, ...; run() searches again)",
  "search-status": "under the result count: {state, data} (data: the last /api/v0/search answer)",
  "search-result": "in a result's meta line, before its ref: {hit} (one /api/v0/search result)",
  "search-result-snippet": "inline, at the start of a result's snippet line: {hit}",
  "conversation-header": "under a conversation's chips: {conv} (the /api/v0/show answer)",
  "conversation-toolbar": "in a conversation's toolbar, after its actions: {conv, focusRef}",
};

/**
 * A view: `name` is its route (`#/name`), `title` its nav label, `order` its place in the
 * nav (Search 10, Conversations 20, Context 30, Sessions 40, Worktrees 50, Sources 60),
 * `nav: false` keeps it out of the nav (a conversation, #/c/REF), `navOf` names the nav
 * entry shown active for it. `mount(main, route)` fills `main` and returns a cleanup
 * function, or {cleanup, update(route) -> bool} to take a new route without remounting.
 */
export function registerView({ name, title, mount, order = 100, nav = true, navOf = null }) {
  if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new Error(`view name ${name}: lowercase letters, digits, -`);
  if (views.has(name)) throw new Error(`view ${name} is registered twice`);
  views.set(name, { name, title: title || name, mount, order, nav, navOf });
}

export function view(name) {
  return views.get(name) || null;
}

/** The views in the nav, in order. */
export function navViews() {
  return [...views.values()].filter((v) => v.nav).sort((a, b) => a.order - b.order);
}

/** A panel in `slot` (a key of SLOTS): `render(ctx)` returns a node, a list of them, or null. */
export function registerPanel(slot, { id, render, order = 100 }) {
  if (!(slot in SLOTS)) throw new Error(`no panel slot ${slot} (slots: ${Object.keys(SLOTS).join(", ")})`);
  const list = slots.get(slot) || [];
  if (list.some((p) => p.id === id)) throw new Error(`panel ${id} is registered twice in ${slot}`);
  list.push({ id, render, order });
  list.sort((a, b) => a.order - b.order);
  slots.set(slot, list);
}

/** What the panels of `slot` render for `ctx`; one that fails is left out (and logged). */
export function panels(slot, ctx) {
  const out = [];
  for (const panel of slots.get(slot) || []) {
    try {
      const node = panel.render(ctx);
      if (node) out.push(node);
    } catch (error) {
      console.error(`panel ${panel.id} in ${slot}:`, error);
    }
  }
  return out;
}
