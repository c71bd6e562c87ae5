// Firmware: the packages in the gateway's dfu.dir (bridge/request/firmware/list), an update with a progress bar
// fed by the state's `update`, its result, and cancel.

import { h, outcome, replace, bytes, duration, words } from "../dom.js";
import { allowedNote } from "./device-controls.js";

export function firmwarePanel(connection, store, id, definition) {
  if (!definition?.firmware_update) return null;
  const blocked = allowedNote(store, { allow: "dfu" });
  const list = h("div");
  const listResult = h("span", { class: "outcome", role: "status" });
  const updateResult = h("p", { class: "outcome", role: "status" });
  const progress = h("progress", { id: `dfu-progress-${id}`, max: 100, value: 0 });
  const progressText = h("span", { id: `dfu-progress-text-${id}` });
  const progressBox = h("div", { hidden: true }, h("label", { for: progress.id }, "Update progress"), progress, progressText);
  const cancel = h("button", { type: "button", class: "secondary", hidden: true }, "Cancel the update");
  const check = h("button", { type: "button", class: "secondary" }, "List firmware packages");

  const install = async (pkg, button) => {
    button.disabled = true;
    progressBox.hidden = false;
    const answer = await outcome(updateResult,
      connection.request([id, "request", "dfu"], { file: pkg.file, sha256: pkg.sha256 }, 0),
      (d) => d.update === "scheduled" ? "The device is away: the update runs when it next connects."
        : `Updated to ${d.firmware ?? "the new firmware"} in ${duration(d.seconds ?? 0)}.${d.next_step ? ` ${d.next_step}` : ""}`);
    button.disabled = false;
    return answer;
  };

  check.addEventListener("click", async () => {
    const answer = await outcome(listResult, connection.request(["bridge", "request", "firmware", "list"], {}),
      (d) => `${d.packages.length} package${d.packages.length === 1 ? "" : "s"} in the gateway's firmware folder.`);
    if (answer.status !== "ok") return;
    replace(list, answer.data.packages.length ? h("div", { class: "table-scroll" }, h("table", {},
      h("caption", { class: "sr-only" }, "Firmware packages"),
      h("thead", {}, h("tr", {}, ["File", "Firmware", "Size", ""].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, answer.data.packages.map((pkg) => {
        const button = h("button", { type: "button", disabled: Boolean(blocked || pkg.error),
          "aria-label": `Install ${pkg.file}` }, "Install");
        button.addEventListener("click", () => install(pkg, button));
        return h("tr", {}, h("td", {}, pkg.file), h("td", {}, pkg.error ? `not usable: ${pkg.error}` : pkg.firmware ?? "—"),
          h("td", {}, bytes(pkg.bytes)), h("td", {}, button));
      })))) : h("p", { class: "muted" }, "Put Nordic DFU .zip packages in the gateway's dfu.dir to offer them here."));
  });
  cancel.addEventListener("click", () => outcome(updateResult, connection.request([id, "request", "dfu", "cancel"], {}), "Cancelled."));

  const draw = () => {
    const update = store.states.get(id)?.update;
    if (!update) return;
    const running = update.state !== "idle";
    cancel.hidden = !running;
    if (running || update.progress !== undefined) progressBox.hidden = false;
    if (typeof update.progress === "number") progress.value = update.progress;
    if (update.state === "idle" && update.firmware) progress.value = 100;
    const parts = [words(update.state)];
    parts.push(`${Math.round(progress.value)} %`);
    if (running && update.remaining_s !== undefined) parts.push(`about ${duration(update.remaining_s)} left`);
    if (update.error) parts.push(`failed: ${update.error.message}`);
    progressText.textContent = ` ${parts.join(", ")}`;
  };
  store.addEventListener("change", draw);
  draw();
  const element = h("section", { class: "panel", "aria-labelledby": "firmware-title" },
    h("h2", { id: "firmware-title" }, "Firmware"),
    h("p", { class: "muted" }, `Current: ${store.states.get(id)?.firmware ?? "unknown"}. ${definition.firmware_update.note || ""}`),
    blocked ? h("p", { class: "outcome error" }, blocked) : null,
    h("div", { class: "actions" }, check, listResult), list, progressBox, h("div", { class: "actions" }, cancel), updateResult);
  return { element, destroy: () => store.removeEventListener("change", draw) };
}
