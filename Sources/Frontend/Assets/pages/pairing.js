// The pairing flow a description's `pairing` names: ask the device to show a code (device/pair), then send
// what the wearer reads on it (device/pair/confirm). Used after Add and on a device page while unpaired.

import { h, outcome } from "../dom.js";

const wording = {
  code_shown_on_device: ["Show a pairing code on the device", "Code shown on the device"],
  passkey: ["Start pairing", "Passkey shown on the device"],
  key_entered_by_user: ["Start pairing", "Key to enter"],
};

export function pairingPanel(connection, id, pairing) {
  const [startLabel, codeLabel] = wording[pairing] || ["Pair", "Code"];
  const result = h("span", { class: "outcome", role: "status" });
  const start = h("button", { type: "button" }, startLabel);
  const codeId = `pair-code-${id}`;
  const code = h("input", { id: codeId, inputmode: "numeric", autocomplete: "one-time-code", pattern: "[0-9]{1,16}", size: 8,
    "aria-describedby": `${codeId}-error` });
  const codeError = h("span", { class: "field-error", id: `${codeId}-error`, role: "alert" });
  const confirm = h("form", { class: "inline", hidden: true },
    h("div", { class: "field" }, h("label", { for: codeId }, codeLabel), code, codeError),
    h("button", { type: "submit" }, "Pair"));
  start.addEventListener("click", async () => {
    start.disabled = true;
    const answer = await outcome(result, connection.request(["bridge", "request", "device", "pair"], { id }),
      (data) => (data.state === "paired" ? "Paired." : "Read the code on the device and type it below."));
    start.disabled = false;
    if (answer.status === "ok" && answer.data?.state === "code_required") {
      confirm.hidden = false;
      code.focus();
    }
  });
  confirm.addEventListener("submit", async (event) => {
    event.preventDefault();
    codeError.textContent = "";
    if (!/^[0-9]{1,16}$/.test(code.value.trim())) {
      codeError.textContent = "The code is 1 to 16 digits.";
      return;
    }
    const answer = await outcome(result, connection.request(["bridge", "request", "device", "pair", "confirm"], { id, code: code.value.trim() }), "Paired.");
    if (answer.status === "ok") confirm.hidden = true;
    else codeError.textContent = answer.error?.message || "";
  });
  return h("section", { class: "panel pairing", "aria-label": "Pairing" },
    h("h2", {}, "Pairing"),
    h("p", {}, "This wearable must be paired with the gateway before it answers commands."),
    h("div", { class: "actions" }, start, result), confirm);
}
