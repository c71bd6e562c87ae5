// A hand-written canvas plotter for live sensor streams. Samples go into ring buffers of typed arrays (no
// allocation per sample); a plot is drawn only on requestAnimationFrame and only when it has new data, so 130 Hz
// ECG plus 200 Hz accelerometer cost a few lines of canvas per frame. Each frame's script time is recorded
// with the Performance API ("wear2mqtt-frame" measures) so the browser test can report its p99.

import { h } from "./dom.js";

const maxWindowMs = 60000;
const dirty = new Set();
let frameRequested = false;
let scriptSinceFrame = 0;

// Time spent handling messages between two frames counts toward the next frame's script time.
export function countScript(ms) {
  scriptSinceFrame += ms;
}

function requestFrame() {
  if (frameRequested) return;
  frameRequested = true;
  requestAnimationFrame(drawDirty);
}

function drawDirty(frameStart) {
  frameRequested = false;
  const started = performance.now();
  for (const plot of dirty) plot.draw();
  dirty.clear();
  const script = scriptSinceFrame + performance.now() - started;
  scriptSinceFrame = 0;
  performance.measure("wear2mqtt-frame", { start: frameStart, duration: script });
  // Keep the timeline bounded: the test reads it every few seconds, a user never does.
  if (performance.getEntriesByName("wear2mqtt-frame").length > 4000) performance.clearMeasures("wear2mqtt-frame");
}

let palette = null;
function colors() {
  if (!palette) {
    const style = getComputedStyle(document.documentElement);
    const v = (name) => style.getPropertyValue(name).trim();
    palette = { lines: [v("--plot-1"), v("--plot-2"), v("--plot-3"), v("--plot-4")], grid: v("--plot-grid"), text: v("--muted") };
  }
  return palette;
}
matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
  palette = null;
});

export class Plot {
  // fields: the series' names; points: draw dots (beat intervals) instead of lines.
  // capacity: samples kept before the oldest is overwritten (default: 12 s at rateHz, growing to 60 s).
  constructor({ title, fields, unit = "", points = false, rateHz = 0, capacity = 0 }) {
    this.fields = fields;
    this.unit = unit;
    this.points = points;
    this.windowMs = 10000;
    this.paused = false;
    this.capacity = capacity || Math.max(256, 2 ** Math.ceil(Math.log2(Math.max(1, rateHz) * 12)));
    this.allocate(this.capacity);
    this.canvas = h("canvas", { role: "img", "aria-label": `${title}: live plot of ${fields.join(", ")}` });
    this.legend = h("p", { class: "legend" });
    this.element = h("figure", { class: "plot" }, h("figcaption", {}, title + (unit ? ` (${unit})` : "")), this.canvas, this.legend);
    this.samples = 0;
    this.resize = new ResizeObserver(() => this.fit());
    this.resize.observe(this.canvas);
  }

  allocate(capacity) {
    const times = new Float64Array(capacity);
    const values = this.fields.map(() => new Float32Array(capacity));
    // Copy what was kept, oldest first, when growing.
    for (let i = 0; i < (this.length || 0); i++) {
      const at = (this.start + i) % this.capacity;
      times[i] = this.times[at];
      values.forEach((column, f) => (column[i] = this.values[f][at]));
    }
    this.times = times;
    this.values = values;
    this.capacity = capacity;
    this.start = 0;
    this.length = this.length || 0;
  }

  // One sample: its time in ms and one number per field (NaN where absent).
  push(ts, numbers) {
    if (this.length === this.capacity) {
      // Full: grow while the buffer does not yet hold the longest window, else overwrite the oldest.
      const oldest = this.times[this.start];
      if (ts - oldest < maxWindowMs && this.capacity < 65536) this.allocate(this.capacity * 2);
      else {
        this.start = (this.start + 1) % this.capacity;
        this.length--;
      }
    }
    const at = (this.start + this.length) % this.capacity;
    this.times[at] = ts;
    for (let f = 0; f < this.fields.length; f++) this.values[f][at] = numbers[f];
    this.length++;
    this.samples++;
    if (!this.paused) {
      dirty.add(this);
      requestFrame();
    }
  }

  setWindow(seconds) {
    this.windowMs = seconds * 1000;
    this.invalidate();
  }

  setPaused(paused) {
    this.paused = paused;
    this.invalidate();
  }

  invalidate() {
    dirty.add(this);
    requestFrame();
  }

