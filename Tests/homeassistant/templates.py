"""Every template of the gateway's discovery, rendered by Home Assistant's own template engine against every kind of
state document the gateway publishes (issue 38): a key a document lacks must render as unknown, never as a warning
or an error in Home Assistant's log.

Used by check.py, in Home Assistant's venv: `render(documents_by_topic, config_dir)` takes the retained discovery
documents and answers the problems found, one line each.
"""
import json
import logging
import os

from homeassistant.core import HomeAssistant
from homeassistant.helpers.template import Template

# The kinds of `<base>/<id>` document: never reached, connected with all it reads, away after a restart (the kept
# state), in its bootloader (an update under way, the device itself silent), and updating.
DOCUMENTS = {
    "connecting": {"connection": "connecting"},
    "connected": {"connection": "connected", "battery": 84, "firmware": "2.1.0", "manufacturer": "GOLiFE",
                  "model": "Care-Xc", "last_seen": 1795820171324, "rssi": -61,
                  "settings": {"step_goal": 8000, "time_format": "24", "units": "metric", "light_up": True},
                  "sync": {"state": "idle", "progress": 100, "last_ts": 1795820000000},
                  "recording": {"active": False}, "pairing": "paired"},
    "away": {"connection": "disconnected", "battery": 84, "firmware": "2.1.0", "last_seen": 1795820171324,
             "sync": {"state": "interrupted", "progress": 40, "last_ts": 1795820000000}},
    "bootloader": {"connection": "disconnected", "update": {"state": "updating", "progress": 40, "remaining_s": 12}},
    "updating": {"connection": "connected", "firmware": "2.1.0",
                 "update": {"state": "updating", "progress": 70, "remaining_s": 5}},
}


class Complaints(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


async def _render(templates, config_dir):
    os.makedirs(config_dir, exist_ok=True)
    hass = HomeAssistant(config_dir)
    complaints = Complaints()
    logging.getLogger("homeassistant.helpers.template").addHandler(complaints)
    problems = []
    for where, text in templates:
        for kind, document in DOCUMENTS.items():
            before = len(complaints.lines)
            try:
                Template(text, hass).async_render_with_possible_json_value(json.dumps(document), None)
            except Exception as error:  # noqa: BLE001 - every failure is a finding
                problems.append(f"{where} on a {kind} document: {type(error).__name__}: {error}")
            for line in complaints.lines[before:]:
                problems.append(f"{where} on a {kind} document: {line}")
    await hass.async_stop(force=True)
    return problems


def state_templates(documents_by_topic, base):
    """(where, template) for every template of a component whose state topic is a device's `<base>/<id>`."""
    found = []
    for topic, document in sorted(documents_by_topic.items()):
        for key, component in sorted(document.get("cmps", {}).items()):
            state_topic = component.get("state_topic", "")
            if not state_topic.startswith(base + "/") or state_topic.count("/") != base.count("/") + 1:
                continue
            for field in ("value_template", "json_attributes_template"):
                if field in component:
                    found.append((f"{topic} {key}.{field}", component[field]))
    return found


async def render(documents_by_topic, base, config_dir):
    """The problems of every device-state template against every kind of document, and how many were rendered."""
    templates = state_templates(documents_by_topic, base)
    if not templates:
        return ["no device-state templates found"], 0
    return await _render(templates, config_dir), len(templates)
