// Message text to DOM (fenced code highlighted, `inline code`). Everything is built from
// text nodes: no transcript text is parsed as HTML.

import { h } from "./dom.js";
import { highlight } from "./highlight.js";
// (markdown.js uses blocks() and codeBlock() from here; both are hoisted declarations, so
// the two modules may import each other)
import { replyBody } from "./markdown.js";

const FENCE = /^(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n([\s\S]*?)(?:^\1[ \t]*$|(?![\s\S]))/gm;

/** Split text into prose and fenced code blocks: [{code: bool, lang, text}]. */
export function blocks(text) {
  const out = [];
  let last = 0;
  FENCE.lastIndex = 0;
  for (let m = FENCE.exec(text); m; m = FENCE.exec(text)) {
    if (m.index > last) out.push({ code: false, text: text.slice(last, m.index) });
    out.push({ code: true, lang: m[2] || "", text: m[3].replace(/\n$/, "") });
    last = m.index + m[0].length;
    if (m[0].length === 0) FENCE.lastIndex += 1;
  }
  if (last < text.length) out.push({ code: false, text: text.slice(last) });
  return out;
}

function prose(text) {
  const el = h("div.prose");
  const parts = text.split(/(`[^`\n]+`)/);
  for (const part of parts) {
    if (part.length > 2 && part.startsWith("`") && part.endsWith("`")) {
      el.append(h("code", {}, part.slice(1, -1)));
    } else if (part) {
      el.append(part);
    }
  }
  return el;
}

export function codeBlock(text, lang) {
  const code = h("code", { class: lang ? `lang-${lang}` : "" });
  highlight(code, text, lang);
  return h("div.codeblock", {}, lang ? h("span.lang", {}, lang) : null, h("pre", {}, code));
}

/** Prose with fenced code blocks highlighted. */
export function richText(text) {
  const frag = document.createDocumentFragment();
  for (const block of blocks(text || "")) {
    if (block.code) frag.append(codeBlock(block.text, block.lang));
    else if (block.text.trim()) frag.append(prose(block.text.replace(/^\n+|\n+$/g, "")));
  }
  return frag;
}

/** "Bash {json}" -> {tool: "Bash", input: pretty JSON} when the text has that shape. */
export function toolCall(text) {
  const m = /^([\w.:/-]{1,80})\s+([[{][\s\S]*)$/.exec(text || "");
  if (!m) return null;
  try {
    return { tool: m[1], input: JSON.stringify(JSON.parse(m[2]), null, 2) };
  } catch {
    return { tool: m[1], input: m[2] };
  }
}

/** The body of a record as the conversation view shows it. */
export function recordBody(record) {
  const text = record.text || "";
  if (record.kind === "tool_call") {
    const call = toolCall(text);
    if (call) return codeBlock(call.input, "json");
    return codeBlock(text, "");
  }
  if (record.kind === "tool_result") {
    return blocks(text).some((b) => b.code) ? richText(text) : codeBlock(text, "text");
  }
  if (record.kind === "message" && record.role === "assistant") return replyBody(text);
  return richText(text);
}
