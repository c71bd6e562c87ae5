// Forms built from a driver's description: a command's `arguments` (docs/mqtt-api.md "definition") and a
// family's `settings`. Every input has a label; a field's own problem (not a number, bad JSON) and the gateway's
// answer are shown next to what sent them.

import { h, outcome, words } from "./dom.js";

let uid = 0;
const nextId = (stem) => `${stem}-${++uid}`;

// One input for one argument; returns {element, read(), showError(text), name}.
function argumentField(argument, idStem) {
  const id = nextId(`${idStem}-${argument.name}`);
  const errorId = `${id}-error`;
  const error = h("span", { class: "field-error", id: errorId, role: "alert" });
  const hint = argument.summary ? h("span", { class: "hint", id: `${id}-hint` }, argument.summary) : null;
  const described = [hint && `${id}-hint`, errorId].filter(Boolean).join(" ");
  const common = { id, name: argument.name, required: argument.required, "aria-describedby": described };
  let input;
  switch (argument.type) {
    case "integer":
    case "number":
      input = h("input", { ...common, type: "number", inputmode: argument.type === "integer" ? "numeric" : "decimal",
        min: argument.min, max: argument.max, step: argument.type === "integer" ? 1 : "any" });
      break;
    case "choice":
    case "boolean": {
      const options = argument.type === "boolean" ? ["true", "false"] : argument.options || [];
      input = h("select", common,
        argument.required ? null : h("option", { value: "" }, "(not set)"),
        options.map((o) => h("option", { value: o }, argument.type === "boolean" ? (o === "true" ? "yes" : "no") : o)));
      break;
    }
    case "timestamp_ms":
      input = h("input", { ...common, type: "datetime-local", step: 1 });
      break;
    case "object":
    case "list":
      input = h("textarea", { ...common, rows: 3, spellcheck: "false",
        placeholder: argument.type === "object" ? '{"…": …}' : "[…]" });
      break;
    default:
      input = h("input", { ...common, type: "text", autocomplete: "off" });
  }
  const label = h("label", { for: id }, words(argument.name), argument.required ? "" : h("span", { class: "optional" }, " (optional)"));
  const element = h("div", { class: "field" }, label, input, hint, error);

  const showError = (text) => {
    error.textContent = text || "";
    input.setAttribute("aria-invalid", text ? "true" : "false");
  };
  // The value to send, undefined when left empty; throws a sentence when it cannot be read.
  const read = () => {
    const raw = input.value.trim();
    if (raw === "") return undefined;
    switch (argument.type) {
      case "integer":
      case "number": {
        const n = Number(raw);
        if (!Number.isFinite(n) || (argument.type === "integer" && !Number.isInteger(n))) {
          throw new Error(`${words(argument.name)} must be ${argument.type === "integer" ? "a whole number" : "a number"}.`);
        }
        if ((argument.min !== undefined && n < argument.min) || (argument.max !== undefined && n > argument.max)) {
          throw new Error(`${words(argument.name)} must be from ${argument.min} to ${argument.max}.`);
        }
        return n;
      }
      case "boolean":
        return raw === "true";
      case "timestamp_ms":
        return new Date(raw).getTime();
      case "object":
      case "list": {
        let parsed;
        try {
          parsed = JSON.parse(raw);
        } catch (e) {
          throw new Error(`${words(argument.name)} is not valid JSON: ${e.message}`);
        }
        const isList = Array.isArray(parsed);
        if ((argument.type === "list") !== isList || typeof parsed !== "object" || parsed === null) {
          throw new Error(`${words(argument.name)} must be a JSON ${argument.type === "list" ? "list […]" : "object {…}"}.`);
        }
        return parsed;
      }
      default:
        return raw;
    }
  };
  return { element, read, showError, name: argument.name };
}

