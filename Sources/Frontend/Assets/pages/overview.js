// Overview: the bridge's health in words and a card per wearable, as a lab checks before a session.

import { h, replace, keepingFocus, ago, duration, words } from "../dom.js";
import { throttle, connectionPill } from "./shared.js";

export function render(main, { connection, store }) {
  const health = h("section", { class: "panel", "aria-labelledby": "health-title" });
  const cards = h("ul", { class: "cards", "aria-label": "Wearables" });
  replace(main, h("h1", {}, "Overview"), health, h("h2", { id: "wearables-title" }, "Wearables"), cards);
  let problems = null;

  const check = async () => {
    const answer = await connection.request(["bridge", "request", "health_check"], {});
    problems = answer.status === "ok" ? answer.data : { error: answer.error?.message };
    draw();
  };

  const draw = throttle(() => {
    keepingFocus(health, () => replace(health, healthView(connection, store, problems)));
    keepingFocus(cards, () => replace(cards, cardsView(store)));
  }, 500);

  store.addEventListener("change", draw);
  connection.addEventListener("change", draw);
  const every = setInterval(check, 30000);
  const clock = setInterval(draw, 10000); // "last seen 5 s ago" ages
  check();
  draw();
  return () => {
    store.removeEventListener("change", draw);
    connection.removeEventListener("change", draw);
    clearInterval(every);
    clearInterval(clock);
  };
}

function healthView(connection, store, checked) {
  const info = store.bridge.info || {};
  const health = store.bridge.health || {};
  const mqtt = health.mqtt || {};
  const items = [];
  const item = (kind, text) => items.push(h("li", { class: kind }, text));
  item(connection.broker ? "ok" : "bad", connection.broker ? "The MQTT broker is connected." : "The MQTT broker is not connected.");
  if (info.bluez_available === false) item("bad", "BlueZ (the Bluetooth service) is not running.");
  else if (info.bluez_available) item("ok", "BlueZ is running.");
  const adapters = info.adapters || [];
  if (info.bluez_available && !adapters.length) item("bad", "No Bluetooth adapter was found.");
  for (const a of adapters) {
    item(a.powered ? "ok" : "bad", `Adapter ${a.id} (${a.address}) is ${a.powered ? "powered" : "powered off"}${a.discovering ? ", scanning" : ""}.`);
  }
  if (mqtt.spool_pending) item("warn", `${mqtt.spool_pending} records wait in the spool for the broker.`);
  if (mqtt.spool_failures) item("bad", `${mqtt.spool_failures} records could not be written to the spool (disk full?).`);
  if (mqtt.dropped) item("warn", `${mqtt.dropped} messages were dropped while the broker was away.`);
  if (checked?.error) item("warn", `The health check did not answer: ${checked.error}`);
  for (const problem of checked?.problems || []) item("bad", problem);
  if (checked?.healthy) item("ok", "The health check finds nothing wrong.");
  const facts = [];
  if (info.gateway_id) facts.push(`Gateway ${info.gateway_id}`);
  if (info.version) facts.push(`version ${info.version}`);
  if (health.uptime_s !== undefined) facts.push(`up ${duration(health.uptime_s)}`);
  return [h("h2", { id: "health-title" }, "Gateway health"), h("ul", { class: "health" }, items), h("p", { class: "muted" }, facts.join(", "))];
}

function cardsView(store) {
  const devices = store.devices();
  if (!devices.length) {
    return h("li", { class: "card" }, "No wearables yet. ", h("a", { href: "#/add" }, "Add a wearable"), " to start.");
  }
  return devices.map((device) => {
    const state = store.states.get(device.id) || {};
    const facts = [
      ["Connection", connectionPill(state, store.availability.get(device.id))],
      ["Battery", state.battery !== undefined ? `${state.battery} %` : "—"],
      ["Signal", state.rssi !== undefined ? `${state.rssi} dBm` : "—"],
      ["Last seen", ago(state.last_seen)],
      ["Firmware", state.firmware || "—"],
    ];
    if (state.sync) facts.push(["Sync", syncWords(state.sync)]);
    if (state.update && state.update.state !== "idle") facts.push(["Update", `${words(state.update.state)} ${state.update.progress ?? ""}`]);
    const model = [device.vendor, device.model].filter(Boolean).join(" ") || store.definition(device)?.vendor || device.driver;
    return h("li", { class: "card", "data-testid": `card-${device.id}` },
      h("h3", {}, h("a", { href: `#/device/${encodeURIComponent(device.id)}` }, device.name || device.id)),
      h("p", { class: "muted" }, model),
      h("dl", {}, facts.map(([term, detail]) => [h("dt", {}, term), h("dd", {}, detail)])));
  });
}

export function syncWords(sync) {
  const last = sync.last_ts ? `, last ${ago(sync.last_ts)}` : "";
  if (sync.state === "idle" || sync.state === "completed") return `idle${last}`;
  return `${words(sync.state)}${sync.progress !== undefined ? ` ${Math.round(sync.progress)} %` : ""}${last}`;
}
