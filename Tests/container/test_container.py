"""The container image and the Home Assistant add-on under a real container runtime (issue 41).

On the host: a mosquitto on a free loopback port, a private dbus-daemon whose policy lets only the `bluetooth`
group (and root) talk to org.bluez — as Debian's BlueZ policy does — and wear2mqtt-sim owning org.bluez on it with
deploy/demo-scenario.yaml. In podman: the gateway's image with that bus socket mounted where the system bus lives,
no capabilities, a read-only root, as its own user plus the host's bluetooth group by GID, state on a named volume.
Host networking only so the container reaches the loopback broker; Bluetooth needs none.

Then the add-on's image (FROM the gateway's) runs its entrypoint against a fake Supervisor (an HTTP server answering
/services/mqtt with credentials for a second mosquitto that requires them) and is opened in chromium through a
reverse proxy that does what Home Assistant's ingress does. Every process and container is removed by pid or name.
"""

import argparse
import grp
import http.server
import json
import pwd
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "browser"))
import ingress  # noqa: E402
import stack  # noqa: E402

STRAP = stack.STRAP
THERMOMETER = "C0:FF:EE:00:00:02"
SUPERVISOR_TOKEN = "fake-supervisor-token"


def step(text):
    print(f"-- {text}", flush=True)


def podman(*arguments, check=True, timeout=120):
    result = subprocess.run(["podman", *arguments], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"podman {' '.join(arguments)} failed ({result.returncode}): {result.stderr.strip()}")
    return result