// A whole form for one command. send(payload) returns the answer's promise. The submit button is named for the
// command (a screen reader hears "Find", "Time sync").
export function commandForm(command, send, { label, blocked } = {}) {
  const fields = command.arguments.map((a) => argumentField(a, command.name.replace(/\W/g, "-")));
  if (command.other_fields) {
    fields.push(argumentField({ name: command.arguments.length ? "other_fields" : "fields", type: "object",
      summary: "more fields as a JSON object, read by the driver" }, command.name.replace(/\W/g, "-")));
  }
  const result = h("span", { class: "outcome", role: "status" });
  const button = h("button", { type: "submit", disabled: Boolean(blocked) }, label || words(command.name));
  const notes = [command.summary, blocked].filter(Boolean).join(". ");
  const form = h("form", { class: "command", "data-command": command.name },
    h("p", { class: "summary" }, notes), fields.map((f) => f.element), h("div", { class: "actions" }, button, result));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const payload = {};
    let invalid = false;
    for (const field of fields) {
      field.showError("");
      try {
        const v = field.read();
        if (v === undefined) continue;
        if (field.name === "other_fields" || field.name === "fields") Object.assign(payload, v);
        else payload[field.name] = v;
      } catch (e) {
        field.showError(e.message);
        invalid = true;
      }
    }
    if (invalid) return;
    button.disabled = true;
    const answer = await outcome(result, send(payload), (data) => summarize(data));
    button.disabled = false;
    // The gateway's messages start with the field they are about: show it there too.
    const message = answer.error?.message || "";
    fields.find((f) => message.startsWith(f.name))?.showError(message);
  });
  return form;
}

function summarize(data) {
  if (!data || typeof data !== "object" || !Object.keys(data).length) return "Done.";
  const text = JSON.stringify(data);
  return `Done: ${text.length > 160 ? text.slice(0, 157) + "…" : text}`;
}

function at(object, path) {
  return path.reduce((o, key) => (o && typeof o === "object" ? o[key] : undefined), object);
}

// The family's settings as one form showing the values the device reports; only changed ones are sent.
export function settingsForm(settings, state, send) {
  const rows = settings.map((setting) => {
    const id = nextId(`setting-${setting.key}`);
    const current = at(state, setting.state_path);
    let input;
    if (setting.type === "boolean") {
      input = h("input", { id, type: "checkbox", checked: current === true });
    } else if (setting.type === "choice" || setting.type === "integer_choice") {
      input = h("select", { id }, current === undefined ? h("option", { value: "" }, "(unknown)") : null,
        (setting.options || []).map((o) => h("option", { value: String(o), selected: String(o) === String(current) }, String(o))));
    } else {
      input = h("input", { id, type: "number", min: setting.min, max: setting.max, step: setting.step || 1,
        value: current ?? "", "aria-describedby": `${id}-unit` });
    }
    const unit = setting.unit ? h("span", { class: "hint", id: `${id}-unit` }, setting.min !== undefined
      ? `${setting.unit}, ${setting.min}–${setting.max}` : setting.unit) : null;
    const read = () => {
      if (setting.type === "boolean") return input.checked;
      if (input.value === "") return undefined;
      return setting.type === "choice" ? input.value : Number(input.value);
    };
    const initial = read();
    return { setting, read, initial, element: h("div", { class: `field ${setting.type === "boolean" ? "check" : ""}` },
      h("label", { for: id }, setting.name || words(setting.key)), input, unit) };
  });
  const result = h("span", { class: "outcome", role: "status" });
  const button = h("button", { type: "submit" }, "Save settings");
  const form = h("form", { class: "command settings" }, rows.map((r) => r.element), h("div", { class: "actions" }, button, result));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const byCommand = new Map();
    for (const row of rows) {
      const v = row.read();
      if (v === undefined || v === row.initial) continue;
      const payload = byCommand.get(row.setting.command) || {};
      let node = payload;
      const path = row.setting.request_path || [row.setting.key];
      path.slice(0, -1).forEach((key) => (node = node[key] ??= {}));
      node[path[path.length - 1]] = v;
      byCommand.set(row.setting.command, payload);
    }
    if (!byCommand.size) {
      result.className = "outcome";
      result.textContent = "Nothing changed.";
      return;
    }
    button.disabled = true;
    for (const [command, payload] of byCommand) {
      const answer = await outcome(result, send(command, payload), "Saved; the device reports its settings below.");
      if (answer.status !== "ok") break;
      rows.forEach((r) => (r.initial = r.read()));
    }
    button.disabled = false;
  });
  return form;
}
