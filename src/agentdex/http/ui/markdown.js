// A reply's Markdown as DOM: headings, paragraphs, lists (nested by indent), block quotes,
// tables, rules, fenced code (highlighted), `code`, **strong**, *emphasis*, ~~struck~~ and
// [links](https://...). Sanitised by construction: every piece of transcript text becomes a
// text node (never innerHTML), links are http(s)/mailto only and open without a referrer.
// A conversation's toolbar has a "Raw" switch (remembered in this browser) that shows the
// text as it was written instead.

import { h } from "./dom.js";
import { blocks, codeBlock } from "./render.js";
import { registerPanel } from "./views.js";

const RAW_KEY = "agentdex.rawText";
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const ITEM = /^([ \t]*)([-*+]|\d{1,9}[.)])[ \t]+(.*)$/;
const QUOTE = /^ {0,3}>[ \t]?(.*)$/;
const TABLE_RULE = /^[ \t]*\|?[ \t]*:?-{1,}:?[ \t]*(\|[ \t]*:?-{1,}:?[ \t]*)*\|?[ \t]*$/;
const INLINE =
  /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([\s\S]*?\S)\*\*|__(?=\S)([\s\S]*?\S)__|~~(?=\S)([\s\S]*?\S)~~|\*(?=[^\s*])([^*]*?[^\s*])\*|(?<![\w])_(?=[^\s_])([^_]*?[^\s_])_(?![\w])|\[([^\]\n]+)\]\(([^)\s]+)(?:\s+"[^"\n]*")?\)|(https?:\/\/[^\s<>()]*[^\s<>().,;:!?'"])/;

/** Is the Raw switch on (the text as written instead of rendered Markdown)? */
export function rawText() {
  try {
    return localStorage.getItem(RAW_KEY) === "1";
  } catch {
    return false;
  }
}

function setRaw(on) {
  try {
    localStorage.setItem(RAW_KEY, on ? "1" : "0");
  } catch {
    /* private mode: the switch holds for this page only */
  }
  document.body.classList.toggle("raw-text", on);
}