  fit() {
    const ratio = devicePixelRatio || 1;
    const width = Math.round(this.canvas.clientWidth * ratio);
    const height = Math.round(this.canvas.clientHeight * ratio);
    if (width && (this.canvas.width !== width || this.canvas.height !== height)) {
      this.canvas.width = width;
      this.canvas.height = height;
      this.invalidate();
    }
  }

  // The first logical index whose time is at or after t (binary search over the ring).
  firstAtOrAfter(t) {
    let low = 0;
    let high = this.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.times[(this.start + mid) % this.capacity] < t) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  draw() {
    const { canvas, times, capacity, start } = this;
    const context = canvas.getContext("2d");
    const width = canvas.width;
    const height = canvas.height;
    if (!width || !height) return;
    const ratio = devicePixelRatio || 1;
    const { lines, grid, text } = colors();
    context.clearRect(0, 0, width, height);
    if (!this.length) return;
    const right = times[(start + this.length - 1) % capacity];
    const left = right - this.windowMs;
    const first = this.firstAtOrAfter(left);

    // Scale to what is visible, with a margin so lines do not touch the edges.
    let min = Infinity;
    let max = -Infinity;
    for (let i = first; i < this.length; i++) {
      const at = (start + i) % capacity;
      for (const column of this.values) {
        const v = column[at];
        if (v < min) min = v;
        if (v > max) max = v;
      }
    }
    if (!Number.isFinite(min)) return;
    if (max - min < 1e-9) {
      min -= 1;
      max += 1;
    }
    const pad = (max - min) * 0.08;
    min -= pad;
    max += pad;
    const top = 4 * ratio;
    const plotHeight = height - 8 * ratio;
    const x = (t) => ((t - left) / this.windowMs) * width;
    const y = (v) => top + (1 - (v - min) / (max - min)) * plotHeight;

    context.lineWidth = 1;
    context.strokeStyle = grid;
    context.fillStyle = text;
    context.font = `${11 * ratio}px system-ui, sans-serif`;
    context.beginPath();
    for (let s = 1; s < this.windowMs / 1000; s++) {
      const gx = Math.round(x(right - s * 1000)) + 0.5;
      context.moveTo(gx, 0);
      context.lineTo(gx, height);
    }
    context.stroke();
    context.fillText(formatAxis(max - pad), 4 * ratio, 14 * ratio);
    context.fillText(formatAxis(min + pad), 4 * ratio, height - 6 * ratio);

    context.lineWidth = 1.5 * ratio;
    this.values.forEach((column, f) => {
      context.strokeStyle = lines[f % lines.length];
      context.fillStyle = lines[f % lines.length];
      if (this.points) this.drawPoints(context, column, first, x, y, ratio);
      else this.drawLine(context, column, first, x, y);
    });
    this.legend.textContent = this.fields
      .map((name, f) => `${name} ${formatAxis(this.values[f][(start + this.length - 1) % capacity])}`)
      .join(" · ") + (this.paused ? " — paused" : "");
    this.element.dataset.samples = this.samples; // how far the plot has moved, for the browser test
  }

  // Lines, decimated to one min/max pair per device pixel column when samples outnumber pixels.
  drawLine(context, column, first, x, y) {
    const { times, capacity, start } = this;
    context.beginPath();
    let lastColumn = -1;
    let low = 0;
    let high = 0;
    let started = false;
    for (let i = first; i < this.length; i++) {
      const at = (start + i) % capacity;
      const v = column[at];
      if (Number.isNaN(v)) continue;
      const px = Math.round(x(times[at]));
      if (px === lastColumn) {
        if (v < low) low = v;
        if (v > high) high = v;
        continue;
      }
      if (lastColumn >= 0 && high !== low) {
        context.lineTo(lastColumn, y(low));
        context.lineTo(lastColumn, y(high));
      }
      if (started) context.lineTo(px, y(v));
      else context.moveTo(px, y(v));
      started = true;
      lastColumn = px;
      low = high = v;
    }
    context.stroke();
  }

  drawPoints(context, column, first, x, y, ratio) {
    const { times, capacity, start } = this;
    const size = 3 * ratio;
    for (let i = first; i < this.length; i++) {
      const at = (start + i) % capacity;
      const v = column[at];
      if (!Number.isNaN(v)) context.fillRect(x(times[at]) - size / 2, y(v) - size / 2, size, size);
    }
  }

  destroy() {
    this.resize.disconnect();
    dirty.delete(this);
  }
}

function formatAxis(v) {
  if (!Number.isFinite(v)) return "—";
  const magnitude = Math.abs(v);
  return magnitude >= 100 ? v.toFixed(0) : magnitude >= 1 ? v.toFixed(1) : v.toFixed(3);
}
