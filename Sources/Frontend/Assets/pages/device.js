// A device page, built from the device's description (its `definition` in bridge/devices): status, live plots,
// events, commands, settings, sensor configuration, firmware, records, manage.

import { h, replace, keepingFocus, ago, value, words } from "../dom.js";
import { connectionPill, throttle } from "./shared.js";
import { livePlots } from "./device-plots.js";
import { commandsPanel, settingsPanel, sensorConfigurationPanel } from "./device-controls.js";
import { firmwarePanel } from "./device-firmware.js";
import { recordsPanel } from "./device-records.js";
import { managePanel } from "./device-manage.js";
import { pairingPanel } from "./pairing.js";

export function render(main, { connection, store }, [id]) {
  const device = store.device(id);
  if (!device) {
    replace(main, h("h1", {}, id), h("p", {}, "The gateway manages no wearable with this id. ", h("a", { href: "#/" }, "Back to the overview")));
    // It may just not have arrived yet (a fresh tab): try again when the list comes.
    const retry = () => store.device(id) && render(main, { connection, store }, [id]);
    const again = () => {
      if (store.device(id)) {
        store.removeEventListener("change", again);
        cleanup = retry() || null;
      }
    };
    let cleanup = null;
    store.addEventListener("change", again);
    return () => (store.removeEventListener("change", again), cleanup?.());
  }
  const definition = store.definition(device);
  const status = h("section", { class: "panel", "aria-labelledby": "status-title" });
  const pairingSlot = h("div");
  const timeline = h("ol", { class: "timeline", "aria-label": "Events and gestures, newest first" });
  const parts = [
    livePlots(connection, store, id, definition),
    settingsPanel(connection, store, id, definition),
    sensorConfigurationPanel(connection, store, id),
    firmwarePanel(connection, store, id, definition),
    recordsPanel(connection, store, id, definition),
  ].filter(Boolean);
  replace(main,
    h("p", {}, h("a", { href: "#/" }, "← Overview")),
    h("h1", {}, device.name || id),
    status, pairingSlot,
    parts[0].element,
    h("section", { class: "panel", "aria-labelledby": "events-title" }, h("h2", { id: "events-title" }, "Events and gestures"),
      h("p", { class: "muted", id: "events-empty" }, "None since this page opened."), timeline),
    commandsPanel(connection, store, id, definition),
    parts.slice(1).map((p) => p.element),
    managePanel(connection, store, id, device));

  const drawStatus = throttle(() => {
    const state = store.states.get(id) || {};
    const current = store.device(id) || device;
    const facts = [
      ["Connection", connectionPill(state, store.availability.get(id))],
      ["Model", [current.vendor, current.model].filter(Boolean).join(" ") || definition?.vendor || "—"],
      ["Address", current.address || "—"],
      ["Driver", definition ? `${definition.vendor} (${current.driver})` : current.driver],
      ["Battery", state.battery !== undefined ? `${state.battery} %` : "—"],
      ["Signal", state.rssi !== undefined ? `${state.rssi} dBm` : "—"],
      ["Last seen", ago(state.last_seen)],
      ["Firmware", state.firmware || "—"],
    ];
    if (state.pairing) facts.push(["Pairing", state.pairing]);
    for (const flag of definition?.status_flags || []) {
      if (at(state, flag.capability_path) === true) facts.push([flag.name, at(state, flag.state_path) ? "yes" : "no"]);
    }
    keepingFocus(status, () => replace(status, h("h2", { id: "status-title" }, "Status"),
      h("dl", { class: "facts" }, facts.map(([t, d]) => [h("dt", {}, t), h("dd", {}, d)])),
      h("details", {}, h("summary", {}, "Whole state document"), h("pre", { class: "log" }, JSON.stringify(state, null, 2)))));
    const needsPairing = definition?.pairing && definition.pairing !== "none" && (state.pairing === "required" || current.paired === false && state.pairing !== "paired");
    if (needsPairing && !pairingSlot.firstChild) replace(pairingSlot, pairingPanel(connection, id, definition.pairing));
    if (!needsPairing && pairingSlot.firstChild && !pairingSlot.contains(document.activeElement)) pairingSlot.replaceChildren();
  }, 500);

  const addEvent = (kind) => (message) => {
    const p = message.payload || {};
    const name = p.gesture || p.event || kind;
    const details = Object.entries(p).filter(([k]) => !["ts", "event", "gesture"].includes(k)).map(([k, v]) => `${words(k).toLowerCase()} ${value(v)}`);
    timeline.prepend(h("li", {}, h("time", { datetime: new Date(p.ts || Date.now()).toISOString() }, new Date(p.ts || Date.now()).toLocaleTimeString()),
      ` ${kind === "gesture" ? "Gesture" : "Event"}: ${words(name)}${details.length ? ` (${details.join(", ")})` : ""}`));
    while (timeline.children.length > 200) timeline.lastChild.remove();
    document.getElementById("events-empty")?.remove();
  };
  const stops = [store.on(connection.topic(id, "event"), addEvent("event")), store.on(connection.topic(id, "gesture"), addEvent("gesture"))];
  connection.subscribe([connection.topic(id, "event"), connection.topic(id, "gesture")]);
  store.addEventListener("change", drawStatus);
  drawStatus();
  return () => {
    stops.forEach((s) => s());
    connection.unsubscribe([connection.topic(id, "event"), connection.topic(id, "gesture")]);
    store.removeEventListener("change", drawStatus);
    parts.forEach((p) => p.destroy?.());
  };
}

function at(object, path) {
  return (path || []).reduce((o, k) => (o && typeof o === "object" ? o[k] : undefined), object);
}
