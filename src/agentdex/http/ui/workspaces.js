// Sessions and worktrees: list, create, remove (with a confirmation), the events of a
// session and the agent transcripts recorded in its work directory.

import { api } from "./api.js";
import { ago, badge, clear, confirmDialog, errorBox, h, plural, tilde, time, toast } from "./dom.js";
import { conversationItem } from "./links.js";

function field(label, input) {
  return h("label.field", {}, h("span", {}, label), input);
}

function text(name, placeholder = "") {
  return h("input", { type: "text", name, placeholder, spellcheck: "false" });
}

function values(form) {
  const out = {};
  for (const [key, value] of new FormData(form)) if (value !== "") out[key] = value;
  return out;
}

// -- sessions ------------------------------------------------------------------------

export function mountSessions(main, route) {
  if (route.rest) return mountSession(main, route.rest);
  const list = h("div#session-list");
  const form = h(
    "form#new-session.card",
    {
      onsubmit: async (event) => {
        event.preventDefault();
        const data = values(form);
        try {
          const made = await api("/api/v0/sessions", { method: "POST", body: data });
          toast(`Created ${made.created.id}`);
          form.reset();
          load();
        } catch (error) {
          toast(error.message, "error");
        }
      },
    },
    h("h2", {}, "New session"),
    field("Label", text("label", "e.g. cart tax")),
    field("Agent command", text("agent", "e.g. claude")),
    field("Work directory", text("working_directory", "e.g. ~/src/shop")),
    field("or worktree (branch or path)", text("worktree", "e.g. feat/cart-tax")),
    field("of repository", text("repo", "e.g. ~/src/shop (empty: the server's workspace)")),
    h("button", { type: "submit" }, "Create"),
  );
  main.append(h("section.sessions-view", {}, h("h1", {}, "Sessions"), h("div.two-col", {}, list, form)));

  async function load() {
    try {
      const data = await api("/api/v0/sessions");
      clear(list);
      if (!data.sessions.length)
        list.append(
          h(
            "p.hint",
            {},
            "No sessions yet. A session runs an agent in its own work directory (agentdex session new).",
          ),
        );
      list.append(
        h(
          "table.grid",
          {},
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["session", "label", "work directory", "agent", "events", "last activity"].map((t) =>
                h("th", {}, t),
              ),
            ),
          ),
          h(
            "tbody",
            {},
            data.sessions
              .slice()
              .reverse()
              .map((s) =>
                h(
                  "tr",
                  {},
                  h("td", {}, h("a", { href: `#/sessions/${encodeURIComponent(s.id)}` }, s.id)),
                  h("td", {}, s.label || ""),
                  h(
                    "td.path",
                    { title: s.working_directory || "" },
                    s.working_directory ? tilde(s.working_directory) : h("span.dim", {}, "none"),
                    s.worktree ? badge("worktree", "ok") : null,
                  ),
                  h("td", {}, s.agent || ""),
                  h("td", {}, String(s.event_count)),
                  h("td", { title: s.last_activity || "" }, ago(s.last_activity)),
                ),
              ),
          ),
        ),
      );
      for (const bad of data.unreadable) list.append(h("p.error", {}, `${bad.id}: ${bad.message}`));
    } catch (error) {
      clear(list).append(
        errorBox(error),
        h(
          "p.hint",
          {},
          "Name a git repository above (e.g. ~/src/shop), or start the server in one: ",
          h("code", {}, "agentdex ui --workspace ~/src/shop"),
          ".",
        ),
      );
    }
  }
  load();
  return () => {};
}

function eventLine(event) {
  const at = event.at || event.created;
  const detail = { ...event };
  for (const key of ["type", "at", "created", "id"]) delete detail[key];
  const parts = Object.entries(detail)
    .filter(([, v]) => v !== null && v !== undefined && v !== "")
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(" ") : v}`);
  const iso = typeof at === "number" ? new Date(at * 1000).toISOString() : at;
  return h("li", {}, time(iso), " ", badge(event.type), " ", h("span", {}, parts.join(" · ")));
}

function mountSession(main, id) {
  const view = h("section.session-view", {}, h("p", {}, h("a", { href: "#/sessions" }, "← Sessions")));
  main.append(view);
  (async () => {
    try {
      const s = await api(`/api/v0/sessions/${encodeURIComponent(id)}`);
      view.append(
        h("h1", {}, s.label || s.id),
        h(
          "dl.facts",
          {},
          h("dt", {}, "id"),
          h("dd", {}, h("code", {}, s.id)),
          h("dt", {}, "work directory"),
          h("dd.path", { title: s.working_directory || "" }, tilde(s.working_directory) || "none"),
          h("dt", {}, "worktree"),
          h("dd.path", { title: s.worktree || "" }, tilde(s.worktree) || "none"),
          h("dt", {}, "agent"),
          h("dd", {}, s.agent || "none"),
          h("dt", {}, "created"),
          h("dd", {}, time(s.created)),
        ),
        h("h2", {}, `Events (${s.events.length})`),
        h("ol#session-events.events", {}, s.events.map(eventLine)),
        h("h2", {}, "Agent transcripts recorded here"),
        s.history.length
          ? h("ul.conv-list", {}, s.history.map(conversationItem))
          : h("p.hint", {}, s.history_available ? "None yet." : "The search index is not available."),
      );
    } catch (error) {
      view.append(errorBox(error));
    }
  })();
  return () => {};
}

// -- worktrees -----------------------------------------------------------------------

/** Search link for a worktree's history (records name linked worktrees; the primary is the project). */
function historyHref(worktree) {
  const field = worktree.primary ? "project" : "worktree";
  return `#/search?q=${encodeURIComponent(`${field}:${JSON.stringify(worktree.path)}`)}`;
}

