// Search view: search as you type (the full query language), result count, facets to
// click, highlighted snippets, keyboard navigation (/ to search, j/k, Enter to open).

import { api } from "./api.js";
import {
  ago,
  badge,
  clear,
  count,
  debounce,
  errorBox,
  fill,
  goneMark,
  h,
  pathLabel,
  plural,
  tilde,
  when,
} from "./dom.js";
import { conversationHref, conversationItem } from "./links.js";
import { panels } from "./views.js";
import { VirtualList } from "./vlist.js";

const FIRST_PAGE = 200;
const MAX_RESULTS = 10_000;
const ROW_HEIGHT = 64;
const ROW_HEIGHT_NARROW = 104; // a phone: the meta line and the snippet take two lines each
const NARROW = "(max-width: 760px)";
const RETRY_MS = 1500;
const FACET_TITLES = {
  agent: "Agent",
  project: "Project",
  branch: "Branch",
  worktree: "Worktree",
  role: "Role",
  kind: "Kind",
};

/** Another agentdex process (or this server, for another tab) is writing the index. */
function busyIndexing(data) {
  return typeof data.stats.refresh === "string" && data.stats.refresh.startsWith("skipped");
}

/** The index is still being built (a first build): the answer covers only the newest
 * files, as the CLI's stderr line says; the search is retried until it is complete. */
function stillBuilding(data) {
  return Boolean(data.coverage) && data.coverage.complete === false;
}

/** "the newest 8% of the history (files written since 2026-11-19 15:40)" from `coverage`. */
function coverageText(coverage) {
  const share = `${Math.round(100 * (coverage.fraction || 0))}%`;
  const oldest = coverage.back_to && new Date(coverage.back_to * 1000).toISOString();
  const since = oldest ? ` (files written since ${when(oldest)})` : "";
  return `the newest ${share} of the history${since}`;
}

/** Say when results may be incomplete because the index is not (yet) up to date. */
function indexNote(data) {
  if (data.status === "no-index")
    return h("span#index-note.warning", {}, " Nothing is indexed yet: indexing…");
  if (stillBuilding(data))
    return h(
      "div#index-note.warning.partial-note",
      { "data-partial": "coverage" },
      ` Partial: the index is still being built; searched ${coverageText(data.coverage)}.` +
        " Results follow as it grows.",
    );
  if (busyIndexing(data))
    return h("span#index-note.dim", {}, " (the index is being updated; results follow)");
  return null;
}

function snippet(text, spans) {
  const el = h("div.snippet");
  // Spans count code points (Python); Array.from splits by code point too.
  const chars = Array.from(text || "");
  let at = 0;
  for (const [start, end] of spans || []) {
    if (start < at) continue;
    if (start > at) el.append(chars.slice(at, start).join(""));
    el.append(h("mark", {}, chars.slice(start, end).join("")));
    at = end;
  }
  if (at < chars.length) el.append(chars.slice(at).join(""));
  return el;
}

/** The snippet line, led by what the "search-result-snippet" panels say (rows are of
 * fixed height: a panel shares the snippet's line rather than adding one). */
function withPanels(line, hit) {
  line.prepend(...panels("search-result-snippet", { hit }));
  return line;
}

function resultRow(hit) {
  const place = hit.worktree || hit.project || hit.cwd;
  return h(
    "div.result",
    {},
    h(
      "div.meta",
      {},
      badge(hit.agent, "agent"),
      h("span.rk", {}, `${hit.role}/${hit.kind}`),
      place ? pathLabel(place) : null,
      hit.branch ? h("span.branch", { title: "branch" }, hit.branch) : null,
      h("span.when", { title: hit.timestamp || "" }, ago(hit.timestamp)),
      hit.source_gone ? goneMark() : null,
      ...panels("search-result", { hit }),
      h(
        "a.ref",
        { href: conversationHref(hit.short_ref || hit.ref), title: "Deep link to this message" },
        hit.short_ref || hit.ref,
      ),
    ),
    withPanels(snippet(hit.snippet, hit.highlights), hit),
  );
}

