// Conversation view: every message in order (rendered in pages, so 5,000 messages stay
// light), roles styled, tool calls/results and reasoning folded with their size, code
// highlighted, a deep link per message (the CLI's REF), copy as Markdown, live updates.

import { conversationActions } from "./actions.js";
import { api, stream } from "./api.js";
import {
  ago,
  badge,
  bytes,
  clear,
  copy,
  count,
  errorBox,
  goneMark,
  h,
  plural,
  tilde,
  time,
  toast,
  when,
} from "./dom.js";
import { recordBody, toolCall } from "./render.js";
import { conversationHref } from "./links.js";
import { panels } from "./views.js";

const PAGE = 150;
const MAX_CHARS = 4000;
const FOLDED = new Set(["tool_call", "tool_result", "reasoning"]);
const PIN_MS = 2000;
const USER_SCROLL = ["wheel", "touchstart", "keydown", "mousedown"];

function preview(record) {
  if (record.kind === "tool_call") {
    const call = toolCall(record.text);
    if (call) return call.tool;
  }
  return (record.text || "").replace(/\s+/g, " ").slice(0, 120);
}

function messageHead(record) {
  return [
    h("span.role", {}, record.role),
    h("span.kind", {}, record.kind.replace("_", " ")),
    FOLDED.has(record.kind)
      ? h("span.size", { title: `${count(record.chars)} characters` }, bytes(record.chars))
      : null,
    h("span.when", { title: record.timestamp || "" }, when(record.timestamp)),
    record.model ? h("span.model", {}, record.model) : null,
    record.source_gone ? goneMark() : null,
    h(
      "a.permalink",
      {
        href: conversationHref(record.short_ref || record.ref),
        title: `Deep link: ${record.short_ref || record.ref}`,
        "aria-label": "Link to this message",
      },
      "#",
    ),
  ];
}

/** The reference links use: ID@LOCATOR (a team server's records have only `ref`). */
function refOf(record) {
  return record.short_ref || record.ref;
}

/** Does `ref` (as a URL or a search result gives it) name this record? */
function names(record, ref) {
  return ref === record.ref || ref === refOf(record);
}

function duration(first, last) {
  const ms = Date.parse(last) - Date.parse(first);
  if (!Number.isFinite(ms) || ms <= 0) return "";
  const minutes = Math.round(ms / 60000);
  if (minutes < 60) return `${minutes} min`;
  if (minutes < 48 * 60) return `${(minutes / 60).toFixed(1)} h`;
  return `${Math.round(minutes / 1440)} days`;
}

