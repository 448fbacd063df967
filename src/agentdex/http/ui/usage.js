// Usage: tokens and cost per day as stacked bars (by model or agent), the totals, and a
// per-project table, over a date range. The numbers are /api/v0/usage's, the same as
// `agentdex usage --json` (docs/usage.md); a model without a price is shown unpriced.

import { api } from "./api.js";
import { count, errorBox, fill, h, tilde, tokens } from "./dom.js";
import { registerView } from "./views.js";

const SVG = "http://www.w3.org/2000/svg";
const COLORS = ["#2d5bd7", "#1f8a4c", "#b7791f", "#8a4fbf", "#c43d3d", "#0184bc", "#a626a4", "#5f6b7a"];
const SHOWN = 7; // parts drawn in their own colour; the rest are "other"
const RANGES = [
  ["30", "30 days"],
  ["90", "90 days"],
  ["365", "1 year"],
  ["all", "All"],
];

function stylesheet() {
  if (document.querySelector("link[data-usage-css]")) return;
  document.head.append(h("link", { rel: "stylesheet", href: "/ui/usage.css", dataset: { usageCss: "1" } }));
}

function isoDay(date) {
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60000);
  return local.toISOString().slice(0, 10);
}

const short = tokens;

function money(row) {
  if (row.cost_usd !== null && row.cost_usd !== undefined) return `$${row.cost_usd.toFixed(2)}`;
  if (row.priced_cost_usd) return `$${row.priced_cost_usd.toFixed(2)}*`;
  return "unpriced";
}

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) el.setAttribute(key, String(value));
  for (const child of children) if (child) el.append(child);
  return el;
}

/** Every day from the first to the last with usage (a day without calls is an empty bar). */
function everyDay(rows) {
  const dated = rows.filter((r) => r.day);
  if (!dated.length) return [];
  const byDay = new Map(dated.map((r) => [r.day, r]));
  const out = [];
  const end = new Date(`${dated[dated.length - 1].day}T12:00:00Z`);
  for (let d = new Date(`${dated[0].day}T12:00:00Z`); d <= end && out.length < 3700; d = new Date(d.getTime() + 864e5)) {
    const day = d.toISOString().slice(0, 10);
    out.push(byDay.get(day) || { day, parts: [] });
  }
  return out;
}

/** Stacked bars: one per day, a segment per model/agent; `metric` is tokens or cost. */
function chart(rows, metric, colorOf, width) {
  const value = (part) => (metric === "cost" ? part.priced_cost_usd || 0 : part.total_tokens);
  const days = everyDay(rows);
  const max = Math.max(1e-9, ...days.map((r) => r.parts.reduce((s, p) => s + value(p), 0)));
  const height = width < 600 ? 200 : 260;
  const left = 52;
  const bottom = 22;
  const plot = height - bottom - 8;
  const step = (width - left) / Math.max(1, days.length);
  const bar = Math.max(1, Math.min(28, step * 0.8));
  const root = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    class: "usage-chart",
    role: "img",
    "aria-label": `${metric === "cost" ? "Cost" : "Tokens"} per day, stacked by ${colorOf.by}`,
  });
  for (const fraction of [0, 0.5, 1]) {
    const y = 8 + plot * (1 - fraction);
    root.append(svg("line", { x1: left, x2: width, y1: y, y2: y, class: "grid-line" }));
    const label = metric === "cost" ? `$${(max * fraction).toFixed(max < 10 ? 2 : 0)}` : short(max * fraction);
    root.append(svg("text", { x: left - 6, y: y + 4, class: "axis", "text-anchor": "end" }, document.createTextNode(label)));
  }
  days.forEach((row, i) => {
    if (!row.parts.length) return;
    const x = left + i * step + (step - bar) / 2;
    let y = 8 + plot;
    const group = svg("g", { class: "bar", "data-day": row.day });
    for (const part of [...row.parts].reverse()) {
      const size = (value(part) / max) * plot;
      if (size <= 0) continue;
      y -= size;
      const rect = svg("rect", { x, y, width: bar, height: size, fill: colorOf(part.name) });
      rect.append(svg("title", {}, document.createTextNode(`${row.day} · ${part.name || "(unknown)"} · ${count(part.total_tokens)} tokens · ${money(part)}`)));
      group.append(rect);
    }
    root.append(group);
  });
  const ticks = Math.min(days.length, width < 600 ? 4 : 7);
  for (let t = 0; t < ticks; t++) {
    const i = ticks === 1 ? 0 : Math.round((t * (days.length - 1)) / (ticks - 1));
    const x = left + i * step + step / 2;
    root.append(svg("text", { x, y: height - 6, class: "axis", "text-anchor": "middle" }, document.createTextNode(days[i].day.slice(5))));
  }
  return root;
}

