// Small pieces several pages use.

import { h } from "../dom.js";

// Runs fn at most once per interval, trailing (a burst of state changes gives one redraw).
export function throttle(fn, ms) {
  let timer = 0;
  let last = 0;
  return () => {
    if (timer) return;
    const wait = Math.max(0, last + ms - Date.now());
    timer = setTimeout(() => {
      timer = 0;
      last = Date.now();
      fn();
    }, wait);
  };
}

// The connection in a word, with a colour that is never the only cue.
export function connectionPill(state, availability) {
  // A link on demand let go after a visit is not a fault: the device is available until the next one.
  if (state.connection === "disconnected" && state.link?.state === "idle") {
    const next = state.link.next_visit_ts ? ` · next visit ${new Date(state.link.next_visit_ts).toLocaleTimeString()}` : "";
    return h("span", { class: "pill ok", title: "connected for each sync or command, then let go" }, `on demand${next}`);
  }
  const connection = state.connection || (availability === "online" ? "connected" : availability === "offline" ? "disconnected" : "unknown");
  const kind = connection === "connected" ? "ok" : connection === "disconnected" ? "bad" : "warn";
  return h("span", { class: `pill ${kind}` }, connection);
}

// Which driver a found device would get: the first description whose advertisement it matches.
export function recognise(drivers, found) {
  const uuids = (found.uuids || []).map((u) => u.toLowerCase());
  const name = found.name || "";
  if (found.driver) {
    const byName = drivers.find((d) => d.driver === found.driver);
    if (byName) return byName;
  }
  return drivers.find((d) => {
    const ad = d.advertisement || {};
    return (ad.service_uuids || []).some((u) => uuids.includes(u)) || (ad.name_prefixes || []).some((p) => name.startsWith(p));
  }) || drivers.find((d) => d.advertisement?.fallback) || null;
}
