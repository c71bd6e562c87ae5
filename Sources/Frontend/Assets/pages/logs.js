// Logs: the gateway's warnings and errors from bridge/logging, live, with a level filter.

import { h, replace, value } from "../dom.js";
import { throttle } from "./shared.js";

const levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"];

export function render(main, { store }) {
  const filter = h("select", { id: "log-level" }, levels.map((l) => h("option", { value: l, selected: l === "warning" }, `${l} and above`)));
  const list = h("ol", { class: "timeline log", "aria-label": "Log lines, newest first" });
  const empty = h("p", { class: "muted" }, "No log lines at this level since this page was opened. The gateway sends warnings and errors here; Settings changes its log level.");
  replace(main, h("h1", {}, "Logs"),
    h("div", { class: "inline" }, h("div", { class: "field" }, h("label", { for: "log-level" }, "Show"), filter)), empty, list);
  const draw = throttle(() => {
    const minimum = levels.indexOf(filter.value);
    const shown = store.logs.filter((l) => levels.indexOf(l.level) >= minimum).slice(-500).reverse();
    empty.hidden = shown.length > 0;
    replace(list, shown.map((l) => h("li", { class: `level-${l.level}` },
      h("time", { datetime: new Date(l.ts).toISOString() }, new Date(l.ts).toLocaleTimeString()),
      ` ${l.level.toUpperCase()} [${l.logger ?? "gateway"}] ${l.message}`,
      l.metadata && Object.keys(l.metadata).length ? ` — ${Object.entries(l.metadata).map(([k, v]) => `${k}: ${value(v)}`).join(", ")}` : "",
      l.suppressed ? ` (${l.suppressed} similar held back)` : "")));
  }, 300);
  filter.addEventListener("change", draw);
  // Logs are not retained: the store keeps them from the moment the page loaded.
  const stop = store.on(`+/bridge/logging`, draw);
  draw();
  return stop;
}
