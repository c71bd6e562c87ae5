// Synced records (<id>/fitness/<kind>): download them from the device (sync, with its progress), see them as a
// table and a chart, save them as CSV. Records arrive while this page is open; each has a stable id.

import { h, outcome, replace, words } from "../dom.js";
import { Plot } from "../plot.js";
import { syncWords } from "./overview.js";
import { throttle } from "./shared.js";

export function recordsPanel(connection, store, id, definition) {
  const kinds = definition?.record_kinds || [];
  if (!kinds.length) return null;
  const records = new Map(kinds.map((k) => [k, new Map()]));
  const sync = definition.commands.find((c) => c.name === "sync");
  const syncResult = h("span", { class: "outcome", role: "status" });
  const syncButton = h("button", { type: "button" }, "Download history from the device");
  const syncState = h("p", { class: "muted", role: "status" });
  const kindSelect = h("select", { id: `records-kind-${id}` }, kinds.map((k) => h("option", { value: k }, words(k))));
  const count = h("span", { class: "muted" });
  const csv = h("button", { type: "button", class: "secondary" }, "Download CSV");
  const chartSlot = h("div");
  const table = h("div", { class: "table-scroll" });

  syncButton.addEventListener("click", async () => {
    syncButton.disabled = true;
    await outcome(syncResult, connection.request([id, "request", "sync"], {}, 0),
      (d) => `Downloaded ${Object.entries(d.records || {}).map(([k, n]) => `${n} ${k.replace(/_/g, " ")}`).join(", ") || "no new records"}.`);
    syncButton.disabled = false;
  });

  const columns = (kind) => {
    const keys = new Set();
    for (const r of records.get(kind).values()) Object.keys(r).forEach((k) => keys.add(k));
    keys.delete("id");
    return [...keys];
  };
  const rows = (kind) => [...records.get(kind).values()].sort((a, b) => a.ts - b.ts);
  const cell = (v) => (v === undefined || v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v));

  const draw = throttle(() => {
    const kind = kindSelect.value;
    const list = rows(kind);
    const keys = columns(kind);
    count.textContent = `${list.length} record${list.length === 1 ? "" : "s"}`;
    csv.disabled = !list.length;
    replace(table, list.length ? h("table", {}, h("caption", { class: "sr-only" }, `${words(kind)} records`),
      h("thead", {}, h("tr", {}, keys.map((k) => h("th", { scope: "col" }, k === "ts" ? "time" : k)))),
      h("tbody", {}, list.slice(-500).reverse().map((r) => h("tr", {}, keys.map((k) =>
        h("td", {}, k === "ts" ? new Date(r.ts).toLocaleString() : cell(r[k]))))))) : h("p", { class: "muted" }, "No records received yet: download the history."));
    const numeric = keys.find((k) => k !== "ts" && list.some((r) => typeof r[k] === "number"));
    chartSlot.replaceChildren();
    if (numeric && list.length > 1) {
      const chart = new Plot({ title: `${words(kind)}: ${numeric.replace(/_/g, " ")}`, fields: [numeric], points: list.length < 400, capacity: list.length });
      chart.windowMs = Math.max(1000, list[list.length - 1].ts - list[0].ts);
      for (const r of list) chart.push(r.ts, [typeof r[numeric] === "number" ? r[numeric] : NaN]);
      chartSlot.append(chart.element);
    }
  }, 400);

  csv.addEventListener("click", () => {
    const kind = kindSelect.value;
    const keys = ["id", ...columns(kind)];
    const quote = (v) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
    const lines = [keys.join(","), ...rows(kind).map((r) => keys.map((k) => quote(k === "ts" ? new Date(r.ts).toISOString() : cell(r[k]))).join(","))];
    const link = h("a", { href: URL.createObjectURL(new Blob([lines.join("\n") + "\n"], { type: "text/csv" })),
      download: `${id}-${kind}.csv` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  });
  kindSelect.addEventListener("change", draw);

  const stop = store.on(connection.topic(id, "fitness", "+"), (message) => {
    const kind = message.topic.slice(message.topic.lastIndexOf("/") + 1);
    if (!message.payload) return;
    if (!records.has(kind)) {
      records.set(kind, new Map());
      kindSelect.append(h("option", { value: kind }, words(kind)));
    }
    records.get(kind).set(message.payload.id ?? `${message.payload.ts}`, message.payload);
    draw();
  });
  connection.subscribe([connection.topic(id, "fitness", "+")]);
  const drawSync = () => {
    const state = store.states.get(id)?.sync;
    syncState.textContent = state ? `Sync: ${syncWords(state)}` : "";
  };
  store.addEventListener("change", drawSync);
  drawSync();
  draw();

  const element = h("section", { class: "panel", "aria-labelledby": "records-title" },
    h("h2", { id: "records-title" }, "Records"),
    sync ? h("div", { class: "actions" }, syncButton, syncResult) : null, syncState,
    h("div", { class: "inline" }, h("div", { class: "field" }, h("label", { for: kindSelect.id }, "Kind"), kindSelect), count, csv),
    chartSlot, table);
  return { element, destroy: () => {
    stop();
    connection.unsubscribe([connection.topic(id, "fitness", "+")]);
    store.removeEventListener("change", drawSync);
  } };
}
