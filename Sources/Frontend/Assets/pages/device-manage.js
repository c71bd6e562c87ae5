// Rename, the gateway's per-device options, and remove with a confirmation.

import { h, outcome } from "../dom.js";
import { commandForm } from "../forms.js";

const optionsCommand = {
  name: "options", summary: "How the gateway publishes this wearable's samples", other_fields: false,
  arguments: [
    { name: "batch_ms", type: "integer", min: 0, max: 10000, summary: "collect samples for this long and send them as one message (0: each on its own)" },
    { name: "qos", type: "integer", min: 0, max: 2, summary: "MQTT QoS of samples" },
    { name: "retain", type: "boolean", summary: "retain samples" },
    { name: "notify", type: "choice", options: ["acquire", "start_notify"], summary: "how BlueZ delivers notifications" },
    { name: "link", type: "choice", options: ["auto", "always", "on_demand"], summary: "hold the link always, or connect for a visit (a sync, a command) and let it go (auto: on demand for a band that only syncs behind an ESPHome proxy)" },
    { name: "sync_every_s", type: "integer", min: 60, max: 86400, summary: "seconds between two visits of a device on demand" },
  ],
};

export function managePanel(connection, store, id, device) {
  const rename = commandForm({ name: "rename", summary: "A new id: letters, digits, _ and - (its topics move with it)",
    arguments: [{ name: "name", type: "string", required: true }] },
  (payload) => connection.request(["bridge", "request", "device", "rename"], { id, ...payload }).then((answer) => {
    if (answer.status === "ok") setTimeout(() => (location.hash = `#/device/${encodeURIComponent(payload.name)}`), 600);
    return answer;
  }), { label: "Rename" });
  const options = commandForm(optionsCommand,
    (payload) => connection.request(["bridge", "request", "device", "options"], { id, options: payload }), { label: "Save options" });

  const removeResult = h("span", { class: "outcome", role: "status" });
  const remove = h("button", { type: "button", class: "danger" }, `Remove ${device.name || id}`);
  const confirmButton = h("button", { type: "button", class: "danger" }, "Remove");
  const keep = h("button", { type: "button", class: "secondary" }, "Keep it");
  const dialog = h("dialog", { "aria-labelledby": `remove-title-${id}` },
    h("h2", { id: `remove-title-${id}` }, `Remove ${device.name || id}?`),
    h("p", {}, "The gateway stops connecting to it and clears its retained topics. Add it again from a scan."),
    h("div", { class: "actions" }, confirmButton, keep));
  remove.addEventListener("click", () => dialog.showModal());
  keep.addEventListener("click", () => dialog.close());
  confirmButton.addEventListener("click", async () => {
    dialog.close();
    const answer = await outcome(removeResult, connection.request(["bridge", "request", "device", "remove"], { id }), "Removed.");
    if (answer.status === "ok") setTimeout(() => (location.hash = "#/"), 800);
  });
  return h("section", { class: "panel", "aria-labelledby": "manage-title" },
    h("h2", { id: "manage-title" }, "Manage"),
    h("details", {}, h("summary", {}, "Rename"), rename),
    h("details", {}, h("summary", {}, "Publishing options"), options),
    h("div", { class: "actions" }, remove, removeResult), dialog);
}
