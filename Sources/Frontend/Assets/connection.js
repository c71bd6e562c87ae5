// The one WebSocket to the gateway. It speaks the MQTT contract (topics + JSON payloads) in the frames of
// docs/frontend.md: auth, hello, subscribe, publish, messages, status, error. Reconnects by itself and
// subscribes again, so pages never care whether the socket was replaced.

import { countScript } from "./plot.js";

const tabId = Math.random().toString(36).slice(2, 8);
let counter = 0;

export class Connection extends EventTarget {
  constructor() {
    super();
    this.filters = new Set();
    this.pending = new Map(); // transaction → {resolve, timer}
    this.baseTopic = "wear2mqtt";
    this.state = "connecting"; // connecting | auth | open | closed | refused
    this.broker = true;
    this.dropped = 0;
    this.token = sessionStorage.getItem("wear2mqtt-token") || "";
    this.retryMs = 500;
  }

  open() {
    const url = new URL("./api/ws", location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    this.socket?.close();
    const socket = new WebSocket(url);
    this.socket = socket;
    this.setState("connecting");
    socket.onmessage = (event) => {
      const started = performance.now();
      this.receive(JSON.parse(event.data));
      countScript(performance.now() - started);
    };
    socket.onclose = (event) => {
      if (socket !== this.socket) return;
      if (event.code === 4401 || this.state === "refused") {
        this.setState("refused");
        return;
      }
      this.setState("closed");
      // Back off so a gateway restart is not hammered; a live one answers within a second.
      setTimeout(() => this.open(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 8000);
    };
  }

  login(token) {
    this.token = token;
    sessionStorage.setItem("wear2mqtt-token", token);
    // A socket still waiting for the token takes it; a refused one was closed by the gateway.
    if (this.state === "auth" && this.socket?.readyState === WebSocket.OPEN) this.send({ type: "auth", token });
    else this.open();
  }

  receive(frame) {
    switch (frame.type) {
      case "auth_required":
        if (this.token) this.send({ type: "auth", token: this.token });
        else this.setState("auth");
        break;
      case "auth_failed":
        // With retry_after_s the token was not looked at (too many wrong ones from this address): keep it.
        this.retryAfter = frame.retry_after_s || 0;
        if (!this.retryAfter) {
          sessionStorage.removeItem("wear2mqtt-token");
          this.token = "";
        }
        this.setState("refused");
        break;
      case "hello":
        this.baseTopic = frame.base_topic;
        this.gatewayId = frame.gateway_id;
        this.version = frame.version;
        this.retryMs = 500;
        this.dropped = 0;
        this.setBroker(frame.broker?.connected !== false);
        this.setState("open");
        if (this.filters.size) this.send({ type: "subscribe", topics: [...this.filters] });
        break;
      case "messages":
        this.dispatchEvent(new CustomEvent("messages", { detail: frame.messages }));
        for (const message of frame.messages) this.answer(message);
        break;
      case "status":
        this.setBroker(frame.broker?.connected !== false);
        if (typeof frame.dropped === "number" && frame.dropped !== this.dropped) {
          this.dropped = frame.dropped;
          this.dispatchEvent(new Event("change"));
        }
        break;
      case "error":
        this.dispatchEvent(new CustomEvent("gateway-error", { detail: frame.message }));
        break;
    }
  }

  setState(state) {
    this.state = state;
    this.dispatchEvent(new Event("change"));
  }

  setBroker(connected) {
    if (this.broker === connected) return;
    this.broker = connected;
    this.dispatchEvent(new Event("change"));
  }

  send(frame) {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  subscribe(topics) {
    const fresh = topics.filter((t) => !this.filters.has(t));
    fresh.forEach((t) => this.filters.add(t));
    if (fresh.length && this.state === "open") this.send({ type: "subscribe", topics: fresh });
  }

  unsubscribe(topics) {
    const gone = topics.filter((t) => this.filters.delete(t));
    if (gone.length && this.state === "open") this.send({ type: "unsubscribe", topics: gone });
  }

  topic(...levels) {
    return [this.baseTopic, ...levels].join("/");
  }

  // Publishes a request and resolves with its answer ({status, data} or {status:"error", error}), matched by a
  // transaction unique to this tab. Never rejects: a lost socket or no answer becomes an error in words.
  request(levels, payload = {}, timeoutMs = 35000) {
    const transaction = `web-${tabId}-${++counter}`;
    const requestTopic = this.topic(...levels);
    return new Promise((resolve) => {
      if (this.state !== "open") {
        resolve({ status: "error", error: { message: "Not connected to the gateway; try again in a moment." } });
        return;
      }
      const timer = timeoutMs
        ? setTimeout(() => {
            this.pending.delete(transaction);
            resolve({ status: "error", error: { message: `No answer from the gateway within ${timeoutMs / 1000} s.` } });
          }, timeoutMs)
        : 0;
      this.pending.set(transaction, { resolve, timer });
      this.send({ type: "publish", topic: requestTopic, payload: { ...payload, transaction } });
    });
  }

  answer(message) {
    const transaction = message.payload?.transaction;
    if (typeof transaction !== "string" || !message.topic.includes("/response/")) return;
    const waiting = this.pending.get(transaction);
    if (!waiting) return;
    this.pending.delete(transaction);
    clearTimeout(waiting.timer);
    waiting.resolve(message.payload);
  }
}
