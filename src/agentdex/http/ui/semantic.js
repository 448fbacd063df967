// Search by meaning on the page: the mode toggle beside the search box and each
// result's "why" (the exact terms it matched, its similarity, or both), registered as
// panels of the search view (views.js); search.js only carries `state.mode` to the API.

import { h } from "./dom.js";
import { registerPanel } from "./views.js";

export const MODES = ["hybrid", "lexical", "semantic"];

const MODE_TITLES = {
  hybrid: "Exact matches and messages close in meaning (when the history is embedded)",
  lexical: "Exact matches only",
  semantic: "By meaning only (needs `agentdex index --semantic`)",
};

/** A segmented toggle: hybrid | exact | meaning. */
export function modeToggle(state, onChange) {
  const labels = { hybrid: "hybrid", lexical: "exact", semantic: "meaning" };
  const group = h("div.mode-toggle", { role: "radiogroup", "aria-label": "Search mode" });
  for (const mode of MODES) {
    const button = h(
      "button.mode",
      {
        type: "button",
        role: "radio",
        "data-mode": mode,
        title: MODE_TITLES[mode],
        "aria-checked": String(state.mode === mode),
      },
      labels[mode],
    );
    button.addEventListener("click", () => {
      if (state.mode === mode) return;
      state.mode = mode;
      for (const other of group.children) {
        other.setAttribute("aria-checked", String(other.dataset.mode === mode));
      }
      onChange();
    });
    group.append(button);
  }
  return group;
}

/** Why a result matched, in a few words: "exact: retry" · "meaning 0.62". */
export function whyMark(hit) {
  const why = hit.why;
  if (!why) return null;
  const parts = [];
  if (why.match !== "semantic" && why.terms && why.terms.length) {
    parts.push(`exact: ${why.terms.slice(0, 4).join(", ")}`);
  }
  if (why.similarity !== null && why.similarity !== undefined) {
    parts.push(`meaning ${why.similarity.toFixed(2)}${why.title ? " (title)" : ""}`);
  }
  if (!parts.length) return null;
  const title = why.title
    ? `Found by meaning: close to the conversation's title "${why.title}"`
    : why.match === "semantic"
      ? "Found by meaning: cosine similarity of the query and this message"
      : why.match === "both"
        ? "Matched exactly and close in meaning"
        : "Holds these query terms";
  return h(`span.why.why-${why.match}`, { title, "data-why": why.match }, parts.join(" · "));
}

/** Before the snippet of a conversation found by its title: the title that matched (the
 * snippet is the conversation's first message, which need not say it). */
export function whyTitle(hit) {
  const title = hit.why && hit.why.title;
  if (!title) return null;
  return h(
    "span.why-title",
    { title: `Found by meaning through the conversation's title: "${title}"` },
    h("span.dim", {}, "title "),
    h("q", {}, title),
    h("span.dim", {}, " · "),
  );
}

/** A note under the count when the page asked for meaning but got exact matches only. */
export function modeNote(state, data) {
  const used = data.stats && data.stats.search_mode;
  if (state.mode === "hybrid" && used === "lexical") {
    return h(
      "span.dim.mode-note",
      { title: "Run `agentdex index --semantic` (or leave the server running) to search by meaning" },
      " · exact matches only (history not embedded yet)",
    );
  }
  return null;
}

registerPanel("search-toolbar", {
  id: "search-mode",
  order: 10,
  render: ({ state, run }) => modeToggle(state, run),
});
registerPanel("search-result", { id: "why", render: ({ hit }) => whyMark(hit) });
registerPanel("search-result-snippet", { id: "why-title", render: ({ hit }) => whyTitle(hit) });
registerPanel("search-status", { id: "mode-note", render: ({ state, data }) => modeNote(state, data) });

// this file's styles, without touching index.html
if (!document.querySelector('link[href="/ui/semantic.css"]')) {
  document.head.append(h("link", { rel: "stylesheet", href: "/ui/semantic.css" }));
}