/** What to try when nothing matched. */
function noResults(state) {
  const tips = [
    "Words are exact substrings, all of them required: try fewer or shorter ones.",
    state.word ? "Untick “word” to match inside words too." : null,
    state.case === "sensitive" ? "Case is on: try “smart”." : null,
    /\b(agent|project|branch|worktree|role|kind|since|until):/.test(state.q)
      ? "Drop a filter (agent:, project:, since:, ...) to widen the search."
      : null,
    "Nothing from an agent at all? Sources lists the stores found, and agentdex doctor says where it looked.",
  ].filter(Boolean);
  return h(
    "div.empty#no-results",
    {},
    h("h2", {}, "No results"),
    h(
      "ul",
      {},
      tips.map((t) => h("li", {}, t)),
    ),
  );
}

function hasFilter(query, filter) {
  return ` ${query} `.includes(` ${filter} `);
}

function toggleFilter(query, filter) {
  if (hasFilter(query, filter)) {
    return ` ${query} `.replace(` ${filter} `, " ").trim().replace(/\s+/g, " ");
  }
  return `${query.trim()} ${filter}`.trim();
}

function readState(params) {
  return {
    q: params.get("q") || "",
    sort: params.get("sort") === "time" ? "time" : "relevance",
    case: ["insensitive", "sensitive"].includes(params.get("case")) ? params.get("case") : "smart",
    regex: params.get("regex") === "1",
    word: params.get("word") === "1",
    mode: ["lexical", "semantic"].includes(params.get("mode")) ? params.get("mode") : "hybrid",
  };
}

function writeState(state) {
  const params = new URLSearchParams();
  if (state.q) params.set("q", state.q);
  if (state.sort !== "relevance") params.set("sort", state.sort);
  if (state.case !== "smart") params.set("case", state.case);
  if (state.regex) params.set("regex", "1");
  if (state.word) params.set("word", "1");
  if (state.mode !== "hybrid") params.set("mode", state.mode); // semantic.js: the toggle
  const query = params.toString();
  history.replaceState(null, "", `#/search${query ? `?${query}` : ""}`);
}