class Subscription:
    """mosquitto_sub on a topic filter, its lines collected by a thread; stopped by pid."""

    def __init__(self, port, topic, user=None, password=None):
        argv = ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-t", topic, "-v"]
        if user:
            argv += ["-u", user, "-P", password]
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.lines = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, prefix, timeout, what):
        stack.wait_for(lambda: any(line.startswith(prefix) for line in self.lines), timeout, what)

    def close(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


class FakeSupervisor:
    """GET /services/mqtt as the Supervisor answers an add-on with `services: mqtt:need`, behind its bearer token."""

    def __init__(self, broker):
        answer = json.dumps({"result": "ok", "data": broker}).encode()
        self.requests = []
        requests = self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                requests.append((self.path, self.headers.get("Authorization")))
                if self.headers.get("Authorization") != f"Bearer {SUPERVISOR_TOKEN}":
                    self.send_response(401)
                    self.end_headers()
                    return
                if self.path != "/services/mqtt":
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Host:
    """The host side: brokers, the bus with BlueZ's group policy, the simulator."""

    def __init__(self, bin_dir, folder):
        self.s = stack.Stack(bin_dir, folder)
        self.folder = folder

    def start(self):
        s = self.s
        # dbus-daemon admits only users it can look up (NSS, on the host): the image's user 10001 needs an entry
        # here, as docs/deploy.md tells users to make. Made for this run if missing, and removed again.
        self.made_user = False
        try:
            pwd.getpwuid(10001)
        except KeyError:
            subprocess.run(["useradd", "--system", "--uid", "10001", "--user-group", "--no-create-home",
                            "--shell", "/usr/sbin/nologin", "wear2mqtt-ctr"], check=True, capture_output=True)
            self.made_user = True
        s.broker_port = stack.free_port()
        s.broker_conf = s.write("mosquitto.conf", f"listener {s.broker_port} 127.0.0.1\nallow_anonymous true\n"
                                                  f"user {os.environ.get('USER', 'root')}\n")
        s.start_broker()
        # The add-on's broker wants the credentials the Supervisor hands out.
        self.secure_port = stack.free_port()
        passwords = s.write("passwords", "")
        subprocess.run(["mosquitto_passwd", "-b", passwords, "addons", "s3cret-from-supervisor"], check=True)
        os.chmod(passwords, 0o600)
        conf = s.write("mosquitto-secure.conf", f"listener {self.secure_port} 127.0.0.1\nallow_anonymous false\n"
                                                f"password_file {passwords}\nuser {os.environ.get('USER', 'root')}\n")
        s.start_process("mosquitto-secure", ["mosquitto", "-c", conf])
        stack.wait_for(lambda: stack.socket.create_connection(("127.0.0.1", self.secure_port), 0.5).close() or True,
                       10, "the second mosquitto")

        # Debian's BlueZ policy (/usr/share/dbus-1/system.d/bluetooth.conf) in small: org.bluez is reached by root
        # and the bluetooth group, nobody else.
        self.bus_path = os.path.join(self.folder, "bus")
        bus_conf = s.write("bus.conf", f"""<busconfig><type>session</type><listen>unix:path={self.bus_path}</listen>
<auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/>
<deny send_destination="org.bluez"/></policy>
<policy user="root"><allow send_destination="org.bluez"/></policy>
<policy group="bluetooth"><allow send_destination="org.bluez"/></policy></busconfig>""")
        s.start_process("dbus", ["dbus-daemon", f"--config-file={bus_conf}", "--nofork", "--nopidfile"])
        stack.wait_for(lambda: os.path.exists(self.bus_path), 10, "dbus-daemon")
        os.chmod(self.bus_path, 0o666)
        s.bus = f"unix:path={self.bus_path}"
        s.start_process("simulator", [os.path.join(s.bin, "wear2mqtt-sim"), "run", "--bus", s.bus,
                                      "--scenario", os.path.join(stack.REPO, "deploy", "demo-scenario.yaml")])
        stack.wait_for(lambda: STRAP in s.sim("list"), 20, "the simulator")
        return self

    def stop(self):
        self.s.stop()
        if self.made_user:
            subprocess.run(["userdel", "wear2mqtt-ctr"], check=False, capture_output=True)


def print_container_log(name):
    logs = podman("logs", name, check=False)
    print(f"--- podman logs {name} (last lines)\n{(logs.stdout + logs.stderr)[-3000:]}", file=sys.stderr)


def container_pid(name):
    return int(podman("inspect", "--format", "{{.State.Pid}}", name).stdout.strip())


def process_ids(pid):
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return fields["Uid"].split()[0], fields["Groups"].split()


def run_gateway(args, host, folder):
    image = args.image
    name = f"wear2mqtt-test-{os.getpid()}"
    volume = f"wear2mqtt-test-state-{os.getpid()}"
    web_port = stack.free_port()
    config_dir = os.path.join(folder, "etc")
    os.makedirs(config_dir)
    with open(os.path.join(config_dir, "config.yaml"), "w") as f:
        f.write(f"""gateway:
  id: container
mqtt:
  port: {host.s.broker_port}
  base_topic: ctr
frontend:
  enabled: true
  listen: 127.0.0.1:{web_port}
devices:
  - {{ address: "{STRAP}", name: strap }}
""")
    bluetooth_gid = grp.getgrnam("bluetooth").gr_gid
    run = ["run", "--detach", "--name", name, "--network", "host", "--read-only", "--cap-drop", "all",
           "--security-opt", "no-new-privileges", "--group-add", str(bluetooth_gid),
           "--volume", f"{volume}:/var/lib/wear2mqtt", "--volume", f"{config_dir}:/etc/wear2mqtt:ro",
           "--volume", f"{host.bus_path}:/run/dbus/system_bus_socket", image]
    samples = None
    try:
        step(f"the gateway's image: non-root, read-only root, no capabilities, bluetooth group by GID ({bluetooth_gid})")
        samples = Subscription(host.s.broker_port, "ctr/#")
        podman(*run)
        samples.wait_for("ctr/strap/sensor/heart_rate ", 60, "heart-rate samples from the container")
        uid, groups = process_ids(container_pid(name))
        assert uid == "10001", f"the gateway runs as uid {uid}"
        assert str(bluetooth_gid) in groups, f"not in the bluetooth group: {groups}"
        touched = podman("exec", name, "touch", "/etc/wear2mqtt-was-here", check=False)
        assert touched.returncode != 0 and "Read-only file system" in touched.stderr, touched.stderr
        health = podman("healthcheck", "run", name, check=False)
        assert health.returncode == 0, f"health check: {health.stdout} {health.stderr}"
        step("samples flow; uid 10001; the root file system refused a write; the health check passed")

        step("a device added over MQTT survives a restart (the state volume)")
        subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(host.s.broker_port), "-q", "1",
                        "-t", "ctr/bridge/request/device/add", "-m", json.dumps({"address": THERMOMETER, "name": "thermo"})],
                       check=True, timeout=10)
        samples.wait_for("ctr/thermo/sensor/temperature ", 60, "temperature samples of the added device")
        started = time.monotonic()
        podman("stop", "--time", "10", name, timeout=30)
        stopped_after = time.monotonic() - started
        exit_code = podman("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip()
        logs = podman("logs", name).stderr + podman("logs", name).stdout
        assert exit_code == "0", f"exit code {exit_code} after SIGTERM:\n{logs[-2000:]}"
        assert stopped_after < 5, f"SIGTERM took {stopped_after:.1f} s"
        assert "stopped" in logs, logs[-2000:]
        # The StartNotify signal socket opens from the container too (EXTERNAL as the image's user, on the bus socket
        # mounted in); had it not, the gateway would have said that StartNotify values come through libdbus.
        assert "StartNotify values come through libdbus" not in logs, logs[-2000:]
        step(f"SIGTERM: stopped cleanly (exit 0) in {stopped_after:.2f} s; the signal socket opened")
        samples.close()
        samples = Subscription(host.s.broker_port, "ctr/thermo/sensor/temperature")
        podman("start", name)
        samples.wait_for("ctr/thermo/sensor/temperature ", 60, "the added device's samples after the restart")
        step("after the restart the device added over MQTT streams again, from the registry on the volume")
    except BaseException:
        print_container_log(name)
        raise
    finally:
        if samples:
            samples.close()
        podman("rm", "--force", "--time", "5", name, check=False)
        podman("volume", "rm", "--force", volume, check=False)


def run_addon(args, host, folder, browser):
    name = f"wear2mqtt-addon-test-{os.getpid()}"
    data = os.path.join(folder, "addon-data")
    os.makedirs(data)
    with open(os.path.join(data, "options.json"), "w") as f:
        json.dump({"log_level": "debug", "base_topic": "addon/wear", "gateway_id": "ha-addon",
                   "devices": [{"address": STRAP, "name": "strap", "driver": "standard"}],
                   "allow": {"clear_data": False, "factory_reset": False, "dfu": False},
                   "homeassistant": {"enabled": True, "discovery_prefix": "homeassistant"}, "mqtt": {}}, f)
    # The add-on's config folder (map: addon_config) with a firmware package in it, as a user puts one over Samba.
    addon_config = os.path.join(folder, "addon-config")
    os.makedirs(os.path.join(addon_config, "firmware"))
    subprocess.run([os.path.join(args.bin, "wear2mqtt-sim"), "firmware-package", "--output",
                    os.path.join(addon_config, "firmware", "carexc-2.2.0.zip"), "--version", "2.2.0"],
                   check=True, capture_output=True, timeout=60)
    supervisor = FakeSupervisor({"host": "127.0.0.1", "port": host.secure_port, "ssl": False, "protocol": "3.1.1",
                                 "username": "addons", "password": "s3cret-from-supervisor", "addon": "core_mosquitto"})
    web_port = stack.free_port()
    proxy = None
    samples = Subscription(host.secure_port, "addon/wear/#", "addons", "s3cret-from-supervisor")
    try:
        step("the add-on: options and the Supervisor's MQTT service become the configuration")
        podman("run", "--detach", "--name", name, "--network", "host", "--volume", f"{data}:/data",
               "--volume", f"{addon_config}:/config",
               "--volume", f"{host.bus_path}:/run/dbus/system_bus_socket",
               "--env", f"SUPERVISOR_TOKEN={SUPERVISOR_TOKEN}", "--env", f"SUPERVISOR_API=http://127.0.0.1:{supervisor.port}",
               "--env", "ADDON_TRUSTED_PROXY=127.0.0.1",
               "--env", f"WEAR2MQTT_FRONTEND_LISTEN=127.0.0.1:{web_port}", args.addon_image)
        samples.wait_for("addon/wear/strap/sensor/heart_rate ", 60, "samples on the Supervisor's broker, with its credentials")
        assert supervisor.requests == [("/services/mqtt", f"Bearer {SUPERVISOR_TOKEN}")], supervisor.requests
        generated = open(os.path.join(data, "generated-config.yaml")).read()
        assert "s3cret" not in generated, "the broker password was written to the configuration"
        logs = podman("logs", name).stderr
        assert "s3cret" not in logs, "the broker password was logged"
        assert os.path.isdir(os.path.join(data, "state")), "no state in /data"
        step("samples reach the credentialed broker; the password is in no file and no log; state in /data/state")
        subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(host.secure_port), "-u", "addons", "-P",
                        "s3cret-from-supervisor", "-q", "1", "-t", "addon/wear/bridge/request/firmware/list", "-m", "{}"],
                       check=True, timeout=10)
        samples.wait_for("addon/wear/bridge/response/firmware/list ", 20, "the firmware list")
        listed = next(line for line in samples.lines if line.startswith("addon/wear/bridge/response/firmware/list "))
        assert "carexc-2.2.0.zip" in listed, listed
        step("a firmware package in the add-on's config folder is offered (bridge/request/firmware/list)")

        step("the web interface through an ingress-like proxy: no token for the trusted proxy, the WebSocket under the prefix")
        proxy = ingress.IngressProxy(web_port)
        context = browser.new_context()
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.goto(proxy.url)
        from playwright.sync_api import expect
        expect(page.get_by_role("heading", name="Overview")).to_be_visible(timeout=20000)
        expect(page.get_by_role("link", name="strap")).to_be_visible(timeout=20000)
        page.get_by_role("link", name="strap").click()
        expect(page.get_by_role("heading", name="strap")).to_be_visible()
        # Heart rate at 1 Hz reaches the plot over the WebSocket (a base topic of two levels, addon/wear).
        expect(page.locator('figure[data-sensor="heart_rate"]')).to_be_visible(timeout=15000)
        stack.wait_for(lambda: int(page.locator('figure[data-sensor="heart_rate"]').get_attribute("data-samples") or 0) >= 2,
                       15, "heart-rate samples in the plot")
        page.screenshot(path=os.path.join(args.out, "addon-ingress.png"))
        context.close()
        assert not errors, errors
        assert proxy.upgrades >= 1, "no WebSocket went through the ingress"
        assert not proxy.strays, f"requests that missed the ingress prefix: {proxy.strays}"
        health = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", f"http://127.0.0.1:{web_port}/health"],
                                capture_output=True, text=True, timeout=10).stdout
        assert health == "200", f"the watchdog's URL answered {health}"
        step(f"ingress: {len(proxy.paths)} requests and {proxy.upgrades} WebSocket(s), all under the prefix; /health 200")
    except BaseException:
        print_container_log(name)
        raise
    finally:
        samples.close()
        if proxy:
            proxy.close()
        supervisor.close()
        podman("rm", "--force", "--time", "5", name, check=False)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="the folder of wear2mqtt-sim")
    parser.add_argument("--image", required=True)
    parser.add_argument("--addon-image", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="wear2mqtt-container-")
    os.chmod(folder, 0o755)
    host = Host(args.bin, folder)
    try:
        host.start()
        run_gateway(args, host, folder)
        from playwright.sync_api import sync_playwright
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
            try:
                run_addon(args, host, folder, browser)
            finally:
                browser.close()
        print("container stage: the image and the add-on passed")
    except BaseException:
        for name in ("gateway", "simulator", "dbus"):
            path = os.path.join(folder, f"{name}.log")
            if os.path.exists(path):
                print(f"--- {name}.log (last lines)\n" + open(path).read()[-1500:], file=sys.stderr)
        raise
    finally:
        host.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