/** `href` when it is a web or mail address, else null (no javascript:, data:, relative). */
function safeHref(href) {
  try {
    const url = new URL(href);
    return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

function link(label, href) {
  const safe = safeHref(href);
  if (!safe) return document.createTextNode(label === href ? href : `${label} (${href})`);
  return h("a", { href: safe, target: "_blank", rel: "noopener noreferrer nofollow" }, inline(label));
}

/** Inline Markdown of one block's text, as nodes. */
export function inline(text) {
  const out = [];
  let rest = text;
  for (let guard = 0; rest && guard < 10_000; guard += 1) {
    const m = INLINE.exec(rest);
    if (!m) break;
    if (m.index > 0) out.push(rest.slice(0, m.index));
    if (m[1]) out.push(h("code", {}, m[2].replace(/^ (.*) $/s, "$1")));
    else if (m[3] !== undefined || m[4] !== undefined) out.push(h("strong", {}, inline(m[3] ?? m[4])));
    else if (m[5] !== undefined) out.push(h("del", {}, inline(m[5])));
    else if (m[6] !== undefined || m[7] !== undefined) out.push(h("em", {}, inline(m[6] ?? m[7])));
    else if (m[8] !== undefined) out.push(link(m[8], m[9]));
    else out.push(link(m[10], m[10]));
    rest = rest.slice(m.index + m[0].length);
  }
  if (rest) out.push(rest);
  return out;
}

function cells(row) {
  let line = row.trim();
  if (line.startsWith("|")) line = line.slice(1);
  if (line.endsWith("|") && !line.endsWith("\\|")) line = line.slice(0, -1);
  return line.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

function table(lines) {
  const head = cells(lines[0]);
  const align = cells(lines[1]).map((c) => (c.endsWith(":") ? (c.startsWith(":") ? "center" : "right") : null));
  const row = (values, tag) =>
    h(
      "tr",
      {},
      head.map((_, i) => h(tag, { class: align[i] ? `al-${align[i]}` : null }, inline(values[i] || ""))),
    );
  return h(
    "div.md-table",
    {},
    h("table", {}, h("thead", {}, row(head, "th")), h("tbody", {}, lines.slice(2).map((l) => row(cells(l), "td")))),
  );
}

function indentOf(text) {
  return text.replace(/\t/g, "    ").length;
}

/** A list from `lines` (each an item line or its continuation), nested by indent. */
function list(lines) {
  const first = ITEM.exec(lines[0]);
  const ordered = /\d/.test(first[2]);
  const base = indentOf(first[1]);
  const start = ordered ? parseInt(first[2], 10) : null;
  const el = h(ordered ? "ol" : "ul", { start: ordered && start !== 1 ? start : null });
  let item = null;
  for (let i = 0; i < lines.length; i += 1) {
    const m = ITEM.exec(lines[i]);
    if (m && indentOf(m[1]) <= base) {
      item = { text: [m[3]], nested: [] };
      el.append(h("li"));
      el.lastChild.item = item;
    } else if (m && item) {
      item.nested.push(lines[i]);
    } else if (item && item.nested.length) {
      item.nested.push(lines[i]);
    } else if (item) {
      item.text.push(lines[i].trim());
    }
  }
  for (const li of el.children) {
    const { text, nested } = li.item;
    const task = /^\[([ xX])\][ \t]+/.exec(text[0]);
    if (task) {
      text[0] = text[0].slice(task[0].length);
      li.append(h("input", { type: "checkbox", disabled: true, checked: task[1] !== " " }), " ");
    }
    li.append(...inline(text.join("\n")));
    if (nested.length) li.append(blocksOf(nested));
    delete li.item;
  }
  return el;
}

/** Block Markdown (no fences: those are split off first) as a fragment. */
function blocksOf(lines) {
  const frag = document.createDocumentFragment();
  let para = [];
  const flush = () => {
    if (para.length) frag.append(h("p", {}, inline(para.join("\n"))));
    para = [];
  };
  for (let i = 0; i < lines.length; ) {
    const line = lines[i];
    let m;
    if (!line.trim()) {
      flush();
      i += 1;
    } else if ((m = HEADING.exec(line))) {
      flush();
      frag.append(h(`h${Math.min(6, m[1].length + 2)}.md-h${m[1].length}`, {}, inline(m[2])));
      i += 1;
    } else if (RULE.test(line) && !para.length) {
      flush();
      frag.append(h("hr"));
      i += 1;
    } else if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      flush();
      let j = i + 2;
      while (j < lines.length && lines[j].includes("|") && lines[j].trim()) j += 1;
      frag.append(table(lines.slice(i, j)));
      i = j;
    } else if (QUOTE.test(line)) {
      flush();
      const quoted = [];
      while (i < lines.length && (m = QUOTE.exec(lines[i]))) {
        quoted.push(m[1]);
        i += 1;
      }
      frag.append(h("blockquote", {}, blocksOf(quoted)));
    } else if (ITEM.test(line) && (!para.length || !/^\s/.test(line))) {
      flush();
      const first = ITEM.exec(line);
      // an item of the other kind (1. after -) at the list's indent starts another list
      const other = (text) => {
        const item = ITEM.exec(text);
        return item && indentOf(item[1]) <= indentOf(first[1]) && /\d/.test(item[2]) !== /\d/.test(first[2]);
      };
      const items = [line];
      i += 1;
      while (i < lines.length) {
        const next = lines[i];
        if (!next.trim()) {
          // a blank line ends the list unless an item or an indented line follows
          const after = lines[i + 1];
          if (after !== undefined && !other(after) && (ITEM.test(after) || /^[ \t]{2,}\S/.test(after))) {
            i += 1;
            continue;
          }
          break;
        }
        if (other(next) || HEADING.test(next) || QUOTE.test(next) || (RULE.test(next) && !ITEM.test(next))) break;
        items.push(next);
        i += 1;
      }
      frag.append(list(items));
    } else {
      para.push(line);
      i += 1;
    }
  }
  flush();
  return frag;
}

/** `text` as rendered Markdown (a div.md), fenced code highlighted as elsewhere. */
export function markdown(text) {
  const el = h("div.md");
  for (const block of blocks(text || "")) {
    if (block.code) el.append(codeBlock(block.text, block.lang));
    else if (block.text.trim()) el.append(blocksOf(block.text.split("\n")));
  }
  return el;
}

/** A reply: its Markdown, and the text as written beside it (shown by the Raw switch). */
export function replyBody(text) {
  const frag = document.createDocumentFragment();
  frag.append(markdown(text), h("div.prose.md-raw", {}, text || ""));
  return frag;
}

function ensureStyles() {
  if (document.querySelector('link[href="/ui/markdown.css"]')) return;
  document.head.append(h("link", { rel: "stylesheet", href: "/ui/markdown.css" }));
}

ensureStyles();
document.body.classList.toggle("raw-text", rawText());

registerPanel("conversation-toolbar", {
  id: "raw-text",
  order: 50,
  render: () => {
    const button = h("button.quiet#raw-toggle", {
      type: "button",
      "aria-pressed": String(rawText()),
      title: "Show replies as written, without rendering their Markdown",
      onclick: () => {
        const on = !rawText();
        setRaw(on);
        button.setAttribute("aria-pressed", String(on));
      },
    }, "Raw");
    return button;
  },
});
