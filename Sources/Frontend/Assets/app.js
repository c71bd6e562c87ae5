// The page's entry: one connection, one store, the banners that say what is wrong in words, the token form,
// and a hash router (#/device/strap) — hash links stay relative, so the page works under any base path.

import { Connection } from "./connection.js";
import { Store } from "./store.js";
import { h, replace } from "./dom.js";

const connection = new Connection();
const store = new Store(connection);
const main = document.getElementById("main");
const banners = document.getElementById("banners");
const context = { connection, store };
let leave = null;
let shownRoute = null; // the hash on screen; null: no page yet (connecting, signing in)
let lastError = "";

const routes = {
  "": () => import("./pages/overview.js"),
  add: () => import("./pages/add.js"),
  device: () => import("./pages/device.js"),
  logs: () => import("./pages/logs.js"),
  settings: () => import("./pages/settings.js"),
};

async function route() {
  if (connection.state !== "open") return;
  const [name, ...rest] = location.hash.replace(/^#\/?/, "").split("/");
  const key = location.hash;
  if (key === shownRoute) return;
  shownRoute = key;
  const load = routes[name] || routes[""];
  leave?.();
  leave = null;
  for (const link of document.querySelectorAll(".top nav a")) {
    const target = link.getAttribute("href").replace(/^#\/?/, "");
    if (target === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  const page = await load();
  if (shownRoute !== key) return;
  main.replaceChildren();
  leave = page.render(main, context, rest.map(decodeURIComponent)) || null;
  // After signing in, the form that had focus is gone: start keyboard users at the page's content.
  if (!main.contains(document.activeElement) && document.activeElement === document.body) main.focus();
  const heading = main.querySelector("h1");
  document.title = heading ? `${heading.textContent} · wear2mqtt` : "wear2mqtt";
}

function showBanners() {
  const lines = [];
  if (connection.state === "closed" || connection.state === "connecting") {
    if (shownRoute !== null) lines.push(["bad", "The gateway cannot be reached; reconnecting… What is shown may be out of date."]);
  } else if (connection.state === "open") {
    if (!connection.broker) {
      lines.push(["bad", "The gateway has lost its MQTT broker. This page keeps working; other MQTT clients and Home Assistant see nothing new until the broker is back."]);
    }
    if (store.bridge.state?.state === "offline") lines.push(["bad", "The gateway says it is offline."]);
    if (connection.dropped) {
      lines.push(["warn", `This page could not keep up and missed ${connection.dropped} message${connection.dropped === 1 ? "" : "s"}; plots may have gaps.`]);
    }
  }
  if (lastError) lines.push(["warn", `The gateway could not take a request from this page: ${lastError}`]);
  const text = lines.map(([, t]) => t).join("|");
  if (banners.dataset.text === text) return;
  banners.dataset.text = text;
  replace(banners, lines.map(([kind, t]) => h("p", { class: `banner ${kind}` }, t)));
}

function refusal() {
  const wait = connection.retryAfter;
  if (wait) return `Too many wrong tokens came from this address. Try again in ${wait} second${wait === 1 ? "" : "s"}.`;
  return "That token was refused. Check it and try again.";
}

function showLogin() {
  leave?.();
  leave = null;
  shownRoute = null;
  const refused = connection.state === "refused";
  const input = h("input", { id: "token", type: "password", autocomplete: "current-password", required: true,
    "aria-describedby": "token-problem" });
  const form = h("form", { class: "panel login" },
    h("h1", {}, "Sign in"),
    h("p", {}, "This gateway asks for its access token: the one in the file its frontend.auth_token_file names, or in WEAR2MQTT_FRONTEND_AUTH_TOKEN."),
    h("div", { class: "field" }, h("label", { for: "token" }, "Access token"), input),
    h("p", { id: "token-problem", class: "field-error", role: "alert" }, refused ? refusal() : ""),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Sign in")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    connection.login(input.value);
  });
  replace(main, form);
  input.focus();
}

connection.addEventListener("change", () => {
  if (connection.state === "auth" || connection.state === "refused") showLogin();
  else if (connection.state === "open") {
    store.start();
    route();
  }
  showBanners();
});
connection.addEventListener("gateway-error", (event) => {
  lastError = event.detail;
  showBanners();
  setTimeout(() => {
    lastError = "";
    showBanners();
  }, 15000);
});
store.addEventListener("change", showBanners);
addEventListener("hashchange", () => {
  route();
  main.focus({ preventScroll: false });
});
connection.open();
