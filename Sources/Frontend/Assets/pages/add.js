// Add a wearable: a scan with live results (device_found events), what each is according to the drivers'
// descriptions, Add, then the pairing its description names.

import { h, replace, outcome } from "../dom.js";
import { recognise } from "./shared.js";
import { pairingPanel } from "./pairing.js";

export function render(main, { connection, store }) {
  const found = new Map(); // address → device_found data
  const duration = h("input", { id: "scan-duration", type: "number", min: 1, max: 300, value: 10, size: 4 });
  const nameFilter = h("input", { id: "scan-name", type: "text", autocomplete: "off" });
  const scanButton = h("button", { type: "submit" }, "Scan");
  const stopButton = h("button", { type: "button", class: "secondary", disabled: true }, "Stop scanning");
  const scanResult = h("span", { class: "outcome", role: "status" });
  const rows = h("tbody");
  const after = h("div", { "aria-live": "polite" });
  const empty = h("p", { class: "muted" }, "Nothing found yet. Wake the wearable up (most advertise only for a while after a button press) and scan.");

  const form = h("form", { class: "panel inline" },
    h("div", { class: "field" }, h("label", { for: "scan-duration" }, "Scan for (seconds)"), duration),
    h("div", { class: "field" }, h("label", { for: "scan-name" }, "Name starts with (optional)"), nameFilter),
    h("div", { class: "actions" }, scanButton, stopButton, scanResult));
  replace(main, h("h1", {}, "Add a wearable"), form, after,
    h("h2", {}, "Found"), empty,
    h("div", { class: "table-scroll" }, h("table", {}, h("caption", { class: "sr-only" }, "Wearables found by the scan"),
      h("thead", {}, h("tr", {}, ["Name", "Address", "Signal", "What it is", ""].map((t) => h("th", { scope: "col" }, t)))), rows)));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const payload = { duration_s: Number(duration.value) || 10 };
    if (nameFilter.value.trim()) payload.filter = { name: nameFilter.value.trim() };
    scanButton.disabled = true;
    stopButton.disabled = false;
    await outcome(scanResult, connection.request(["bridge", "request", "scan"], payload, (payload.duration_s + 30) * 1000),
      (data) => `Scan finished: ${data.devices?.length ?? 0} found.`);
    scanButton.disabled = false;
    stopButton.disabled = true;
  });
  stopButton.addEventListener("click", () => connection.request(["bridge", "request", "scan", "stop"], {}));

  const drawRows = () => {
    empty.hidden = found.size > 0;
    replace(rows, [...found.values()].sort((a, b) => (b.rssi ?? -200) - (a.rssi ?? -200)).map(row));
  };
  const row = (data) => {
    const driver = recognise(store.drivers(), data);
    const label = data.name || data.serial || data.address;
    const managed = store.devices().find((d) => d.address === data.address);
    const result = h("span", { class: "outcome", role: "status" });
    let action;
    if (managed) action = h("a", { href: `#/device/${encodeURIComponent(managed.id)}` }, `Open ${managed.name || managed.id}`);
    else {
      action = h("button", { type: "button", "aria-label": `Add ${label} (${data.address})` }, "Add");
      action.addEventListener("click", () => add(data, driver, action, result));
    }
    return h("tr", {}, h("td", {}, data.name || "(no name)"), h("td", {}, data.address),
      h("td", {}, data.rssi !== undefined ? `${data.rssi} dBm` : "—"),
      h("td", {}, driver ? `${driver.vendor}: ${driver.summary}` : "unknown"),
      h("td", {}, action, result));
  };

  const add = async (data, driver, button, result) => {
    button.disabled = true;
    const payload = data.serial && !data.address ? { serial: data.serial } : { address: data.address };
    if (data.driver) payload.driver = data.driver;
    const answer = await outcome(result, connection.request(["bridge", "request", "device", "add"], payload), (d) => `Added as ${d.id}.`);
    if (answer.status !== "ok") {
      button.disabled = false;
      return;
    }
    const id = answer.data.id;
    const pairing = driver?.pairing || "none";
    replace(after, h("section", { class: "panel" },
      h("h2", {}, `Added ${data.name || id}`),
      h("p", {}, "It is managed as ", h("a", { href: `#/device/${encodeURIComponent(id)}` }, id), ". ",
        pairing === "none" ? "It needs no pairing; it connects by itself." : "Pair it now:")),
      pairing === "none" ? null : pairingPanel(connection, id, pairing));
    // Focus leaves the table (its rows are redrawn) for what comes next.
    after.querySelector("button, a")?.focus();
  };

  const stopEvents = store.on(connection.topic("bridge", "event"), (message) => {
    const event = message.payload;
    if (event?.type !== "device_found" || !event.data) return;
    found.set(event.data.address || event.data.serial, event.data);
    redraw();
  });
  let pending = false;
  const redraw = () => {
    if (pending) return;
    pending = true;
    setTimeout(() => {
      pending = false;
      // A row being used keeps its button: redraw only when focus is not inside the table.
      if (!rows.contains(document.activeElement)) drawRows();
      else redraw();
    }, 300);
  };
  store.addEventListener("change", redraw);
  drawRows();
  return () => {
    stopEvents();
    store.removeEventListener("change", redraw);
  };
}