function palette(rows, by) {
  const totals = new Map();
  for (const row of rows) for (const p of row.parts) totals.set(p.name, (totals.get(p.name) || 0) + p.total_tokens);
  const top = [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, SHOWN).map(([name]) => name);
  const colorOf = (name) => {
    const i = top.indexOf(name);
    return i >= 0 ? COLORS[i] : COLORS[COLORS.length - 1];
  };
  colorOf.by = by;
  colorOf.legend = [...top.map((name, i) => [name, COLORS[i]]), ...(totals.size > SHOWN ? [["other", COLORS[COLORS.length - 1]]] : [])];
  return colorOf;
}

/** A colour square (set through the CSSOM: the page's CSP allows no style attributes). */
function swatch(color) {
  const el = h("span.swatch");
  el.style.background = color;
  return el;
}

function totalsLine(data) {
  const t = data.totals;
  return h(
    "div.usage-totals",
    {},
    h("div", {}, h("strong", {}, money(t)), h("span", {}, "cost")),
    h("div", {}, h("strong", {}, short(t.total_tokens)), h("span", {}, "tokens")),
    h("div", {}, h("strong", {}, count(t.calls)), h("span", {}, "model calls")),
    h("div", {}, h("strong", {}, short(t.cache_read_tokens)), h("span", {}, "cache read")),
    h("div", {}, h("strong", {}, short(t.output_tokens)), h("span", {}, "output")),
  );
}

function projectTable(data) {
  const cols = [
    ["project", null],
    ["calls", "calls"],
    ["input", "input_tokens"],
    ["cache read", "cache_read_tokens"],
    ["cache write", "cache_write_tokens"],
    ["output", "output_tokens"],
    ["total", "total_tokens"],
  ];
  return h(
    "table.grid.usage-projects",
    {},
    h("thead", {}, h("tr", {}, cols.map(([t, f]) => h(f ? "th.num" : "th", { dataset: { col: t.replace(" ", "-") } }, t)), h("th.num", {}, "cost"))),
    h(
      "tbody",
      {},
      data.rows.map((row) =>
        h(
          "tr",
          {},
          h("td.path", { title: row.project || "", dataset: { label: "project" } }, row.project ? tilde(row.project) : "(no project)"),
          cols.slice(1).map(([t, f]) => h("td.num", { dataset: { col: t.replace(" ", "-"), label: t } }, count(row[f]))),
          h("td.num", { dataset: { label: "cost" } }, money(row)),
        ),
      ),
    ),
  );
}

