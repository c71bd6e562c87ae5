"""wear2mqtt against a real Home Assistant core (issue 20, deliverable 8; first part).

Starts, each on a free loopback port and in its own temporary folder: mosquitto, a private dbus-daemon with
wear2mqtt-sim owning org.bluez (a heart-rate strap, Bose Frames), the wear2mqtt gateway, and Home Assistant core
from the venv `run` made. Onboards Home Assistant and creates its MQTT config entry through its own REST API, then
asserts through Home Assistant's REST and WebSocket APIs what a user would see. Every process is stopped by pid.

Usage: python check.py --bin <swift build --show-bin-path> --hass <venv>/bin/hass
"""

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import aiohttp

import templates

STRAP = "C0:FF:EE:00:00:01"
FRAMES = "4C:87:5D:00:00:05"
E4 = "A0:E4:00:00:00:06"
BAND = "C0:F1:70:00:00:07"
KEYS = "C0:FF:EE:00:00:08"
H10 = "C0:70:1A:00:00:09"
WATCH = "C7:1E:00:00:00:0A"
GATEWAY_ID = "hatest"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Processes:
    """Every child, stopped by pid in reverse order, also on failure."""

    def __init__(self, folder):
        self.folder = folder
        self.children = []

    def start(self, name, argv, env=None):
        out = open(os.path.join(self.folder, f"{name}.log"), "w")
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.children.append((name, child))
        return child

    def restart(self, name, argv):
        """Stops the child `name` gracefully and starts it again with `argv`, logging to the same file."""
        for index, (child_name, child) in enumerate(self.children):
            if child_name == name and child.poll() is None:
                child.send_signal(signal.SIGTERM)
                child.wait(timeout=60)
        out = open(os.path.join(self.folder, f"{name}.log"), "a")
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.children.append((name, child))
        return child

    def stop_all(self):
        for name, child in reversed(self.children):
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
                try:
                    child.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()

    def log(self, name):
        with open(os.path.join(self.folder, f"{name}.log")) as f:
            return f.read()


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception:  # noqa: BLE001 - the service is still starting
            pass
        time.sleep(0.25)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


async def async_wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            value = await predicate()
            if value:
                return value
            last = value
        except Exception as error:  # noqa: BLE001
            last = error
        await asyncio.sleep(0.5)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last})")


class HomeAssistant:
    """The REST and WebSocket APIs, onboarded as an owner."""

    def __init__(self, session, port):
        self.session = session
        self.base = f"http://127.0.0.1:{port}"
        self.token = None

    def headers(self):
        return {"Authorization": f"Bearer {self.token}"}

    async def onboard(self):
        client_id = self.base + "/"
        async with self.session.post(self.base + "/api/onboarding/users", json={
            "client_id": client_id, "name": "Test", "username": "test", "password": "test-password-1", "language": "en",
        }) as response:
            assert response.status == 200, await response.text()
            code = (await response.json())["auth_code"]
        async with self.session.post(self.base + "/auth/token", data={
            "grant_type": "authorization_code", "code": code, "client_id": client_id,
        }) as response:
            assert response.status == 200, await response.text()
            self.token = (await response.json())["access_token"]
        for step, body in [("core_config", {}), ("analytics", {})]:
            async with self.session.post(self.base + f"/api/onboarding/{step}", json=body, headers=self.headers()) as response:
                assert response.status in (200, 403), f"{step}: {response.status} {await response.text()}"

    async def add_mqtt(self, port):
        async with self.session.post(self.base + "/api/config/config_entries/flow", json={"handler": "mqtt"},
                                     headers=self.headers()) as response:
            flow = await response.json()
            assert response.status == 200, flow
        while flow.get("type") == "form":
            data = {"broker": "127.0.0.1", "port": port} if flow.get("step_id") == "broker" else {}
            async with self.session.post(self.base + f"/api/config/config_entries/flow/{flow['flow_id']}", json=data,
                                         headers=self.headers()) as response:
                flow = await response.json()
                assert response.status == 200, flow
        assert flow.get("type") == "create_entry", flow

    async def states(self):
        async with self.session.get(self.base + "/api/states", headers=self.headers()) as response:
            return await response.json()

    async def state(self, entity_id):
        async with self.session.get(self.base + f"/api/states/{entity_id}", headers=self.headers()) as response:
            return await response.json() if response.status == 200 else None

    async def call(self, domain, service, data):
        async with self.session.post(self.base + f"/api/services/{domain}/{service}", json=data,
                                     headers=self.headers()) as response:
            assert response.status == 200, await response.text()

    async def ws(self, message_type, **fields):
        async with self.session.ws_connect(self.base + "/api/websocket") as ws:
            assert (await ws.receive_json())["type"] == "auth_required"
            await ws.send_json({"type": "auth", "access_token": self.token})
            assert (await ws.receive_json())["type"] == "auth_ok"
            await ws.send_json({"id": 1, "type": message_type, **fields})
            answer = await ws.receive_json()
            assert answer.get("success"), answer
            return answer["result"]


