// Conversations (every agent chat, newest first, with message counts) and Sources
// (every agent store found on this machine and whether it parsed).

import { api } from "./api.js";
import { ago, badge, bytes, clear, count, debounce, errorBox, fill, h, plural, tilde, tokens } from "./dom.js";
import { conversationHref } from "./links.js";

const LIMIT = 1000;

export function mountConversations(main, route) {
  const controller = new AbortController();
  const input = h("input#conv-q", {
    type: "search",
    placeholder: "Filter, e.g. retry agent:codex since:7d",
    "aria-label": "Filter conversations",
    spellcheck: "false",
  });
  input.value = route.params.get("q") || "";
  const body = h("div#conversations");
  main.append(h("section.conversations-view", {}, h("h1", {}, "Conversations"), input, body));

  async function load() {
    const q = input.value.trim();
    history.replaceState(null, "", `#/conversations${q ? `?q=${encodeURIComponent(q)}` : ""}`);
    try {
      const data = await api("/api/v0/conversations", {
        params: { q, limit: LIMIT },
        signal: controller.signal,
      });
      const total = data.stats.total || 0;
      if (!total) {
        fill(
          body,
          h(
            "div.empty",
            {},
            q
              ? h(
                  "p",
                  {},
                  "No conversation has a message matching this filter. Try fewer words or drop a field.",
                )
              : [
                  h("p", {}, "No conversations are indexed yet."),
                  h(
                    "p",
                    {},
                    "agentdex reads every agent store it finds under the home (see ",
                    h("a", { href: "#/sources" }, "Sources"),
                    "); when an agent's history is missing, ",
                    h("code", {}, "agentdex doctor"),
                    " says where it looked.",
                  ),
                ],
          ),
        );
        return;
      }
      fill(
        body,
        h(
          "p.status",
          {},
          plural(total, "conversation"),
          total > data.conversations.length ? ` (newest ${count(data.conversations.length)} shown)` : "",
        ),
        h(
          "table.grid",
          {},
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["", "conversation", "agent", "project", "messages", "tokens", "last activity"].map((t) =>
                h("th", {}, t),
              ),
            ),
          ),
          h(
            "tbody",
            {},
            data.conversations.map((c, i) =>
              h(
                "tr",
                {},
                h("td.dim", {}, String(i + 1)),
                h(
                  "td",
                  {},
                  h(
                    "a",
                    { href: conversationHref(c.id || c.session_id, c.agent) },
                    c.title || c.id || c.session_id,
                  ),
                ),
                h("td", {}, badge(c.agent, "agent")),
                h("td.path", { title: c.project || c.cwd || "" }, tilde(c.project || c.cwd || "")),
                h("td.num", {}, count(c.message_count)),
                spent(c),
                h("td", { title: c.last_activity || "" }, ago(c.last_activity)),
              ),
            ),
          ),
        ),
      );
    } catch (error) {
      if (error.name !== "AbortError") clear(body).append(errorBox(error));
    }
  }
  input.addEventListener("input", debounce(load, 250));
  load();
  return () => controller.abort();
}

/** The conversation's model calls: all tokens and their cost at list prices (the numbers
 * of `agentdex usage --by session`); no cost shown when a call's model has no price. */
function spent(c) {
  if (!c.total_tokens) return h("td.num.tokens", {}, "");
  const cost = c.cost_usd === null || c.cost_usd === undefined ? "" : ` · $${c.cost_usd.toFixed(2)}`;
  const title = `${count(c.total_tokens)} tokens${cost ? "" : " (a model without a price: no cost)"}`;
  return h("td.num.tokens", { title }, `${tokens(c.total_tokens)}${cost}`);
}

export function mountSources(main) {
  const controller = new AbortController();
  const body = h("div#sources", {}, h("p.hint", {}, "Looking for agent stores and probing each file…"));
  main.append(h("section.sources-view", {}, h("h1", {}, "Sources"), body));
  (async () => {
    try {
      const data = await api("/api/v0/sources", { params: { check: true }, signal: controller.signal });
      const rows = [];
      let agent = null;
      for (const s of data.sources) {
        if (s.agent !== agent) {
          agent = s.agent;
          rows.push(h("tr.group", {}, h("th", { colspan: "6" }, agent)));
        }
        rows.push(
          h(
            "tr",
            {},
            h("td", {}, s.store.replace(`${s.agent}.`, "")),
            h(
              "td",
              {},
              badge(
                s.parse_status || "-",
                `status-${s.parse_status === "ok" ? "ok" : s.parse_status === "error" ? "invalid" : "missing"}`,
              ),
            ),
            h("td.num", {}, bytes(s.size)),
            h("td", { title: s.modified || "" }, ago(s.modified)),
            h("td.path", { title: s.path }, tilde(s.path)),
            h(
              "td.dim",
              {},
              [s.coverage === "default" ? "" : s.coverage, s.host ? ` via ${s.host}` : ""].join(""),
            ),
          ),
        );
      }
      if (!data.sources.length) {
        fill(
          body,
          h(
            "div.empty",
            {},
            h("p", {}, `No agent store was found under ${data.home}.`),
            h(
              "p",
              {},
              "Run ",
              h("code", {}, "agentdex doctor"),
              " to see every folder looked in; an agent installed elsewhere can be named in the config's ",
              h("code", {}, "[stores.paths]"),
              ".",
            ),
          ),
        );
        return;
      }
      fill(
        body,
        h("p.status", {}, `${plural(data.sources.length, "store file")} under ${tilde(data.home)}`),
        data.warnings.map((w) => h("p.warning", {}, w)),
        h(
          "table.grid",
          {},
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["store", "parsed", "size", "modified", "path", ""].map((t) => h("th", {}, t)),
            ),
          ),
          h("tbody", {}, rows),
        ),
      );
    } catch (error) {
      if (error.name !== "AbortError") clear(body).append(errorBox(error));
    }
  })();
  return () => controller.abort();
}