export function mount(main, route) {
  stylesheet();
  const controller = new AbortController();
  const state = {
    range: route.params.get("range") || "all",
    split: route.params.get("split") === "agent" ? "agent" : "model",
    metric: route.params.get("metric") === "cost" ? "cost" : "tokens",
    since: route.params.get("since") || "",
    until: route.params.get("until") || "",
  };
  const since = h("input#usage-since", { type: "date", "aria-label": "From", value: state.since });
  const until = h("input#usage-until", { type: "date", "aria-label": "Until", value: state.until });
  const toggle = (name, options) =>
    h(
      "div.usage-toggle",
      { role: "group", "aria-label": name },
      options.map(([value, label]) =>
        h(
          "button",
          {
            type: "button",
            dataset: { [name]: value },
            "aria-pressed": String(state[name] === value),
            onclick: () => {
              state[name] = value;
              if (name === "range") {
                state.since = value === "all" ? "" : isoDay(new Date(Date.now() - (Number(value) - 1) * 864e5));
                state.until = "";
                since.value = state.since;
                until.value = "";
              }
              load();
            },
          },
          label,
        ),
      ),
    );
  const controls = h(
    "div.usage-controls",
    {},
    toggle("range", RANGES),
    h("label", {}, "from ", since),
    h("label", {}, "to ", until),
    toggle("split", [
      ["model", "by model"],
      ["agent", "by agent"],
    ]),
    toggle("metric", [
      ["tokens", "tokens"],
      ["cost", "cost"],
    ]),
  );
  for (const input of [since, until]) {
    input.addEventListener("change", () => {
      state.since = since.value;
      state.until = until.value;
      state.range = "custom";
      load();
    });
  }
  const body = h("div#usage-body", {}, h("p.hint", {}, "Loading…"));
  // drawn at the box's own width, so its text keeps its size on a phone
  const chartWidth = () => Math.max(280, body.clientWidth - 18);
  main.append(h("section.usage-view", {}, h("h1", {}, "Usage"), controls, body));

  async function load() {
    for (const button of controls.querySelectorAll("button")) {
      const [name, value] = Object.entries(button.dataset)[0];
      button.setAttribute("aria-pressed", String(state[name] === value));
    }
    const query = new URLSearchParams();
    for (const key of ["range", "split", "metric", "since", "until"]) if (state[key]) query.set(key, state[key]);
    history.replaceState(null, "", `#/usage?${query}`);
    const params = { since: state.since, until: state.until };
    try {
      // the first answer refreshes the index; the second reads the same snapshot's numbers
      const days = await api("/api/v0/usage", {
        params: { ...params, by: "day", split: state.split },
        signal: controller.signal,
      });
      const projects = await api("/api/v0/usage", {
        params: { ...params, by: "project", refresh: "false" },
        signal: controller.signal,
      });
      if (!days.totals.calls) {
        fill(
          body,
          h(
            "div.empty",
            {},
            h("p", {}, state.since || state.until ? "No model calls in these dates." : "No model calls with token usage are indexed yet."),
            h("p", {}, "Claude Code, Codex, Gemini CLI, OpenCode and Pi record the tokens of each call; see docs/usage.md for the others."),
          ),
        );
        return;
      }
      const colorOf = palette(days.rows, state.split);
      const unpriced = days.unpriced.length
        ? h(
            "p.hint.usage-unpriced",
            {},
            `* No price known for ${days.unpriced.map((u) => u.model || "(unknown model)").join(", ")} `,
            `(${count(days.unpriced.reduce((s, u) => s + u.calls, 0))} calls): their cost is not counted, never guessed.`,
          )
        : null;
      fill(
        body,
        totalsLine(days),
        h("div.usage-chart-box", {}, chart(days.rows, state.metric, colorOf, chartWidth())),
        h(
          "ul.usage-legend",
          {},
          colorOf.legend.map(([name, color]) => h("li", {}, swatch(color), name || "(unknown)")),
        ),
        unpriced,
        h("h2", {}, "Per project"),
        projectTable(projects),
        h(
          "p.hint",
          {},
          `Days in ${days.timezone}. Prices: ${days.prices.shipped ? `shipped table of ${days.prices.date}` : days.prices.file}. `,
          "Input is fresh input only; cache reads and writes are counted apart; output includes reasoning.",
        ),
      );
    } catch (error) {
      if (error.name !== "AbortError") fill(body, errorBox(error));
    }
  }

  load();
  return () => controller.abort();
}

registerView({ name: "usage", title: "Usage", order: 35, mount });
