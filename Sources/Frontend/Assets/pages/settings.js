// Settings: the gateway's runtime options (bridge/request/options): log level and health interval. They last
// until the gateway restarts; config.yaml is what a restart goes back to.

import { h, replace, outcome } from "../dom.js";

const levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"];

export function render(main, { connection, store }) {
  const level = h("select", { id: "option-log-level" }, levels.map((l) => h("option", { value: l }, l)));
  const interval = h("input", { id: "option-health", type: "number", min: 5, max: 86400, step: 1, "aria-describedby": "option-health-hint" });
  const result = h("span", { class: "outcome", role: "status" });
  const form = h("form", { class: "panel" },
    h("div", { class: "field" }, h("label", { for: level.id }, "Log level"), level),
    h("div", { class: "field" }, h("label", { for: interval.id }, "Health report every (seconds)"), interval,
      h("span", { class: "hint", id: "option-health-hint" }, "5 to 86400; how often bridge/health is published")),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Save"), result));
  const info = store.bridge.info?.config || {};
  const facts = Object.entries(info).sort();
  replace(main, h("h1", {}, "Settings"),
    h("p", {}, "These last until the gateway restarts; config.yaml holds what it starts with."), form,
    h("h2", {}, "Configuration in force"),
    h("section", { class: "panel" }, h("dl", { class: "facts" }, facts.map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))]))));
  const show = (data) => {
    if (data.log_level) level.value = data.log_level;
    if (data.health_interval_s) interval.value = data.health_interval_s;
  };
  outcome(result, connection.request(["bridge", "request", "options"], { options: {} }), "Current values loaded.").then((a) => a.status === "ok" && show(a.data));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const options = { log_level: level.value };
    if (interval.value) options.health_interval_s = Number(interval.value);
    const answer = await outcome(result, connection.request(["bridge", "request", "options"], { options }), "Saved.");
    if (answer.status === "ok") show(answer.data);
  });
}
