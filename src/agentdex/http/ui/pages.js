// Every view and panel of the page, registered in nav order. A new page or panel lives in
// its own file, registers itself (views.js says how) and is imported here, one line each.

import { mount as mountContext } from "./context.js";
import { mount as mountConversation } from "./conversation.js";
import { mountConversations, mountSources } from "./lists.js";
import { mount as mountSearch } from "./search.js";
import { registerView } from "./views.js";
import { mountSessions, mountWorktrees } from "./workspaces.js";

registerView({ name: "search", title: "Search", order: 10, mount: mountSearch });
registerView({ name: "conversations", title: "Conversations", order: 20, mount: mountConversations });
registerView({
  name: "c",
  title: "Conversation",
  nav: false,
  navOf: "conversations",
  mount: mountConversation,
});
registerView({ name: "context", title: "Context", order: 30, mount: mountContext });
registerView({ name: "sessions", title: "Sessions", order: 40, mount: mountSessions });
registerView({ name: "worktrees", title: "Worktrees", order: 50, mount: mountWorktrees });
registerView({ name: "sources", title: "Sources", order: 60, mount: mountSources });

// Pages and panels added by their own files (one import each):
import "./team.js";
import { mount as mountSecrets } from "./secrets.js";
registerView({ name: "secrets", title: "Secrets", order: 70, mount: mountSecrets });
import "./usage.js";
import "./semantic.js";
import "./markdown.js";
