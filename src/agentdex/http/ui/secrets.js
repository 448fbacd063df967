// The Secrets page: where secrets were found (agent, conversation, kinds, when), so a
// user knows which keys to rotate. The values never reach the page: the index holds only
// [REDACTED:<kind>] labels (GET /api/v0/secrets, the same JSON as `agentdex secrets --json`).

import { api } from "./api.js";
import { ago, clear, errorBox, fill, h, plural } from "./dom.js";
import { conversationHref } from "./links.js";

function kinds(conversation) {
  return Object.entries(conversation.kinds).map(([kind, n]) =>
    h("span.badge.status-invalid", { title: `${n} × ${kind}` }, n > 1 ? `${kind} ×${n}` : kind),
  );
}

export function mount(main) {
  const controller = new AbortController();
  const body = h("div#secrets", {}, h("p.hint", {}, "Reading where secrets were found…"));
  main.append(h("section.secrets-view", {}, h("h1", {}, "Secrets"), body));
  (async () => {
    try {
      const data = await api("/api/v0/secrets", { signal: controller.signal });
      if (!data.conversations.length) {
        const off = data.redact === false ? " Redaction is off ([privacy] redact = false)." : "";
        fill(body, h("p.empty", {}, `No secret was found in any conversation.${off}`));
        return;
      }
      const rows = data.conversations.map((c) =>
        h(
          "tr",
          {},
          h("td", {}, c.agent),
          h("td", {}, h("a", { href: conversationHref(c.session_id, c.agent) }, c.title || c.session_id)),
          h("td", {}, kinds(c)),
          h("td", { title: c.last_seen || "" }, ago(c.last_seen)),
        ),
      );
      fill(
        body,
        h(
          "p.status",
          {},
          `${plural(data.findings.length, "secret")} in ${plural(data.conversations.length, "conversation")}. `,
          "Values are never stored: rotate the keys of the kinds listed.",
        ),
        h(
          "table.grid",
          {},
          h("thead", {}, h("tr", {}, ["agent", "conversation", "kinds", "last seen"].map((t) => h("th", {}, t)))),
          h("tbody", {}, rows),
        ),
      );
    } catch (error) {
      if (error.name !== "AbortError") clear(body).append(errorBox(error));
    }
  })();
  return () => controller.abort();
}
