// serve --team: which machine pushed each result and each conversation (docs/team.md).
// The team database's answers carry `machine`; local answers do not, so nothing shows there.

import { badge, h } from "./dom.js";
import { registerPanel } from "./views.js";

registerPanel("search-result", {
  id: "team-machine",
  order: 10,
  render: ({ hit }) => (hit.machine ? badge(hit.machine, "machine") : null),
});

registerPanel("conversation-header", {
  id: "team-machine",
  order: 10,
  render: ({ conv }) =>
    conv.machine ? h("p.machine-note", {}, "Pushed from ", badge(conv.machine, "machine")) : null,
});