export function mount(main, route) {
  const view = h("section.conversation-view");
  main.append(view);
  const controller = new AbortController();
  let conv = null;
  let start = 0;
  let end = 0;
  let focusRef = route.rest;
  let unseen = 0;
  const agent = route.params.get("agent") || undefined;
  const messages = h("div#messages.messages");
  const topSentinel = h("div.sentinel", { "aria-hidden": "true" });
  const bottomSentinel = h("div.sentinel", { "aria-hidden": "true" });
  const newPill = h("button#new-messages.pill", { type: "button", hidden: true, onclick: () => jumpToEnd() });
  const live = h("span#live.live", { title: "New messages appear while an agent writes" }, "connecting…");

  function messageEl(record) {
    const folded = FOLDED.has(record.kind);
    const body = h("div.body");
    const fill = () => {
      clear(body).append(recordBody(record));
      if (record.truncated) {
        body.append(
          h(
            "button.more",
            {
              type: "button",
              onclick: async (event) => {
                event.target.disabled = true;
                try {
                  const full = await api("/api/v0/show/record", { params: { ref: record.ref, agent } });
                  Object.assign(record, full);
                  fill();
                } catch (error) {
                  body.append(errorBox(error));
                }
              },
            },
            `Show all ${count(record.chars)} characters`,
          ),
        );
      }
    };
    const cls = `msg role-${record.role} kind-${record.kind}`;
    let el;
    if (folded) {
      const details = h(
        "details.fold",
        {},
        h("summary", {}, h("span.msg-head", {}, messageHead(record)), h("span.preview", {}, preview(record))),
        body,
      );
      details.addEventListener("toggle", () => {
        if (details.open && !body.firstChild) fill();
      });
      el = h("article", { class: cls }, details);
    } else {
      fill();
      el = h("article", { class: cls }, h("header.msg-head", {}, messageHead(record)), body);
    }
    el.dataset.ref = record.short_ref || record.ref;
    el.dataset.position = String(record.position);
    return el;
  }

  function renderWindow(from, to) {
    start = Math.max(0, from);
    end = Math.min(conv.records.length, to);
    clear(messages);
    const frag = document.createDocumentFragment();
    for (let i = start; i < end; i += 1) frag.append(messageEl(conv.records[i]));
    messages.append(frag);
    topSentinel.hidden = start === 0;
    bottomSentinel.hidden = end === conv.records.length;
  }

  function extendUp() {
    if (!conv || start === 0) return;
    const from = Math.max(0, start - PAGE);
    const before = main.scrollHeight;
    const frag = document.createDocumentFragment();
    for (let i = from; i < start; i += 1) frag.append(messageEl(conv.records[i]));
    messages.prepend(frag);
    start = from;
    main.scrollTop += main.scrollHeight - before;
    topSentinel.hidden = start === 0;
  }

  function extendDown() {
    if (!conv || end >= conv.records.length) return;
    const to = Math.min(conv.records.length, end + PAGE);
    const frag = document.createDocumentFragment();
    for (let i = end; i < to; i += 1) frag.append(messageEl(conv.records[i]));
    messages.append(frag);
    end = to;
    bottomSentinel.hidden = end === conv.records.length;
    if (end === conv.records.length) hidePill();
  }

  const observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        if (entry.target === topSentinel) extendUp();
        else extendDown();
      }
    },
    { root: main, rootMargin: "800px 0px" },
  );

  function elementOf(ref) {
    return messages.querySelector(`article[data-ref="${CSS.escape(ref)}"]`);
  }

  function focusOn(ref, { scroll = true } = {}) {
    const index = conv.records.findIndex((r) => names(r, ref));
    for (const old of messages.querySelectorAll("article.focus")) old.classList.remove("focus");
    if (index < 0) return false;
    if (index < start || index >= end) renderWindow(index - PAGE / 2, index + PAGE / 2);
    ref = refOf(conv.records[index]);
    const el = elementOf(ref);
    el.classList.add("focus");
    const fold = el.querySelector("details");
    if (fold && !fold.open) fold.open = true;
    if (scroll) pin(el);
    focusRef = ref;
    return true;
  }

  // Messages are laid out lazily (content-visibility: auto, estimated 90 px each), so the
  // ones around a deep-linked message take their real heights only after the jump and
  // would push it out of view. Keep it centred while they settle (at most PIN_MS), unless
  // the reader scrolls first.
  let unpin = null;
  function pin(el) {
    if (unpin) unpin();
    const center = () => el.scrollIntoView({ block: "center" });
    center();
    const resize = new ResizeObserver(() => {
      if (el.isConnected) center();
    });
    resize.observe(messages);
    const stop = () => {
      resize.disconnect();
      clearTimeout(timer);
      for (const name of USER_SCROLL) main.removeEventListener(name, stop);
      unpin = null;
    };
    const timer = setTimeout(stop, PIN_MS);
    for (const name of USER_SCROLL) main.addEventListener(name, stop, { passive: true });
    unpin = stop;
  }

  function jumpToEnd() {
    renderWindow(conv.records.length - PAGE, conv.records.length);
    main.scrollTop = main.scrollHeight;
    hidePill();
  }

  function jumpToStart() {
    renderWindow(0, PAGE);
    main.scrollTop = 0;
  }

  function hidePill() {
    unseen = 0;
    newPill.hidden = true;
  }

  function step(delta) {
    const index = conv.records.findIndex((r) => names(r, focusRef));
    const next = Math.max(0, Math.min(conv.records.length - 1, (index < 0 ? start - delta : index) + delta));
    const ref = refOf(conv.records[next]);
    focusOn(ref, { scroll: false });
    elementOf(ref).scrollIntoView({ block: "nearest" });
    history.replaceState(null, "", conversationHref(ref, agent));
  }

  function header() {
    const chips = [
      badge(conv.agent, "agent"),
      h("span.chip", { title: `session id ${conv.session_id}` }, h("code", {}, conv.id || conv.session_id)),
      conv.project
        ? h("span.chip", { title: conv.project }, "project ", h("strong", {}, tilde(conv.project)))
        : null,
      ...conv.branches.map((b) => h("span.chip.branch", { title: "branch" }, "branch ", h("strong", {}, b))),
      ...conv.worktrees.map((w) => h("span.chip", { title: w }, "worktree ", h("strong", {}, tilde(w)))),
      ...conv.models.map((m) => h("span.chip", { title: "model" }, m)),
    ];
    const kinds = Object.entries(conv.kind_counts)
      .map(([k, n]) => `${count(n)} ${k.replace("_", " ")}`)
      .join(" · ");
    return h(
      "header.conv-head",
      {},
      h("h1", {}, conv.title || conv.session_id),
      h("div.chips", {}, chips),
      h(
        "p.times",
        {},
        time(conv.first_activity),
        conv.last_activity && conv.last_activity !== conv.first_activity
          ? [" → ", time(conv.last_activity)]
          : null,
        conv.first_activity
          ? ` (${duration(conv.first_activity, conv.last_activity) || "one moment"}, last ${ago(conv.last_activity)}) · `
          : "",
        h("span#message-count", {}, plural(conv.message_count, "message")),
        h("span.dim", {}, ` (${kinds})`),
      ),
      conv.cwd ? h("p.dim.cwd", { title: "working directory" }, tilde(conv.cwd)) : null,
      panels("conversation-header", { conv }),
    );
  }

  async function toolbar() {
    return h(
      "div.toolbar",
      {},
      await conversationActions(() => focusRef || conv.id || conv.session_id),
      h(
        "button#copy-link",
        {
          type: "button",
          title: "Copy a link to the focused message (or the conversation)",
          onclick: async () => {
            const link = `${location.origin}/${conversationHref(focusRef || conv.id || conv.session_id, agent)}`;
            toast((await copy(link)) ? "Link copied" : "Copy failed");
          },
        },
        "Copy link",
      ),
      h("button.quiet", { type: "button", onclick: jumpToStart }, "Top"),
      h("button.quiet", { type: "button", onclick: jumpToEnd }, "End"),
      ...panels("conversation-toolbar", { conv, focusRef }),
      h("span.spacer"),
      live,
    );
  }

  function applyNew(fresh, messageCount) {
    const atBottom = main.scrollHeight - main.scrollTop - main.clientHeight < 80;
    const showingEnd = end === conv.records.length;
    let appended = 0;
    for (const record of fresh) {
      if (record.position >= conv.records.length) {
        record.position = conv.records.length;
        conv.records.push(record);
        appended += 1;
      } else {
        conv.records.splice(record.position, 0, record);
        conv.records.forEach((r, i) => (r.position = i));
        renderWindow(start, end + 1);
      }
      conv.kind_counts[record.kind] = (conv.kind_counts[record.kind] || 0) + 1;
      if (record.timestamp && (!conv.last_activity || record.timestamp > conv.last_activity))
        conv.last_activity = record.timestamp;
    }
    conv.message_count = messageCount;
    const counter = view.querySelector("#message-count");
    if (counter) counter.textContent = plural(conv.records.length, "message");
    if (!appended) return;
    if (showingEnd) {
      for (const record of conv.records.slice(end)) {
        const el = messageEl(record);
        el.classList.add("new");
        messages.append(el);
      }
      end = conv.records.length;
      if (atBottom) main.scrollTop = main.scrollHeight;
    }
    if (!showingEnd || !atBottom) {
      unseen += appended;
      newPill.textContent = `${plural(unseen, "new message")} ↓`;
      newPill.hidden = false;
    }
  }

  async function follow() {
    try {
      await stream(
        "/api/v0/show/events",
        { ref: conv.session_id, agent, max_chars: MAX_CHARS, timeout: 86400 },
        (name, data) => {
          if (name === "hello") {
            live.textContent = "live";
            live.classList.add("on");
            if (data.message_count !== conv.records.length) reload();
          } else if (name === "records") {
            applyNew(data.records, data.message_count);
          }
        },
        controller.signal,
      );
      live.textContent = "not live (stream ended)";
    } catch (error) {
      if (error.name === "AbortError") return;
      live.textContent = "not live";
      live.title = error.message;
    }
    live.classList.remove("on");
  }

  async function reload() {
    const fresh = await api("/api/v0/show", {
      params: { ref: conv.session_id, agent, max_chars: MAX_CHARS },
      signal: controller.signal,
    });
    conv = fresh;
    renderWindow(start, Math.max(end, start + PAGE));
  }

  async function load() {
    view.append(h("p.hint", {}, "Loading conversation…"));
    try {
      conv = await api("/api/v0/show", {
        params: { ref: focusRef, agent, max_chars: MAX_CHARS, refresh: true },
        signal: controller.signal,
      });
    } catch (error) {
      if (error.name === "AbortError") return;
      clear(view).append(
        h("h1", {}, "Conversation"),
        errorBox(error),
        h("p", {}, h("a", { href: "#/search" }, "Back to search")),
      );
      return;
    }
    clear(view).append(header(), await toolbar(), topSentinel, messages, bottomSentinel, newPill);
    const focus = conv.focus;
    if (focus !== null && focus !== undefined) {
      renderWindow(focus - PAGE / 2, focus + PAGE / 2);
      focusOn(refOf(conv.records[focus]));
    } else {
      focusRef = null;
      renderWindow(0, PAGE);
      main.scrollTop = 0;
    }
    observer.observe(topSentinel);
    observer.observe(bottomSentinel);
    window.agentdexConversation = {
      records: () => conv.records.length,
      rendered: () => messages.childElementCount,
    };
    document.dispatchEvent(
      new CustomEvent("agentdex:conversation", { detail: { messages: conv.records.length } }),
    );
    follow();
  }

  function onKey(event) {
    if (
      !conv ||
      event.target.closest("input, select, textarea, dialog") ||
      event.ctrlKey ||
      event.metaKey ||
      event.altKey
    )
      return;
    if (event.key === "j") step(1);
    else if (event.key === "k") step(-1);
    else if (event.key === "/") {
      event.preventDefault();
      location.hash = "#/search";
    }
  }
  document.addEventListener("keydown", onKey);
  load();

  return {
    cleanup() {
      if (unpin) unpin();
      controller.abort();
      observer.disconnect();
      document.removeEventListener("keydown", onKey);
      delete window.agentdexConversation;
    },
    /** Same conversation, another message: move the focus instead of reloading. */
    update(next) {
      if (!conv) return false;
      const ref = next.rest;
      const same = [conv.session_id, conv.id]
        .filter(Boolean)
        .some((id) => ref === id || ref.startsWith(`${id}@`));
      if (!same) return false;
      if (ref.includes("@")) return focusOn(ref);
      return true;
    },
  };
}
