// Context view: what every agent is told in a workspace: instruction files, skills and
// MCP configs with their caps, hashes, and what was truncated or refused. Live: the
// context event stream re-renders on every new version. MCP configs never carry values.

import { api, stream } from "./api.js";
import { badge, bytes, clear, count, errorBox, fill, h, plural, toast } from "./dom.js";
import { richText } from "./render.js";

const KIND_TITLES = {
  instruction_file: "Instruction files",
  skill: "Skills",
  mcp_config: "MCP configs (server names only; values never leave the file)",
};

function statusNote(resource, caps) {
  const cap = resource.kind === "mcp_config" ? caps.max_mcp_config_bytes : caps.max_resource_bytes;
  switch (resource.status) {
    case "oversize":
      return `truncated: over the ${bytes(cap)} cap; no payload, the first ${bytes(cap)} are hashed`;
    case "excluded":
      return "excluded: past the resource-count or total-payload cap";
    case "invalid":
      return `refused: ${resource.error || "invalid"}`;
    case "unreadable":
      return `unreadable: ${resource.error || ""}`;
    default:
      return resource.error || "";
  }
}

function relative(path, workspace) {
  return path.startsWith(`${workspace}/`) ? path.slice(workspace.length + 1) : path;
}

export function mount(main, route) {
  const controller = new AbortController();
  let caps = {};
  let workspace = route.params.get("dir") || "";
  const view = h("section.context-view");
  const input = h("input#context-dir", {
    type: "text",
    placeholder: "Workspace, e.g. ~/src/shop (empty: the server's)",
    "aria-label": "Workspace directory",
    spellcheck: "false",
  });
  input.value = workspace;
  const body = h("div#context-body");
  const live = h("span#context-live.live", {}, "connecting…");
  const form = h(
    "form.inline",
    {
      onsubmit: (event) => {
        event.preventDefault();
        location.hash = `#/context${input.value.trim() ? `?dir=${encodeURIComponent(input.value.trim())}` : ""}`;
      },
    },
    input,
    h("button", { type: "submit" }, "Show"),
    h(
      "button.quiet",
      {
        type: "button",
        title: "Resolve again now",
        onclick: async () => {
          try {
            render(await api("/api/v0/context/resync", { method: "POST", params: { dir: workspace } }));
            toast("Resynced");
          } catch (error) {
            toast(error.message, "error");
          }
        },
      },
      "Resync",
    ),
    live,
  );
  view.append(h("h1", {}, "Context"), form, body);
  main.append(view);

  function resourceRow(resource, snap) {
    const note = statusNote(resource, caps);
    const cap = resource.kind === "mcp_config" ? caps.max_mcp_config_bytes : caps.max_resource_bytes;
    const row = h(
      "li.resource",
      { "data-status": resource.status, "data-kind": resource.kind },
      h(
        "div.resource-head",
        {},
        badge(resource.status, `status-${resource.status}`),
        h("span.path", { title: resource.source }, relative(resource.source, snap.workspace)),
        resource.scope !== "workspace" ? h("span.dim", {}, ` (${resource.scope})`) : null,
        h(
          "span.size",
          { title: cap ? `cap ${bytes(cap)}` : "" },
          `${bytes(resource.size)}${cap ? ` / ${bytes(cap)} cap` : ""}`,
        ),
      ),
      resource.name || resource.description
        ? h(
            "div.resource-name",
            {},
            resource.name ? h("strong", {}, resource.name) : null,
            resource.description ? ` ${resource.description}` : "",
          )
        : null,
      resource.servers && resource.servers.length
        ? h(
            "div.servers",
            {},
            "servers: ",
            resource.servers.map((s) => h("code.chip", {}, s)),
          )
        : null,
      note ? h("div.note", {}, note) : null,
      resource.target ? h("div.dim", {}, `link to ${resource.target}`) : null,
      resource.aliases && resource.aliases.length
        ? h("div.dim", {}, `also at ${resource.aliases.join(", ")}`)
        : null,
      h(
        "div.hash",
        { title: "sha256 of the bytes read" },
        resource.content_hash ? `sha256 ${resource.content_hash}` : "not read",
      ),
    );
    if (resource.status === "ok" && resource.kind !== "mcp_config") {
      const text = h("div.payload", { hidden: true });
      const toggle = h(
        "button.quiet.small",
        {
          type: "button",
          onclick: async () => {
            if (!text.hidden) {
              text.hidden = true;
              toggle.textContent = "Show text";
              return;
            }
            try {
              const full = await api("/api/v0/context/snapshot", {
                params: { dir: snap.workspace, payload: 1 },
              });
              const found = full.resources.find((r) => r.id === resource.id);
              clear(text).append(richText(found && found.payload ? found.payload : "(no text)"));
              text.hidden = false;
              toggle.textContent = "Hide text";
            } catch (error) {
              toast(error.message, "error");
            }
          },
        },
        "Show text",
      );
      row.append(toggle, text);
    }
    return row;
  }

  function render(snap) {
    workspace = snap.workspace;
    if (!input.value) input.placeholder = snap.workspace;
    const byKind = new Map();
    for (const resource of snap.resources) {
      if (!byKind.has(resource.kind)) byKind.set(resource.kind, []);
      byKind.get(resource.kind).push(resource);
    }
    const statuses = Object.entries(snap.status_counts).map(([s, n]) =>
      badge(`${count(n)} ${s}`, `status-${s}`),
    );
    fill(
      body,
      h(
        "div.summary",
        {},
        h("p", {}, h("strong", {}, snap.workspace), h("span.dim", {}, `  version ${snap.version}`)),
        h(
          "p",
          {},
          plural(snap.resource_count, "resource"),
          ` · payload ${bytes(snap.total_payload_bytes)} of ${bytes(caps.max_total_bytes)} cap · at most ${count(caps.max_resources)} resources · `,
          statuses,
        ),
        h(
          "p.hash",
          { title: "aggregate hash: changes when any resource changes" },
          `aggregate sha256 ${snap.aggregate_hash}`,
        ),
        snap.error ? h("p.warning", { role: "note" }, snap.error) : null,
      ),
      [...byKind.entries()].map(([kind, list]) =>
        h(
          "section.kind",
          { "data-kind": kind },
          h("h2", {}, `${KIND_TITLES[kind] || kind} (${list.length})`),
          h(
            "ul.resources",
            {},
            list.map((r) => resourceRow(r, snap)),
          ),
        ),
      ),
      snap.resources.length ? null : h("p.hint", {}, "Nothing here tells an agent anything."),
      h(
        "details.roots",
        {},
        h("summary", {}, `Scanned roots (${snap.roots.length})`),
        h(
          "table",
          {},
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              h("th", {}, "root"),
              h("th", {}, "scope"),
              h("th", {}, "status"),
              h("th", {}, "note"),
            ),
          ),
          h(
            "tbody",
            {},
            snap.roots.map((root) =>
              h(
                "tr",
                {},
                h("td.path", {}, root.path),
                h("td", {}, root.scope),
                h("td", {}, badge(root.status, `status-${root.status}`)),
                h("td", {}, root.error || ""),
              ),
            ),
          ),
        ),
      ),
    );
  }

  async function load() {
    try {
      caps = (await api("/api/v0/limits", { signal: controller.signal })).context;
      render(
        await api("/api/v0/context/snapshot", { params: { dir: workspace }, signal: controller.signal }),
      );
    } catch (error) {
      if (error.name !== "AbortError") clear(body).append(errorBox(error));
      return;
    }
    try {
      await stream(
        "/api/v0/context/events",
        { dir: workspace, timeout: 86400 },
        (name, snap) => {
          live.textContent = `live · v${snap.version}`;
          live.classList.add("on");
          render(snap);
        },
        controller.signal,
      );
    } catch (error) {
      if (error.name === "AbortError") return;
      live.title = error.message;
    }
    live.textContent = "not live";
    live.classList.remove("on");
  }
  load();
  return () => controller.abort();
}
