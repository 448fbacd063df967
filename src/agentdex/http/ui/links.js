// Links to conversations, shared by every view that lists them.

import { ago, badge, goneMark, h, pathLabel, plural } from "./dom.js";

/** Link to a conversation, at one record when `ref` is SESSION@LOCATOR (the CLI's REF). */
export function conversationHref(ref, agent) {
  return `#/c/${encodeURIComponent(ref)}${agent ? `?agent=${encodeURIComponent(agent)}` : ""}`;
}

/** One conversation (`/api/v0/conversations` shape) as a list item: title, agent, size, age. */
export function conversationItem(conv) {
  return h(
    "li",
    {},
    h(
      "a",
      { href: conversationHref(conv.id || conv.session_id, conv.agent) },
      conv.title || conv.id || conv.session_id,
    ),
    " ",
    badge(conv.agent, "agent"),
    h("span.dim", {}, ` ${plural(conv.message_count, "message")} · ${ago(conv.last_activity)}`),
    conv.project ? [" ", pathLabel(conv.project)] : null,
    conv.source_gone ? [" ", goneMark()] : null,
  );
}