export function mountWorktrees(main, route) {
  let repo = route.params.get("repo") || "";
  const list = h("div#worktree-list");
  const repoInput = text("repo", "Repository, e.g. ~/src/shop (empty: the server's workspace)");
  repoInput.value = repo;
  const form = h(
    "form#new-worktree.card",
    {
      onsubmit: async (event) => {
        event.preventDefault();
        const data = values(form);
        const body = { branch: data.branch || "", create_branch: form.elements.create_branch.checked };
        if (data.base_branch) body.base_branch = data.base_branch;
        try {
          const made = await api("/api/v0/worktrees", { method: "POST", body, params: { repo } });
          toast(`Created ${tilde(made.created.path)}`);
          form.reset();
          load();
        } catch (error) {
          toast(error.message, "error");
        }
      },
    },
    h("h2", {}, "New worktree"),
    field("Branch", text("branch", "e.g. feat/cart-tax")),
    h(
      "label.check",
      {},
      h("input", { type: "checkbox", name: "create_branch", value: "1" }),
      " create the branch",
    ),
    field("from", text("base_branch", "e.g. main (empty: HEAD)")),
    h("button", { type: "submit" }, "Add worktree"),
  );
  main.append(
    h(
      "section.worktrees-view",
      {},
      h("h1", {}, "Worktrees"),
      h(
        "form.inline",
        {
          onsubmit: (event) => {
            event.preventDefault();
            location.hash = `#/worktrees${repoInput.value.trim() ? `?repo=${encodeURIComponent(repoInput.value.trim())}` : ""}`;
          },
        },
        repoInput,
        h("button", { type: "submit" }, "Show"),
      ),
      h("div.two-col", {}, list, form),
    ),
  );

  async function remove(worktree) {
    const ok = await confirmDialog(
      "Remove worktree?",
      `git worktree remove ${worktree.path} (branch ${worktree.branch || "detached"}). Sessions bound to it are detached. The branch itself stays.`,
    );
    if (!ok) return;
    try {
      const done = await api("/api/v0/worktrees", {
        method: "DELETE",
        params: { path: worktree.path, repo },
      });
      toast(
        `Removed ${tilde(done.removed.path)}; ${plural(done.detached_sessions.length, "session")} detached`,
      );
    } catch (error) {
      if (error.status === 409 && error.body && error.body.error === "WORKTREE_DIRTY") {
        const force = await confirmDialog(
          "It has uncommitted changes",
          `${plural(error.body.dirty_file_count, "file")} changed or untracked in ${worktree.path}. Remove anyway and lose them?`,
          "Remove anyway",
        );
        if (!force) return;
        try {
          await api("/api/v0/worktrees", {
            method: "DELETE",
            params: { path: worktree.path, repo, force: true },
          });
          toast(`Removed ${tilde(worktree.path)}`);
        } catch (again) {
          toast(again.message, "error");
        }
      } else {
        toast(error.message, "error");
      }
    }
    load();
  }

  async function load() {
    try {
      const data = await api("/api/v0/worktrees", { params: { repo } });
      clear(list).append(
        h(
          "table.grid#worktrees",
          {},
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["worktree", "branch", "head", "state", ""].map((t) => h("th", {}, t)),
            ),
          ),
          h(
            "tbody",
            {},
            data.worktrees.map((w) =>
              h(
                "tr",
                { "data-path": w.path },
                h("td.path", { title: w.path }, tilde(w.path)),
                h("td", {}, w.branch || h("span.dim", {}, "detached")),
                h("td", {}, h("code", {}, w.head || "")),
                h(
                  "td",
                  {},
                  w.primary ? badge("primary") : null,
                  w.locked ? badge("locked", "status-invalid") : null,
                  w.prunable ? badge("prunable", "status-missing") : null,
                  w.dirty ? badge(`${w.dirty_file_count} dirty`, "status-oversize") : null,
                ),
                h(
                  "td",
                  {},
                  h("a", { href: historyHref(w), title: "Agent history in this worktree" }, "history"),
                  " ",
                  w.primary
                    ? null
                    : h("button.danger.small", { type: "button", onclick: () => remove(w) }, "Remove…"),
                ),
              ),
            ),
          ),
        ),
      );
    } catch (error) {
      clear(list).append(
        errorBox(error),
        h(
          "p.hint",
          {},
          "Name a git repository above (e.g. ~/src/shop), or start the server in one: ",
          h("code", {}, "agentdex ui --workspace ~/src/shop"),
          ".",
        ),
      );
    }
  }
  load();
  return () => {};
}