def write(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text)
    return path


async def check(args, folder, processes, timings):
    started = time.monotonic()
    broker_port = free_port()
    broker_conf = write(folder, "mosquitto.conf", f"listener {broker_port} 127.0.0.1\nallow_anonymous true\n"
                        f"user {os.environ.get('USER', 'root')}\n")
    processes.start("mosquitto", ["/usr/sbin/mosquitto", "-c", broker_conf])
    wait_for(lambda: socket.create_connection(("127.0.0.1", broker_port), 0.5).close() or True, 10, "mosquitto")

    bus_path = os.path.join(folder, "bus")
    bus_conf = write(folder, "bus.conf", f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path={bus_path}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>""")
    processes.start("dbus", ["/usr/bin/dbus-daemon", f"--config-file={bus_conf}", "--nofork", "--nopidfile"])
    wait_for(lambda: os.path.exists(bus_path), 10, "dbus-daemon")
    bus = f"unix:path={bus_path}"
    scenario = write(folder, "scenario.yaml", f"""seed: 7
adapter:
  address: "00:1A:7D:DA:71:13"
devices:
  - kind: heart_rate_strap
    address: {STRAP}
    advertising_interval: 100ms
    options: {{ rate_hz: 2, battery: 84, manufacturer: Polar Electro Oy, model: H10 }}
  - kind: bose_frames
    address: {FRAMES}
    advertising_interval: 100ms
    options: {{ gestures: "double_tap@20,double_tap@40,double_tap@60,double_tap@80" }}
  - kind: empatica_e4
    address: {E4}
    advertising_interval: 100ms
  - kind: gofit_care_xc
    address: {BAND}
    advertising_interval: 100ms
    options: {{ history_days: 1 }}
  - kind: key_finder
    address: {KEYS}
    advertising_interval: 100ms
  - kind: polar_h10
    address: {H10}
    advertising_interval: 100ms
  - kind: pinetime_infinitime
    address: {WATCH}
    advertising_interval: 100ms
""")
    firmware = os.path.join(folder, "firmware")
    os.makedirs(firmware)
    subprocess.run([os.path.join(args.bin, "wear2mqtt-sim"), "firmware-package", "--output",
                    os.path.join(firmware, "carexc-2.2.0.zip"), "--size", "409600"], check=True, stdout=subprocess.DEVNULL)
    processes.start("simulator", [os.path.join(args.bin, "wear2mqtt-sim"), "run", "--bus", bus, "--scenario", scenario])
    config = write(folder, "gateway.yaml", f"""gateway:
  id: {GATEWAY_ID}
  state_dir: {os.path.join(folder, "state")}
mqtt:
  port: {broker_port}
  base_topic: w2m
bluez:
  bus: "{bus}"
homeassistant:
  state_interval_s: 2
dfu:
  dir: {firmware}
allow:
  dfu: true
devices:
  - address: "{STRAP}"
    name: strap
  - address: "{FRAMES}"
    name: frames
    configure:
      gestures: {{ double_tap: true }}
  - address: "{E4}"
    name: e4
  - address: "{BAND}"
    name: band
  - address: "{KEYS}"
    name: keys
  - address: "{H10}"
    name: h10
  - address: "{WATCH}"
    name: watch
""")
    processes.start("gateway", [os.path.join(args.bin, "wear2mqtt"), "run", "--config", config])

    ha_port = free_port()
    ha_config = os.path.join(folder, "homeassistant")
    os.makedirs(ha_config)
    write(ha_config, "configuration.yaml", f"""homeassistant:
  name: wear2mqtt test
  latitude: 0
  longitude: 0
  elevation: 0
  unit_system: metric
  time_zone: UTC
  country: DE
  currency: EUR
http:
  server_host: 127.0.0.1
  server_port: {ha_port}
api:
config:
websocket_api:
onboarding:
device_automation:
""")
    hass_argv = [args.hass, "-c", ha_config, "--skip-pip"]
    processes.start("homeassistant", hass_argv)
    timings["processes started"] = time.monotonic() - started

    async with aiohttp.ClientSession() as session:
        ha = HomeAssistant(session, ha_port)

        async def api_up():
            async with session.get(ha.base + "/api/onboarding") as response:
                return response.status == 200
        await async_wait_for(api_up, 240, "Home Assistant's HTTP API")
        timings["Home Assistant up"] = time.monotonic() - started
        await ha.onboard()
        await ha.add_mqtt(broker_port)
        timings["onboarded, MQTT added"] = time.monotonic() - started

        # The bridge and both wearables appear as devices, the wearables through the bridge.
        async def devices():
            registry = await ha.ws("config/device_registry/list")
            names = {d.get("name"): d for d in registry}
            if f"wear2mqtt {GATEWAY_ID}" in names and "strap" in names and "frames" in names:
                return names
        found = await async_wait_for(devices, 90, "the bridge, strap and frames devices")
        bridge, strap = found[f"wear2mqtt {GATEWAY_ID}"], found["strap"]
        assert strap["via_device_id"] == bridge["id"], (strap, bridge)
        assert ["bluetooth", STRAP] in [list(c) for c in strap["connections"]], strap["connections"]
        assert strap["manufacturer"] == "Polar Electro Oy" and strap["model"] == "H10", strap
        print("devices: bridge, strap (via the bridge, Bluetooth connection, Polar Electro Oy H10), frames")

        # Entities with their units and classes, and live values. Home Assistant registers discovered entities one
        # discovery message at a time, so a device can be in its registry before all of its entities are: the list
        # is read once every entity looked up below is in it.
        strap_prefix = f"wear2mqtt_{GATEWAY_ID}_{STRAP.replace(':', '').lower()}_"
        needed = [strap_prefix + "heart_rate", strap_prefix + "battery", strap_prefix + "refresh",
                  f"wear2mqtt_{GATEWAY_ID}_bridge_adapters", f"wear2mqtt_{GATEWAY_ID}_bridge_radio_problem"]

        async def registered():
            entities = await ha.ws("config/entity_registry/list")
            found = {e["unique_id"]: e for e in entities if e.get("platform") == "mqtt"}
            missing = [unique_id for unique_id in needed if unique_id not in found]
            if missing:
                raise LookupError(f"not yet registered: {missing}")
            return found
        ours = await async_wait_for(registered, 60, "the strap's and the bridge's entities in the registry")
        heart_rate = ours.get(strap_prefix + "heart_rate")
        battery = ours.get(strap_prefix + "battery")
        assert heart_rate and battery, sorted(ours)

        async def heart_rate_state():
            state = await ha.state(heart_rate["entity_id"])
            if state and state["state"] not in ("unknown", "unavailable"):
                return state
        hr = await async_wait_for(heart_rate_state, 60, "a heart rate in Home Assistant")
        assert hr["attributes"].get("unit_of_measurement") == "bpm", hr
        assert hr["attributes"].get("state_class") == "measurement", hr
        assert 30 <= float(hr["state"]) <= 220, hr

        async def battery_state():
            state = await ha.state(battery["entity_id"])
            if state and state["state"] not in ("unknown", "unavailable"):
                return state
        bat = await async_wait_for(battery_state, 30, "the strap's battery in Home Assistant")
        assert bat["state"] == "84" and bat["attributes"].get("device_class") == "battery", bat
        print(f"entities: {heart_rate['entity_id']} = {hr['state']} bpm, {battery['entity_id']} = {bat['state']} %")

        # The bridge's adapters: the simulator's one powered adapter, listed in the attributes.
        adapters = ours.get(f"wear2mqtt_{GATEWAY_ID}_bridge_adapters")
        assert adapters, sorted(ours)

        async def adapters_state():
            state = await ha.state(adapters["entity_id"])
            return state if state and state["state"] == "1" else None
        powered = await async_wait_for(adapters_state, 30, "one powered adapter on the bridge")
        assert powered["attributes"]["adapters"][0]["address"] == "00:1A:7D:DA:71:13", powered
        print(f"bridge: {adapters['entity_id']} = 1 powered adapter ({powered['attributes']['adapters'][0]['id']})")

        # The radio watchdog's problem sensor: Home Assistant renders its template over bridge/info to "off".
        problem = ours.get(f"wear2mqtt_{GATEWAY_ID}_bridge_radio_problem")
        assert problem, sorted(ours)

        async def problem_state():
            state = await ha.state(problem["entity_id"])
            return state if state and state["state"] in ("on", "off") else None
        radio = await async_wait_for(problem_state, 30, "the bridge's radio problem sensor")
        assert radio["state"] == "off" and radio["attributes"].get("device_class") == "problem", radio
        print(f"bridge: {problem['entity_id']} = {radio['state']}")

        # A button pressed in Home Assistant reaches the gateway: refresh answers on its response topic.
        refresh = ours.get(strap_prefix + "refresh")
        assert refresh, sorted(ours)
        subscriber = processes.start("responses", ["/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker_port),
                                                   "-t", "w2m/strap/response/refresh", "-C", "1", "-W", "30"])
        time.sleep(0.5)
        await ha.call("button", "press", {"entity_id": refresh["entity_id"]})
        subscriber.wait(timeout=35)
        answer = json.loads(processes.log("responses"))
        assert answer["status"] == "ok", answer
        print(f"button: {refresh['entity_id']} pressed in Home Assistant, the gateway answered ok")

        # Find, pressed in Home Assistant, rings the key finder: the simulator received a high Alert Level.
        keys_find = None

        async def find_button():
            entities = {e["unique_id"]: e for e in await ha.ws("config/entity_registry/list") if e.get("platform") == "mqtt"}
            return entities.get(f"wear2mqtt_{GATEWAY_ID}_{KEYS.replace(':', '').lower()}_find")
        keys_find = await async_wait_for(find_button, 60, "the key finder's find button")

        async def keys_online():
            state = await ha.state(keys_find["entity_id"])
            return state and state["state"] != "unavailable"
        await async_wait_for(keys_online, 60, "the key finder available")
        await ha.call("button", "press", {"entity_id": keys_find["entity_id"]})

        def received_alert():
            written = subprocess.run([os.path.join(args.bin, "wear2mqtt-sim"), "control", "--bus", bus, "received", KEYS, "2a06"],
                                     capture_output=True, text=True).stdout
            return "02" in written.split()  # one line of hex per write: 02 is Alert Level "high"
        wait_for(received_alert, 20, "the key finder to receive a high Alert Level")
        print(f"find: {keys_find['entity_id']} pressed in Home Assistant, the key finder rang (Alert Level high)")

        # Bose gestures: the event entity receives the scripted double taps.
        frames_prefix = f"wear2mqtt_{GATEWAY_ID}_{FRAMES.replace(':', '').lower()}_"

        async def gesture_entity():
            entities = {e["unique_id"]: e for e in await ha.ws("config/entity_registry/list") if e.get("platform") == "mqtt"}
            return entities.get(frames_prefix + "gesture")
        gesture = await async_wait_for(gesture_entity, 60, "the frames' gesture event entity")

        async def gesture_fired():
            state = await ha.state(gesture["entity_id"])
            if state and state["attributes"].get("event_type") == "double_tap":
                return state
        fired = await async_wait_for(gesture_fired, 90, "a double tap on the gesture event entity")
        assert "double_tap" in fired["attributes"].get("event_types", []), fired
        print(f"event: {gesture['entity_id']} fired double_tap")

        # A setting as a control: the frames' double-tap switch is on (the configuration file asked for it); turned
        # off in Home Assistant, the request reaches the device and the switch follows the device's state.
        switch = (await gesture_entity()) and {e["unique_id"]: e for e in await ha.ws("config/entity_registry/list")}.get(
            frames_prefix + "setting_gesture_double_tap")
        assert switch, "no double-tap switch"

        async def entity_known(entity):
            state = await ha.state(entity["entity_id"])
            return state if state and state["state"] not in ("unknown", "unavailable") else None

        async def entity_available(entity):
            state = await ha.state(entity["entity_id"])
            return state if state and state["state"] != "unavailable" else None

        async def entity_is(entity, value):
            state = await ha.state(entity["entity_id"])
            return state if state and state["state"] == value else None
        await async_wait_for(lambda: entity_is(switch, "on"), 30, "the double-tap switch on")
        await ha.call("switch", "turn_off", {"entity_id": switch["entity_id"]})
        await async_wait_for(lambda: entity_is(switch, "off"), 30, "the double-tap switch off after turning it off")
        print(f"setting: {switch['entity_id']} turned off in Home Assistant, the frames confirmed it")

        # The sensor period the frames' streams share, as a select of the periods every sensor offers, and a stream
        # switched on: the accelerometer starts at the chosen period.
        entities = {e["unique_id"]: e for e in await ha.ws("config/entity_registry/list")}
        period, accelerometer = entities.get(frames_prefix + "setting_sensor_period"), entities.get(frames_prefix + "setting_sensor_accelerometer")
        assert period and accelerometer, "no sensor period select or accelerometer switch"
        options = (await ha.state(period["entity_id"]))["attributes"]["options"]
        assert "80" in options, options
        await ha.call("select", "select_option", {"entity_id": period["entity_id"], "option": "80"})
        await async_wait_for(lambda: entity_is(period, "80"), 30, "the frames' sensor period 80 ms")
        await ha.call("switch", "turn_on", {"entity_id": accelerometer["entity_id"]})
        await async_wait_for(lambda: entity_is(accelerometer, "on"), 30, "the frames' accelerometer stream on")
        print(f"select: {period['entity_id']} set to 80 ms of {options}; {accelerometer['entity_id']} turned on, the frames stream")

        # The E4: skin temperature in °C and EDA in µS, calm; its tag button fires the event entity.
        e4_prefix = f"wear2mqtt_{GATEWAY_ID}_{E4.replace(':', '').lower()}_"

        async def e4_entities():
            entities = {e["unique_id"]: e for e in await ha.ws("config/entity_registry/list") if e.get("platform") == "mqtt"}
            wanted = [entities.get(e4_prefix + key) for key in ("skin_temperature", "eda", "event")]
            return wanted if all(wanted) else None
        skin, eda, tag = await async_wait_for(e4_entities, 90, "the E4's skin temperature, EDA and event entities")

        async def measured(entity, unit):
            state = await ha.state(entity["entity_id"])
            if state and state["state"] not in ("unknown", "unavailable"):
                assert state["attributes"].get("unit_of_measurement") == unit, state
                return state
        temperature = await async_wait_for(lambda: measured(skin, "°C"), 60, "the E4's skin temperature")
        assert 20 <= float(temperature["state"]) <= 40, temperature
        conductance = await async_wait_for(lambda: measured(eda, "µS"), 60, "the E4's EDA")
        subprocess.run([os.path.join(args.bin, "wear2mqtt-sim"), "control", "--bus", bus, "press-button", E4], check=True,
                       stdout=subprocess.DEVNULL)

        async def tagged():
            state = await ha.state(tag["entity_id"])
            return state if state and state["attributes"].get("event_type") == "tag" else None
        await async_wait_for(tagged, 30, "the E4's tag on its event entity")
        print(f"E4: {skin['entity_id']} = {temperature['state']} °C, {eda['entity_id']} = {conductance['state']} µS, "
              f"the tag button fired {tag['entity_id']}")

        # Heart-rate variability: the strap's RR intervals give HRV RMSSD in ms once its 60 s window holds 30 s of clean
        # beats; the E4's HRV entities exist from its connection (it always sends beats) and are unknown until then.
        async def hrv_entities():
            entities = {e["unique_id"]: e for e in await ha.ws("config/entity_registry/list") if e.get("platform") == "mqtt"}
            wanted = [entities.get(strap_prefix + "hrv_rmssd"), entities.get(e4_prefix + "hrv_rmssd")]
            return wanted if all(wanted) else None
        strap_rmssd, e4_rmssd = await async_wait_for(hrv_entities, 60, "the strap's and the E4's HRV RMSSD entities")
        rmssd = await async_wait_for(lambda: measured(strap_rmssd, "ms"), 90, "the strap's HRV RMSSD")
        assert rmssd["attributes"].get("device_class") == "duration" and 0 < float(rmssd["state"]) < 200, rmssd
        e4_state = await ha.state(e4_rmssd["entity_id"])
        assert e4_state and (e4_state["state"] in ("unknown", "unavailable") or float(e4_state["state"]) >= 0), e4_state
        print(f"HRV: {rmssd['entity_id']} = {rmssd['state']} ms; {e4_rmssd['entity_id']} is {e4_state['state']}")

        # Firmware: the band's update entity offers the package named for it; installed from Home Assistant, the
        # band is updated over Nordic DFU and the entity shows the new version, with progress on the way.
        band_prefix = f"wear2mqtt_{GATEWAY_ID}_{BAND.replace(':', '').lower()}_"

        async def update_entity():
            entities = {e["unique_id"]: e for e in await ha.ws("config/entity_registry/list") if e.get("platform") == "mqtt"}
            entity = entities.get(band_prefix + "firmware")
            if entity:
                state = await ha.state(entity["entity_id"])
                if state and state["attributes"].get("latest_version") == "2.2.0":
                    return entity, state
        update, offered = await async_wait_for(update_entity, 90, "the band's firmware update entity offering 2.2.0")
        assert offered["state"] == "on" and offered["attributes"].get("installed_version") == "2.1.0", offered
        await ha.call("update", "install", {"entity_id": update["entity_id"]})
        progress_seen = []
        observed = []

        async def installed():
            state = await ha.state(update["entity_id"])
            observed.append(state and (state["state"], state["attributes"].get("in_progress"), state["attributes"].get("update_percentage")))
            if state and state["attributes"].get("in_progress"):
                progress_seen.append(state["attributes"].get("update_percentage"))
            if state and state["attributes"].get("installed_version") == "2.2.0" and state["state"] == "off":
                return state
        await async_wait_for(installed, 120, "the band's firmware 2.2.0 in Home Assistant")
        # 400 KB (an nRF52 application's size) take seconds: Home Assistant saw the update in progress, with a percentage.
        percentages = [p for p in progress_seen if isinstance(p, (int, float))]
        assert percentages and all(0 <= p <= 100 for p in percentages), observed
        print(f"firmware: {update['entity_id']} offered 2.2.0 over 2.1.0; installed from Home Assistant "
              f"(in progress at {len(progress_seen)} polls: {percentages} %), the band runs 2.2.0")

        # A setting as a number: pair the band through MQTT with the code it shows, then set its step goal in Home
        # Assistant; the band takes it and the entity shows what the band reports.
        def sim(*words):
            return subprocess.run([os.path.join(args.bin, "wear2mqtt-sim"), "control", "--bus", bus, *words],
                                  capture_output=True, text=True, check=True).stdout

        def publish(topic, payload):
            subprocess.run(["/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker_port), "-t", topic, "-m", payload],
                           check=True)
        await asyncio.sleep(3)  # the band comes back from its update
        publish("w2m/bridge/request/device/pair", '{"id":"band"}')
        code = wait_for(lambda: dict(line.split("=", 1) for line in sim("inspect", BAND).split()).get("pairing_code"), 30,
                        "the band to show a pairing code")
        publish("w2m/bridge/request/device/pair/confirm", json.dumps({"id": "band", "code": code}))
        goal = None

        async def goal_entity():
            entities = {e["unique_id"]: e for e in await ha.ws("config/entity_registry/list") if e.get("platform") == "mqtt"}
            entity = entities.get(band_prefix + "setting_step_goal")
            if entity:
                state = await ha.state(entity["entity_id"])
                if state and state["state"] not in ("unknown", "unavailable"):
                    return entity
        goal = await async_wait_for(goal_entity, 60, "the band's step goal known in Home Assistant")
        await ha.call("number", "set_value", {"entity_id": goal["entity_id"], "value": 12345})

        async def goal_is_set():
            state = await ha.state(goal["entity_id"])
            return state if state and state["state"] in ("12345", "12345.0") else None
        await async_wait_for(goal_is_set, 30, "the band's step goal 12345 in Home Assistant")
        print(f"number: {goal['entity_id']} set to 12345 in Home Assistant; the paired band took it")

        # Fitness summaries: a sync's records make steps today, the newest sleep score and the time of the sync.
        publish("w2m/band/request/sync", "{}")

        async def summaries():
            entities = {e["unique_id"]: e for e in await ha.ws("config/entity_registry/list") if e.get("platform") == "mqtt"}
            states = {}
            for key in ("steps_today", "sleep_score", "last_sync"):
                entity = entities.get(band_prefix + key)
                state = entity and await ha.state(entity["entity_id"])
                if not state or state["state"] in ("unknown", "unavailable"):
                    return None
                states[key] = state
            return states
        synced = await async_wait_for(summaries, 60, "the band's steps today, sleep score and last sync after a sync")
        steps = synced["steps_today"]
        assert steps["attributes"].get("unit_of_measurement") == "steps" and steps["attributes"].get("state_class") == "total_increasing", steps
        assert float(steps["state"]) >= 0 and 0 <= float(synced["sleep_score"]["state"]) <= 100, synced
        assert synced["last_sync"]["attributes"].get("device_class") == "timestamp", synced
        print(f"fitness: {steps['entity_id']} = {steps['state']} steps, sleep score {synced['sleep_score']['state']}, "
              f"last sync {synced['last_sync']['state']}")

        # A Polar H10: its ECG stream's switch, turned on in Home Assistant, starts ECG at 130 Hz on the strap.
        h10_prefix = f"wear2mqtt_{GATEWAY_ID}_{H10.replace(':', '').lower()}_"

        async def ecg_switch():
            entities = {e["unique_id"]: e for e in await ha.ws("config/entity_registry/list") if e.get("platform") == "mqtt"}
            return entities.get(h10_prefix + "setting_sensor_ecg")
        ecg = await async_wait_for(ecg_switch, 90, "the H10's ECG stream switch")
        await async_wait_for(lambda: entity_is(ecg, "off"), 60, "the H10's ECG stream off at first")
        await ha.call("switch", "turn_on", {"entity_id": ecg["entity_id"]})
        await async_wait_for(lambda: entity_is(ecg, "on"), 30, "the H10's ECG stream on after turning it on")
        sample = subprocess.run(["/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker_port), "-t", "w2m/h10/sensor/ecg",
                                 "-C", "1", "-W", "20"], capture_output=True, text=True).stdout
        assert '"uv":' in sample, sample
        print(f"Polar: {ecg['entity_id']} turned on in Home Assistant, the H10 streams ECG ({sample.strip()[:60]}…)")

        # A PineTime: steps as a total_increasing sensor, the Find button vibrates the watch, and its music buttons
        # are device triggers.
        watch_prefix = f"wear2mqtt_{GATEWAY_ID}_{WATCH.replace(':', '').lower()}_"

        async def watch_entities():
            entities = {e["unique_id"]: e for e in await ha.ws("config/entity_registry/list") if e.get("platform") == "mqtt"}
            wanted = [entities.get(watch_prefix + key) for key in ("steps", "find")]
            return wanted if all(wanted) else None
        watch_steps, watch_find = await async_wait_for(watch_entities, 90, "the watch's steps and find entities")
        counted = await async_wait_for(lambda: entity_known(watch_steps), 60, "the watch's steps in Home Assistant")
        assert counted["attributes"].get("state_class") == "total_increasing", counted
        await async_wait_for(lambda: entity_available(watch_find), 60, "the watch's find button available")
        await ha.call("button", "press", {"entity_id": watch_find["entity_id"]})

        def watch_alerted():
            written = subprocess.run([os.path.join(args.bin, "wear2mqtt-sim"), "control", "--bus", bus, "received", WATCH, "2a06"],
                                     capture_output=True, text=True).stdout
            return bool(written.split())
        wait_for(watch_alerted, 20, "the watch to receive an Alert Level")
        watch_device = next(d for d in await ha.ws("config/device_registry/list") if d.get("name") == "watch")
        triggers = await ha.ws("device_automation/trigger/list", device_id=watch_device["id"])
        music = [t for t in triggers if t.get("domain") == "mqtt" and "music" in f"{t.get('type', '')} {t.get('subtype', '')}"]
        assert music, triggers
        print(f"PineTime: {watch_steps['entity_id']} = {counted['state']} steps; {watch_find['entity_id']} pressed, the watch "
              f"was alerted; {len(music)} music button triggers")

        # Home Assistant restarts: when it is back, nothing of ours is unknown (its birth message on
        # homeassistant/status makes the gateway publish discovery, states and entity values again).
        restart = processes.restart("homeassistant", hass_argv)
        await async_wait_for(api_up, 240, "Home Assistant's HTTP API after its restart")
        restarted = time.monotonic()
        for entity in (heart_rate, battery, skin):
            async def known(entity=entity):
                state = await ha.state(entity["entity_id"])
                return state if state and state["state"] not in ("unknown", "unavailable") else None
            await async_wait_for(known, 30, f"{entity['entity_id']} known after Home Assistant's restart")
        print(f"restart: Home Assistant restarted (pid {restart.pid}); heart rate, battery and skin temperature known "
              f"{time.monotonic() - restarted:.1f} s after its API was back")

        # The key finder walks away and comes back; then the gateway restarts (SIGTERM, as systemd stops it). Home
        # Assistant keeps what it knew of the away device across the restart (issue 38: the state is kept).
        registry = {e["unique_id"]: e for e in await ha.ws("config/entity_registry/list")}

        def connection(address):
            return registry[f"wear2mqtt_{GATEWAY_ID}_{address.replace(':', '').lower()}_connection"]
        sim("advertising", KEYS, "off")
        sim("drop-link", KEYS)
        await async_wait_for(lambda: entity_is(connection(KEYS), "off"), 60, "the keys away")
        sim("advertising", KEYS, "on")
        await async_wait_for(lambda: entity_is(connection(KEYS), "on"), 60, "the keys back")
        battery_before = (await ha.state(battery["entity_id"]))["state"]
        processes.restart("gateway", [os.path.join(args.bin, "wear2mqtt"), "run", "--config", config])
        await async_wait_for(lambda: entity_is(connection(STRAP), "on"), 60, "the strap back after the gateway's restart")
        battery_after = (await ha.state(battery["entity_id"]))["state"]
        assert battery_after == battery_before, f"battery {battery_before} before the gateway's restart, {battery_after} after"
        print(f"away and back, gateway restart: the keys left and came back, the strap's battery stayed {battery_after}")

        # device/remove removes the device from Home Assistant.
        subprocess.run(["/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker_port), "-t",
                        "w2m/bridge/request/device/remove", "-m", '{"id":"strap"}'], check=True)

        async def strap_gone():
            registry = await ha.ws("config/device_registry/list")
            return all(d.get("name") != "strap" for d in registry)
        await async_wait_for(strap_gone, 30, "the strap removed from Home Assistant")
        print("removal: device/remove deleted the strap from Home Assistant")

        # Home Assistant's own log, across the whole run (start, a device away and back, the gateway's restart, Home
        # Assistant's restart): no warning or error about the gateway's entities — a template that reads a key a
        # document lacks, an event type an entity does not list, a payload it cannot take.
        ours = ("w2m", "mqtt", "wear2mqtt", "template", "event_type", "event type")
        # One line is Home Assistant's own echo, not ours: removing a device (the empty discovery payload of
        # device/remove above) makes Home Assistant clear the retained topic itself, and its own empty message then
        # finds nothing left to clean up (homeassistant/components/mqtt/discovery.py, 2025.4).
        echo = f"No device components to cleanup for wear2mqtt_{GATEWAY_ID}_{STRAP.replace(':', '').lower()},"
        complaints = [line.rstrip() for line in processes.log("homeassistant").splitlines()
                      if (" WARNING " in line or " ERROR " in line) and any(word in line.lower() for word in ours)
                      and echo not in line]
        assert not complaints, "Home Assistant's log complains:\n" + "\n".join(complaints[:20])
        print("log: Home Assistant logged no warning or error about the gateway's entities")

        # Every template of every device's discovery, rendered by Home Assistant's engine against each kind of state
        # document the gateway publishes (connecting, connected, away, bootloader, updating).
        retained = subprocess.run(["/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker_port), "-t",
                                   "homeassistant/#", "-v", "-W", "2"], capture_output=True, text=True).stdout
        documents = {}
        for line in retained.splitlines():
            topic, _, payload = line.partition(" ")
            if payload.startswith("{"):
                documents[topic] = json.loads(payload)
        problems, rendered = await templates.render(documents, "w2m", os.path.join(folder, "templates"))
        assert not problems, "templates that fail on a kind of document:\n" + "\n".join(problems[:20])
        print(f"templates: {rendered} device-state templates render against {len(templates.DOCUMENTS)} kinds of document "
              "without a warning")
        timings["checks"] = time.monotonic() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--hass", required=True)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="wear2mqtt-ha-")
    processes = Processes(folder)
    timings = {}
    ok = False
    try:
        asyncio.run(check(args, folder, processes, timings))
        ok = True
    finally:
        processes.stop_all()
        for what, seconds in timings.items():
            print(f"  {what}: {seconds:.1f} s")
        if ok:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            print(f"logs kept in {folder}", file=sys.stderr)
            for name in ("gateway", "homeassistant"):
                path = os.path.join(folder, f"{name}.log")
                if os.path.exists(path):
                    print(f"--- last lines of {name}.log", file=sys.stderr)
                    with open(path) as f:
                        print("".join(f.readlines()[-30:]), file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
