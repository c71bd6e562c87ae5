// What the gateway has told this tab: the retained topics (bridge state, info, devices, drivers, health; each
// device's state and availability) and the last log lines. Pages read it and listen for changes; live
// streams (sensors, events) go straight to whoever registered a topic filter with on().

export function matches(filter, topic) {
  const f = filter.split("/");
  const t = topic.split("/");
  for (let i = 0; i < f.length; i++) {
    if (f[i] === "#") return true;
    if (i >= t.length || (f[i] !== "+" && f[i] !== t[i])) return false;
  }
  return f.length === t.length;
}

const bridgeKeys = ["state", "info", "devices", "drivers", "health"];

export class Store extends EventTarget {
  constructor(connection) {
    super();
    this.connection = connection;
    this.bridge = {};
    this.states = new Map();
    this.availability = new Map();
    this.logs = [];
    this.listeners = [];
    connection.addEventListener("messages", (event) => this.take(event.detail));
  }

  start() {
    const c = this.connection;
    c.subscribe([c.topic("bridge", "+"), c.topic("bridge", "response", "#"), c.topic("+", "response", "#"),
      c.topic("+"), c.topic("+", "availability")]);
  }

  devices() {
    return Array.isArray(this.bridge.devices) ? this.bridge.devices : [];
  }

  device(id) {
    return this.devices().find((d) => d.id === id);
  }

  drivers() {
    return Array.isArray(this.bridge.drivers) ? this.bridge.drivers : [];
  }

  // The description of a driver: the device's own definition first, else the drivers' list.
  definition(device) {
    return device?.definition || this.drivers().find((d) => d.driver === device?.driver) || null;
  }

  // Registers fn(message) for every message whose topic matches filter; returns the way to stop.
  on(filter, fn) {
    const entry = { filter, fn };
    this.listeners.push(entry);
    return () => (this.listeners = this.listeners.filter((e) => e !== entry));
  }

  take(messages) {
    const base = this.connection.baseTopic;
    let changed = false;
    for (const message of messages) {
      // The base may have several levels (lab/wear2mqtt): it counts as one here.
      if (!message.topic.startsWith(base + "/")) continue;
      const levels = [base, ...message.topic.slice(base.length + 1).split("/")];
      if (levels[1] === "bridge" && levels.length === 3) {
        if (bridgeKeys.includes(levels[2])) {
          this.bridge[levels[2]] = message.payload;
          changed = true;
        } else if (levels[2] === "logging" && message.payload) {
          this.logs.push(message.payload);
          if (this.logs.length > 1000) this.logs.splice(0, this.logs.length - 1000);
        }
      } else if (levels.length === 2 && levels[1] !== "bridge") {
        if (message.payload === null) this.states.delete(levels[1]);
        else this.states.set(levels[1], message.payload);
        changed = true;
      } else if (levels.length === 3 && levels[2] === "availability") {
        if (message.payload === null) this.availability.delete(levels[1]);
        else this.availability.set(levels[1], message.payload.state);
        changed = true;
      }
      for (const { filter, fn } of this.listeners) if (matches(filter, message.topic)) fn(message);
    }
    if (changed) this.dispatchEvent(new Event("change"));
  }
}
