// Tiny DOM helpers: building elements without innerHTML (no markup injection from device names) and the
// words the pages show for times, sizes and values.

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (key === "class") element.className = value;
    else if (key in element && typeof value !== "string") element[key] = value;
    else element.setAttribute(key, value === true ? "" : value);
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
}

export function replace(element, ...children) {
  element.replaceChildren();
  append(element, children);
}

// Keeps keyboard focus where it was when a region is rebuilt (found again by its id).
export function keepingFocus(region, rebuild) {
  const focused = region.contains(document.activeElement) ? document.activeElement.id : "";
  rebuild();
  if (focused) document.getElementById(focused)?.focus();
}

export function ago(ts) {
  if (!ts) return "never";
  const seconds = Math.round((Date.now() - ts) / 1000);
  if (seconds < 5) return "just now";
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 129600) return `${Math.round(seconds / 3600)} h ago`;
  return new Date(ts).toLocaleString();
}

export function duration(seconds) {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172800) return `${(seconds / 3600).toFixed(1)} h`;
  return `${Math.round(seconds / 86400)} days`;
}

export function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1048576) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1048576).toFixed(1)} MB`;
}

// "heart_rate" → "Heart rate": keys become words.
export function words(key) {
  const text = String(key).replace(/[_/]/g, " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function value(v) {
  if (v === null || v === undefined) return "—";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toFixed(2).replace(/\.?0+$/, "");
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

// A status line beside the control that sent a request: "Working…", then ok or the gateway's message.
export function outcome(element, promise, success = "Done.") {
  element.className = "outcome busy";
  element.textContent = "Working…";
  return promise.then((answer) => {
    if (answer.status === "ok") {
      element.className = "outcome ok";
      element.textContent = typeof success === "function" ? success(answer.data) : success;
    } else {
      element.className = "outcome error";
      element.textContent = answer.error?.message || "The gateway refused the request.";
    }
    return answer;
  });
}
