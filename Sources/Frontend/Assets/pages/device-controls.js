// A device's commands (a button, or a form from `arguments`), its family's settings, and, for devices that list
// their streams in the state (`capabilities.sensors`: Polar, Bose), a sensor configuration form.

import { h, outcome, words, replace } from "../dom.js";
import { commandForm, settingsForm } from "../forms.js";

// Commands shown elsewhere on the page (pairing, firmware, records) or run by the bridge.
const elsewhere = new Set(["pair", "pair_confirm", "dfu", "dfu/cancel", "sync"]);

export function allowedNote(store, command) {
  if (!command.allow) return "";
  const allowed = store.bridge.info?.config?.[`allow.${command.allow}`];
  return allowed === false ? `Disabled: the gateway's config.yaml needs allow.${command.allow}: true` : "";
}

export function commandsPanel(connection, store, id, definition) {
  const send = (name) => (payload) => connection.request([id, "request", ...name.split("/")], payload, 0);
  const commands = (definition?.commands || []).filter((c) => !elsewhere.has(c.name)
    && !(c.name === "settings" && definition.settings?.length));
  const simple = commands.filter((c) => !c.arguments.length && !c.other_fields);
  const withForms = commands.filter((c) => c.arguments.length || c.other_fields);
  const buttons = simple.map((command) => {
    const result = h("span", { class: "outcome", role: "status" });
    const blocked = allowedNote(store, command);
    const button = h("button", { type: "button", class: "secondary", title: command.summary, disabled: Boolean(blocked),
      "aria-describedby": `cmd-${id}-${command.name}-result` }, words(command.name));
    result.id = `cmd-${id}-${command.name}-result`;
    if (blocked) result.textContent = blocked;
    button.addEventListener("click", async () => {
      if (command.name === "factory_reset" || command.name === "clear_data") {
        if (!confirm(`${command.summary}? This cannot be undone.`)) return;
      }
      button.disabled = true;
      await outcome(result, send(command.name)({}));
      button.disabled = false;
    });
    return h("div", { class: "actions" }, button, result);
  });
  const forms = withForms.map((command) => h("details", { open: command.name === "find" },
    h("summary", {}, words(command.name)),
    commandForm(command, send(command.name), { blocked: allowedNote(store, command) })));
  return h("section", { class: "panel", "aria-labelledby": "commands-title" },
    h("h2", { id: "commands-title" }, "Commands"), h("div", { class: "button-row" }, buttons), forms);
}

// Settings: the form (values from the state), and what the device reports, redrawn when it changes.
export function settingsPanel(connection, store, id, definition) {
  const settings = definition?.settings || [];
  if (!settings.length) return null;
  const formSlot = h("div");
  const reported = h("dl", { class: "facts", "aria-label": "Settings the device reports" });
  let shown = "";
  const draw = () => {
    const state = store.states.get(id) || {};
    const text = JSON.stringify(state.settings ?? null);
    if (text === shown) return;
    shown = text;
    replace(reported, Object.entries(state.settings || {}).map(([k, v]) => [h("dt", {}, words(k)),
      h("dd", { "data-setting": k }, typeof v === "object" ? JSON.stringify(v) : String(v))]));
    if (formSlot.contains(document.activeElement)) return; // never replace what is being edited
    replace(formSlot, settingsForm(settings, state, (command, payload) => connection.request([id, "request", command], payload)));
  };
  store.addEventListener("change", draw);
  draw();
  const element = h("section", { class: "panel", "aria-labelledby": "settings-title" },
    h("h2", { id: "settings-title" }, "Settings"), formSlot,
    h("h3", {}, "Reported by the device"), reported);
  return { element, destroy: () => store.removeEventListener("change", draw) };
}

// {"ecg":{"rate_hz":[130]},"accelerometer":{"rate_hz":[25,50],"range":[2,4]}} → a fieldset per stream.
export function sensorConfigurationPanel(connection, store, id) {
  const slot = h("div");
  const result = h("span", { class: "outcome", role: "status" });
  let shown = "";
  const draw = () => {
    const state = store.states.get(id) || {};
    const offered = state.capabilities?.sensors;
    if (slot.parentElement) slot.parentElement.hidden = !offered;
    const text = JSON.stringify([offered, state.sensors]);
    if (!offered || text === shown || slot.contains(document.activeElement)) return;
    shown = text;
    const rows = Object.entries(offered).map(([sensor, options]) => {
      const running = state.sensors?.[sensor] || {};
      const enabled = h("input", { type: "checkbox", id: `cfg-${id}-${sensor}`, checked: running.enabled === true });
      const selects = Object.entries(options || {}).filter(([, values]) => Array.isArray(values) && values.length).map(([list, values]) => {
        const key = list === "periods_ms" ? "period_ms" : list;
        const select = h("select", { id: `cfg-${id}-${sensor}-${key}` },
          values.map((v) => h("option", { value: v, selected: v === running[key] }, String(v))));
        return { key, select, element: h("div", { class: "field" }, h("label", { for: select.id }, `${words(sensor)} ${words(key).toLowerCase()}`), select) };
      });
      return { sensor, enabled, selects, initial: JSON.stringify(read(enabled, selects)),
        element: h("fieldset", { class: "inline" }, h("legend", {}, words(sensor)),
          h("div", { class: "field check" }, h("label", { for: enabled.id }, `Stream ${words(sensor).toLowerCase()}`), enabled),
          selects.map((s) => s.element)) };
    });
    const apply = h("button", { type: "submit" }, "Apply sensor configuration");
    const form = h("form", { class: "command" }, rows.map((r) => r.element), h("div", { class: "actions" }, apply, result));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const sensors = {};
      for (const row of rows) {
        const now = read(row.enabled, row.selects);
        if (JSON.stringify(now) !== row.initial) sensors[row.sensor] = now.enabled ? now : { enabled: false };
      }
      if (!Object.keys(sensors).length) {
        result.textContent = "Nothing changed.";
        return;
      }
      apply.disabled = true;
      await outcome(result, connection.request([id, "request", "configure"], { sensors }), "Applied.");
      apply.disabled = false;
    });
    replace(slot, form);
  };
  store.addEventListener("change", draw);
  draw();
  const element = h("section", { class: "panel", "aria-labelledby": "sensors-title" },
    h("h2", { id: "sensors-title" }, "Sensor configuration"),
    h("p", { class: "muted" }, "The streams this wearable offers, with the settings it lists for each."), slot);
  element.hidden = !store.states.get(id)?.capabilities?.sensors;
  return { element, destroy: () => store.removeEventListener("change", draw) };
}

function read(enabled, selects) {
  const value = { enabled: enabled.checked };
  for (const s of selects) value[s.key] = Number(s.select.value);
  return value;
}