export function mount(main, route) {
  const state = readState(route.params);
  let results = [];
  let total = 0;
  let exact = true; // false: the first page stopped early, `total` is a lower bound
  let facetTotal = null; // {key, total} of the last facets answer
  let controller = null;
  let facetController = null;
  let loadingMore = false;
  let refreshed = false;
  let lastKey = "";
  let retry = 0;
  let forceRefresh = false;

  const input = h("input#q", {
    type: "search",
    placeholder: 'Search every agent\'s history   e.g. retry backoff  agent:codex  "exact phrase"  since:7d',
    "aria-label": "Search query",
    autocomplete: "off",
    spellcheck: "false",
  });
  input.value = state.q;
  const option = (name, label, title) => {
    const box = h("input", { type: "checkbox", "data-option": name });
    box.checked = state[name];
    box.addEventListener("change", () => {
      state[name] = box.checked;
      run();
    });
    return h("label.opt", { title }, box, label);
  };
  const select = (name, values, title) => {
    const el = h(
      "select",
      { "aria-label": title, title },
      values.map((v) => h("option", { value: v }, v)),
    );
    el.value = state[name];
    el.addEventListener("change", () => {
      state[name] = el.value;
      run();
    });
    return el;
  };
  const status = h("div#search-status.status", { "aria-live": "polite" });
  const statusPanels = h("div.status-panels");
  const facetsEl = h("aside#facets.facets", { "aria-label": "Facets" });
  // On a phone the facets fold away behind this button (CSS shows it only there).
  const filtersButton = h(
    "button#filters-toggle.quiet.filters-button",
    {
      type: "button",
      "aria-controls": "facets",
      "aria-expanded": "false",
      onclick: () => {
        const open = !facetsEl.classList.contains("open");
        facetsEl.classList.toggle("open", open);
        filtersButton.setAttribute("aria-expanded", String(open));
      },
    },
    "Filters",
  );
  const landing = h("div.landing");
  const list = new VirtualList({
    rowHeight: matchMedia(NARROW).matches ? ROW_HEIGHT_NARROW : ROW_HEIGHT,
    render: (hit) => resultRow(hit),
    onOpen: (index) => open(index),
    onNearEnd: () => loadMore(),
  });
  list.el.id = "results";

  main.append(
    h(
      "section.search-view",
      {},
      h(
        "div.searchbar",
        {},
        input,
        option("regex", "regex", "Each term is a Python regular expression (-E)"),
        option("word", "word", "Whole words only (-w)"),
        select("case", ["smart", "insensitive", "sensitive"], "Case"),
        select("sort", ["relevance", "time"], "Order"),
        ...panels("search-toolbar", { state, run: () => ((lastKey = ""), run()) }),
        filtersButton,
      ),
      status,
      statusPanels,
      h("div.search-body", {}, facetsEl, h("div.results-pane", {}, landing, list.el)),
    ),
  );

  function open(index) {
    const hit = results[index];
    if (hit) location.hash = conversationHref(hit.short_ref || hit.ref);
  }

  function params(limit) {
    return {
      q: state.q,
      limit,
      sort: state.sort,
      case: state.case,
      regex: state.regex,
      word: state.word,
      mode: state.mode,
      highlights: true,
      text: "false",
      refresh: refreshed && !forceRefresh ? "false" : "true",
    };
  }

  function countText() {
    return exact ? plural(total, "result") : `${count(total)}+ results`;
  }

  function showCount() {
    const shown = status.querySelector("#result-count");
    if (shown) {
      shown.textContent = countText();
      shown.dataset.total = String(total);
    }
    const note = status.querySelector("#result-shown");
    if (note) note.textContent = shownNote();
  }

  /** How many results to list in all: every one, up to the 10,000 the API returns. */
  function wanted() {
    return exact ? Math.min(total, MAX_RESULTS) : MAX_RESULTS;
  }

  function shownNote() {
    if (exact && results.length >= total) return "";
    if (results.length >= MAX_RESULTS) return ` (the first ${count(MAX_RESULTS)} are listed)`;
    return ` (showing ${count(results.length)}; scroll for more)`;
  }

  async function search() {
    clearTimeout(retry);
    if (controller) controller.abort();
    controller = new AbortController();
    const signal = controller.signal;
    const started = performance.now();
    status.textContent = "Searching…";
    status.className = "status busy";
    try {
      const data = await api("/api/v0/search", { params: params(FIRST_PAGE), signal });
      refreshed = true;
      results = data.results;
      total = data.stats.total || 0;
      exact = data.stats.total_exact !== false;
      adoptFacetTotal();
      list.setItems(results);
      const ms = Math.round(performance.now() - started);
      status.className = "status";
      fill(
        status,
        h("strong#result-count", { "data-total": String(total) }, countText()),
        h("span#result-shown", {}, shownNote()),
        h("span.dim", {}, ` · ${ms} ms`),
        indexNote(data),
      );
      clear(landing);
      if (!total && data.status !== "no-index") landing.append(noResults(state));
      fill(statusPanels, ...panels("search-status", { state, data }));
      // Retry (asking for a refresh) while another request or process is still indexing.
      const refreshRan = typeof data.stats.refresh === "object";
      forceRefresh =
        busyIndexing(data) || stillBuilding(data) || (data.status === "no-index" && !refreshRan);
      if (forceRefresh) retry = setTimeout(search, RETRY_MS);
      document.dispatchEvent(new CustomEvent("agentdex:results", { detail: { total, ms } }));
    } catch (error) {
      if (error.name === "AbortError") return;
      results = [];
      total = 0;
      list.setItems([]);
      status.className = "status";
      clear(status).append(errorBox(error));
    }
  }

  async function loadMore() {
    if (loadingMore || results.length >= wanted() || !state.q) return;
    loadingMore = true;
    const signal = controller ? controller.signal : undefined;
    const key = lastKey;
    const want = wanted();
    const note = h("span#loading-more.dim", {}, ` · loading ${count(want)}…`);
    status.append(note);
    try {
      const data = await api("/api/v0/search", { params: params(want), signal });
      if (key !== lastKey) return;
      results = data.results;
      if (data.stats.total_exact !== false || data.stats.total > total) {
        total = data.stats.total;
        exact = data.stats.total_exact !== false || results.length < want;
      }
      if (results.length < want) exact = true; // asked for more than there are: all listed
      list.setItems(results, { keepScroll: true });
      showCount();
      document.dispatchEvent(new CustomEvent("agentdex:more", { detail: { loaded: results.length } }));
    } catch (error) {
      if (error.name !== "AbortError") status.append(errorBox(error));
    } finally {
      note.remove();
      loadingMore = false;
    }
  }

  function renderFacets(data) {
    clear(facetsEl);
    const groups = [];
    for (const [name, facet] of Object.entries(data.facets)) {
      if (!facet.values.length) continue;
      const items = facet.values.map((v) => facetButton(v.filter, v.value, v.count, name));
      if (facet.others)
        items.push(
          h(
            "li.dim",
            {},
            `${count(facet.others)} more in ${plural(facet.distinct - facet.values.length, "other value")}`,
          ),
        );
      groups.push(
        h("div.facet", { "data-facet": name }, h("h3", {}, FACET_TITLES[name] || name), h("ul", {}, items)),
      );
    }
    const times = data.time
      .filter((b) => b.count)
      .map((b) => facetButton(b.filter, b.label, b.count, "time"));
    if (times.length)
      groups.push(h("div.facet", { "data-facet": "time" }, h("h3", {}, "Time"), h("ul", {}, times)));
    facetsEl.append(...groups);
  }

  function facetButton(filter, label, n, name) {
    const active = hasFilter(state.q, filter);
    const shown = name === "project" || name === "worktree" ? tilde(label) : label;
    return h(
      "li",
      {},
      h(
        `button.facet-value${active ? ".active" : ""}`,
        {
          type: "button",
          title: active ? `Remove ${filter}` : `Add ${filter}`,
          "data-filter": filter,
          onclick: () => {
            state.q = toggleFilter(state.q, filter);
            input.value = state.q;
            run();
          },
        },
        h("span.label", {}, shown),
        h("span.n", {}, count(n)),
      ),
    );
  }

  /** The facets counted every match by search's own rule: their total is exact. */
  function adoptFacetTotal() {
    if (exact || !facetTotal || facetTotal.key !== lastKey || facetTotal.total < total) return false;
    total = facetTotal.total;
    exact = true;
    return true;
  }

  async function facets() {
    const key = lastKey;
    if (facetController) facetController.abort();
    facetController = new AbortController();
    try {
      const data = await api("/api/v0/facets", {
        params: { q: state.q, case: state.case, regex: state.regex, word: state.word },
        signal: facetController.signal,
      });
      renderFacets(data);
      if (key === lastKey) {
        facetTotal = { key, total: data.total };
        if (adoptFacetTotal()) showCount();
      }
    } catch (error) {
      if (error.name !== "AbortError") clear(facetsEl);
    }
  }

  async function showLanding() {
    clear(landing);
    list.setItems([]);
    clear(facetsEl);
    status.className = "status";
    status.textContent =
      "Type to search. Words are exact substrings; fields narrow (agent:, project:, branch:, role:, kind:, since:).";
    try {
      const data = await api("/api/v0/conversations", { params: { limit: 30, refresh: "true" } });
      refreshed = true;
      if (state.q) return;
      landing.append(
        h("h2", {}, "Recent conversations"),
        h("ul.conv-list", {}, data.conversations.map(conversationItem)),
      );
    } catch (error) {
      landing.append(errorBox(error));
    }
  }

  const debounced = debounce(() => {
    search();
    facets();
  }, 150);

  function run() {
    writeState(state);
    const key = JSON.stringify(state);
    if (key === lastKey) return;
    lastKey = key;
    if (!state.q.trim()) {
      debounced.cancel();
      if (controller) controller.abort();
      results = [];
      total = 0;
      showLanding();
      return;
    }
    clear(landing);
    debounced();
  }

  input.addEventListener("input", () => {
    state.q = input.value;
    run();
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      if (results.length) open(Math.max(0, list.selected));
    } else if (event.key === "ArrowDown") {
      event.preventDefault();
      list.move(1);
    } else if (event.key === "ArrowUp") {
      event.preventDefault();
      list.move(-1);
    } else if (event.key === "Escape") {
      event.preventDefault(); // a search field would clear itself; Escape only leaves it
      input.blur();
    }
  });

  function onKey(event) {
    if (
      event.target.closest("input, select, textarea, dialog") ||
      event.ctrlKey ||
      event.metaKey ||
      event.altKey
    )
      return;
    if (event.key === "/") {
      event.preventDefault();
      input.focus();
      input.select();
    } else if (event.key === "j") {
      list.move(1);
    } else if (event.key === "k") {
      list.move(-1);
    } else if (event.key === "Enter" && list.selected >= 0) {
      open(list.selected);
    }
  }
  document.addEventListener("keydown", onKey);
  run();
  if (!state.q) input.focus();
  window.agentdexResults = list; // read by the browser tests and the UI benchmark

  return () => {
    document.removeEventListener("keydown", onKey);
    debounced.cancel();
    clearTimeout(retry);
    if (controller) controller.abort();
    if (facetController) facetController.abort();
    delete window.agentdexResults;
  };
}
