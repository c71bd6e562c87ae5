// Live plots of a device's streams: one plot per sensor topic, a line per field, made when the first sample
// arrives (most streams run only once configured). Heart rate gets a second plot of its RR intervals.

import { h } from "../dom.js";
import { Plot } from "../plot.js";

const windows = [5, 10, 30, 60];

export function livePlots(connection, store, id, definition) {
  const sensors = new Map((definition?.sensors || []).map((s) => [s.key, s]));
  const plots = new Map(); // key → {plot, fields, rr?}
  const grid = h("div", { class: "plots" });
  const waiting = h("p", { class: "muted" },
    sensors.size ? `No samples yet. This wearable can stream ${[...sensors.keys()].join(", ").replace(/_/g, " ")}; streams marked "once configured" start from Sensor configuration or the configure command.` : "No samples yet.");
  let windowS = 10;
  let paused = false;

  const windowSelect = h("select", { id: `plot-window-${id}` }, windows.map((s) => h("option", { value: s, selected: s === windowS }, `${s} s`)));
  windowSelect.addEventListener("change", () => {
    windowS = Number(windowSelect.value);
    for (const p of allPlots()) p.setWindow(windowS);
  });
  const pause = h("button", { type: "button", class: "secondary", "aria-pressed": "false" }, "Pause");
  pause.addEventListener("click", () => {
    paused = !paused;
    pause.setAttribute("aria-pressed", String(paused));
    pause.textContent = paused ? "Resume" : "Pause";
    for (const p of allPlots()) p.setPaused(paused);
  });
  const allPlots = () => [...plots.values()].flatMap((e) => [e.plot, e.rr].filter(Boolean));

  const create = (key, sample) => {
    const description = sensors.get(key);
    let fields = description?.fields;
    if (!fields) fields = Object.keys(sample).filter((k) => k !== "ts" && typeof sample[k] === "number").slice(0, 4);
    // Vectors and waveforms share a scale: a line per field. A scalar's extra fields (pulse beside SpO2,
    // energy beside heart rate) are other quantities: plot the first, the legend would mislead otherwise.
    if (!description || description.shape === "scalar" || description.shape === "beat_intervals") fields = fields.slice(0, 1);
    const title = key.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
    const plot = new Plot({ title, fields, unit: description?.unit || "", points: description?.shape === "beat_intervals",
      rateHz: Math.max(0, ...(description?.rates_hz || [])) });
    plot.setWindow(windowS);
    plot.setPaused(paused);
    plot.element.dataset.sensor = key;
    grid.append(plot.element);
    waiting.hidden = true;
    const entry = { plot, fields };
    plots.set(key, entry);
    return entry;
  };

  const addRR = (entry) => {
    entry.rr = new Plot({ title: "RR intervals", fields: ["rr_ms"], unit: "ms", points: true });
    entry.rr.setWindow(windowS);
    entry.rr.setPaused(paused);
    entry.rr.element.dataset.sensor = "rr_intervals";
    entry.plot.element.after(entry.rr.element);
  };

  const take = (key, sample) => {
    if (typeof sample?.ts !== "number") return;
    const entry = plots.get(key) || create(key, sample);
    const numbers = entry.fields.map((f) => {
      const v = Array.isArray(sample[f]) ? sample[f][0] : sample[f];
      return typeof v === "number" ? v : typeof v === "boolean" ? Number(v) : NaN;
    });
    entry.plot.push(sample.ts, numbers);
    if (Array.isArray(sample.rr_ms) && sample.rr_ms.length) {
      if (!entry.rr) addRR(entry);
      // The intervals end at the sample: the last beat at ts, earlier ones before it.
      let t = sample.ts;
      const times = [];
      for (let i = sample.rr_ms.length - 1; i >= 0; i--) {
        times.unshift(t);
        t -= sample.rr_ms[i];
      }
      sample.rr_ms.forEach((rr, i) => entry.rr.push(times[i], [rr]));
    }
  };

  const stop = store.on(connection.topic(id, "sensor", "+"), (message) => {
    const key = message.topic.slice(message.topic.lastIndexOf("/") + 1);
    const payload = message.payload;
    if (Array.isArray(payload?.samples)) for (const s of payload.samples) take(key, s);
    else take(key, payload);
  });
  connection.subscribe([connection.topic(id, "sensor", "#")]);

  const element = h("section", { class: "panel", "aria-labelledby": "live-title" },
    h("h2", { id: "live-title" }, "Live data"),
    h("div", { class: "inline" }, h("div", { class: "field" }, h("label", { for: windowSelect.id }, "Window"), windowSelect), pause),
    waiting, grid);
  const destroy = () => {
    stop();
    connection.unsubscribe([connection.topic(id, "sensor", "#")]);
    for (const p of allPlots()) p.destroy();
  };
  return { element, destroy };
}
