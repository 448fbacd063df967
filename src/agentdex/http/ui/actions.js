// What a conversation can become outside the page: the command that resumes it in its
// own agent (shown to copy; the page never runs a command), its Markdown on the
// clipboard, and a Markdown, standalone HTML or JSON export (`agentdex resume` and
// `agentdex export` over HTTP). Offered only when the server has those routes.

import { api, fetchDocument, routes } from "./api.js";
import { copy, h, toast } from "./dom.js";

const RESUME = "/api/v0/resume/{ref}";
const EXPORT = "/api/v0/export/{ref}";

function routeFor(template, ref) {
  return template.replace("{ref}", encodeURIComponent(ref));
}

function showDialog(...children) {
  const dialog = h("dialog.confirm", {}, ...children);
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}

async function showResume(ref) {
  try {
    const plan = await api(routeFor(RESUME, ref));
    if (!plan.supported) {
      showDialog(
        h("h2", {}, `${plan.agent} cannot resume this conversation`),
        h("p#resume-reason", {}, plan.reason || "This agent has no resume command."),
        h("form", { method: "dialog" }, h("button.quiet", { value: "close" }, "Close")),
      );
      return;
    }
    showDialog(
      h("h2", {}, `Resume in ${plan.agent}`),
      h("p", {}, "Run this in a terminal; the page never runs commands."),
      h("pre#resume-command.command", {}, plan.command),
      plan.note ? h("p.dim", {}, plan.note) : null,
      (plan.warnings || []).map((warning) => h("p.warning", {}, warning)),
      h(
        "form",
        { method: "dialog" },
        h(
          "button",
          {
            type: "button",
            onclick: async () => toast((await copy(plan.command)) ? "Command copied" : "Copy failed"),
          },
          "Copy command",
        ),
        h("button.quiet", { value: "close" }, "Close"),
      ),
    );
  } catch (error) {
    toast(error.message, "error");
  }
}

async function copyMarkdown(ref, button) {
  button.disabled = true;
  try {
    const response = await fetchDocument(routeFor(EXPORT, ref), { format: "md" });
    const done = await copy(await response.text());
    toast(done ? "Copied the conversation as Markdown" : "Copy failed", done ? "" : "error");
  } catch (error) {
    toast(error.message, "error");
  } finally {
    button.disabled = false;
  }
}

async function download(ref, format, redact) {
  try {
    const response = await fetchDocument(routeFor(EXPORT, ref), { format, redact, download: true });
    const disposition = response.headers.get("Content-Disposition") || "";
    const match = /filename="([^"]+)"/.exec(disposition);
    const link = h("a", {
      href: URL.createObjectURL(await response.blob()),
      download: match ? match[1] : `conversation.${format}`,
    });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  } catch (error) {
    toast(error.message, "error");
  }
}

/** Toolbar buttons for the conversation `ref()` names (the routes that exist, only). */
export async function conversationActions(ref) {
  const paths = await routes();
  const out = [];
  if (paths[EXPORT]) {
    const copyButton = h(
      "button#copy-markdown",
      { type: "button", onclick: () => copyMarkdown(ref(), copyButton) },
      "Copy as Markdown",
    );
    const redact = h("input#export-redact", { type: "checkbox" });
    const menu = h(
      "details#export.menu",
      {},
      h("summary", {}, "Export"),
      h(
        "div.menu-body",
        {},
        ["md", "html", "json"].map((format) =>
          h(
            "button.quiet",
            { type: "button", "data-format": format, onclick: () => download(ref(), format, redact.checked) },
            { md: "Markdown", html: "HTML (standalone)", json: "JSON" }[format],
          ),
        ),
        h(
          "label.check",
          { title: "Mask what looks like keys and tokens (in the export only)" },
          redact,
          " mask secrets",
        ),
      ),
    );
    out.push(copyButton, menu);
  }
  if (paths[RESUME]) {
    out.push(h("button#resume", { type: "button", onclick: () => showResume(ref()) }, "Resume…"));
  }
  return out;
}
