// A small code highlighter (written for agentdex, no third-party code): comments,
// strings, numbers, keywords and literals for the languages transcripts are full of.
// It builds text nodes and spans only, and gives up (plain text) on very large blocks.

const KEYWORDS = new Set(
  (
    "and as assert async await break case catch class const continue def default defer del " +
    "delete do elif else enum except export extends finally fn for from func function go " +
    "if impl import in interface is let loop match mod module mut new not or package pass " +
    "pub raise return select self static struct super switch this throw trait try type " +
    "typeof use var void where while with yield local then end fi done esac echo"
  ).split(" "),
);
const LITERALS = new Set("true false null None True False nil undefined NaN".split(" "));

const HASH_COMMENT = new Set([
  "py",
  "python",
  "sh",
  "bash",
  "shell",
  "zsh",
  "console",
  "yaml",
  "yml",
  "toml",
  "rb",
  "ruby",
  "r",
  "make",
  "makefile",
  "dockerfile",
  "ini",
  "conf",
  "text",
]);
const NO_COMMENT = new Set(["json", "jsonl", "csv", "diff", "patch"]);

const MAX_CHARS = 50_000;

function commentStyle(lang) {
  const name = (lang || "").toLowerCase();
  if (NO_COMMENT.has(name)) return "none";
  if (HASH_COMMENT.has(name)) return "hash";
  if (!name) return "both";
  return "slash";
}

function token(re, cls) {
  return { re, cls };
}

function rules(lang) {
  const style = commentStyle(lang);
  const out = [];
  if (style === "slash" || style === "both") {
    out.push(token(/\/\/[^\n]*/y, "c"), token(/\/\*[\s\S]*?(?:\*\/|$)/y, "c"));
  }
  if (style === "hash" || style === "both") out.push(token(/#[^\n]*/y, "c"));
  out.push(
    token(/"""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)/y, "s"),
    token(/"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|`(?:[^`\\]|\\.)*`?/y, "s"),
    token(/\b(?:0x[0-9a-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\b/y, "n"),
    token(/[A-Za-z_$][\w$]*/y, "w"),
  );
  return out;
}

/** Fill `target` with the highlighted `code` (language hint `lang`, may be empty). */
export function highlight(target, code, lang) {
  if (code.length > MAX_CHARS) {
    target.append(code);
    return;
  }
  const list = rules(lang);
  const isDiff = /^(diff|patch)$/i.test(lang || "");
  let plain = "";
  let i = 0;
  const flush = () => {
    if (plain) target.append(plain);
    plain = "";
  };
  const span = (cls, text) => {
    flush();
    const el = document.createElement("span");
    el.className = `tok-${cls}`;
    el.textContent = text;
    target.append(el);
  };
  if (isDiff) {
    for (const line of code.split(/(?<=\n)/)) {
      if (/^[+](?![+][+])/.test(line)) span("add", line);
      else if (/^-(?!--)/.test(line)) span("del", line);
      else if (/^@@/.test(line)) span("c", line);
      else plain += line;
    }
    flush();
    return;
  }
  // A "#" only starts a comment at a line start or after a space (not in URLs or "a#b").
  while (i < code.length) {
    let matched = false;
    for (const { re, cls } of list) {
      re.lastIndex = i;
      const m = re.exec(code);
      if (!m || m[0].length === 0) continue;
      if (cls === "c" && m[0][0] === "#" && i > 0 && !/\s/.test(code[i - 1])) continue;
      if (cls === "w") {
        const word = m[0];
        if (KEYWORDS.has(word)) span("k", word);
        else if (LITERALS.has(word)) span("l", word);
        else plain += word;
      } else {
        span(cls, m[0]);
      }
      i += m[0].length;
      matched = true;
      break;
    }
    if (!matched) {
      plain += code[i];
      i += 1;
    }
  }
  flush();
}
