"""The real stack the browser test drives: a private mosquitto on a free loopback port, a private dbus-daemon,
wear2mqtt-sim owning org.bluez on it with deploy/demo-scenario.yaml, and wear2mqtt with its web interface
(`frontend:` enabled on a free loopback port, its token in a file). Every process is stopped by pid.
"""

import os
import signal
import socket
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
STRAP = "C0:FF:EE:00:00:01"
KEYS = "C0:FF:EE:00:00:04"
BAND = "C0:F1:70:00:00:06"
H10 = "C0:70:1A:00:00:09"
TOKEN = "browser-test-token"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except Exception:  # noqa: BLE001 - still starting
            pass
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Stack:
    def __init__(self, bin_dir, folder):
        self.bin = bin_dir
        self.folder = folder
        self.children = []

    def start_process(self, name, argv):
        log = open(os.path.join(self.folder, f"{name}.log"), "w")
        child = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.children.append((name, child))
        return child

    def write(self, name, text):
        path = os.path.join(self.folder, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def start(self):
        self.broker_port = free_port()
        self.broker_conf = self.write("mosquitto.conf", f"listener {self.broker_port} 127.0.0.1\nallow_anonymous true\n"
                                      f"user {os.environ.get('USER', 'root')}\n")
        self.start_broker()

        bus_path = os.path.join(self.folder, "bus")
        conf = self.write("bus.conf", f"""<busconfig><type>session</type><listen>unix:path={bus_path}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>""")
        self.start_process("dbus", ["dbus-daemon", f"--config-file={conf}", "--nofork", "--nopidfile"])
        wait_for(lambda: os.path.exists(bus_path), 10, "dbus-daemon")
        self.bus = f"unix:path={bus_path}"
        self.start_process("simulator", [os.path.join(self.bin, "wear2mqtt-sim"), "run", "--bus", self.bus,
                                         "--scenario", os.path.join(REPO, "deploy", "demo-scenario.yaml")])

        firmware = os.path.join(self.folder, "firmware")
        os.makedirs(firmware, exist_ok=True)
        self.firmware_sha = subprocess.check_output([os.path.join(self.bin, "wear2mqtt-sim"), "firmware-package",
                                                     "--output", os.path.join(firmware, "carexc-2.2.0.zip"),
                                                     "--version", "2.2.0"], text=True).strip()
        self.web_port = free_port()
        token_file = self.write("frontend-token", TOKEN + "\n")
        # The strap is not configured: the test adds it from a scan.
        config = self.write("config.yaml", f"""gateway:
  id: browser
  state_dir: {self.folder}/state
mqtt:
  port: {self.broker_port}
bluez:
  bus: {self.bus}
dfu:
  dir: {firmware}
allow:
  dfu: true
frontend:
  enabled: true
  listen: 127.0.0.1:{self.web_port}
  auth_token_file: {token_file}
devices:
  - {{ address: "{KEYS}", name: keys }}
  - {{ address: "{BAND}", name: band }}
  - {{ address: "{H10}", name: h10 }}
""")
        self.start_process("gateway", [os.path.join(self.bin, "wear2mqtt"), "run", "--config", config])
        wait_for(lambda: socket.create_connection(("127.0.0.1", self.web_port), 0.5).close() or True, 30, "the web interface")
        self.url = f"http://127.0.0.1:{self.web_port}/"
        return self

    def start_broker(self):
        self.broker = self.start_process("mosquitto", ["mosquitto", "-c", self.broker_conf])
        wait_for(lambda: socket.create_connection(("127.0.0.1", self.broker_port), 0.5).close() or True, 10, "mosquitto")

    def stop_broker(self):
        """The broker goes away (SIGTERM, by pid); `start_broker` brings it back on the same port."""
        self.broker.send_signal(signal.SIGTERM)
        self.broker.wait(timeout=15)

    def start_tls_gateway(self):
        """A second gateway on the same broker (its own base topic, no devices) serving its web interface over HTTPS
        with a certificate for 127.0.0.1 signed by a CA made here; returns its https URL."""
        tls = os.path.join(self.folder, "tls")
        os.makedirs(tls, exist_ok=True)

        def openssl(*arguments):
            subprocess.run(["openssl", *arguments], check=True, capture_output=True, timeout=60)

        path = lambda name: os.path.join(tls, name)  # noqa: E731
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=wear2mqtt browser test CA",
                "-keyout", path("ca.key"), "-out", path("ca.crt"))
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", path("server.key"),
                "-out", path("server.csr"))
        with open(path("server.ext"), "w") as f:
            f.write("subjectAltName=IP:127.0.0.1\n")
        openssl("x509", "-req", "-in", path("server.csr"), "-CA", path("ca.crt"), "-CAkey", path("ca.key"),
                "-CAcreateserial", "-days", "2", "-out", path("server.crt"), "-extfile", path("server.ext"))
        self.ca_file = path("ca.crt")
        self.tls_port = free_port()
        config = self.write("config-tls.yaml", f"""gateway:
  id: browser-tls
  state_dir: {self.folder}/state-tls
mqtt:
  port: {self.broker_port}
  base_topic: tls
  client_id: wear2mqtt-browser-tls
bluez:
  bus: {self.bus}
frontend:
  enabled: true
  listen: 127.0.0.1:{self.tls_port}
  auth_token_file: {os.path.join(self.folder, "frontend-token")}
  tls:
    cert_file: {path("server.crt")}
    key_file: {path("server.key")}
devices: []
""")
        self.start_process("gateway-tls", [os.path.join(self.bin, "wear2mqtt"), "run", "--config", config])
        wait_for(lambda: socket.create_connection(("127.0.0.1", self.tls_port), 0.5).close() or True, 30,
                 "the HTTPS web interface")
        return f"https://127.0.0.1:{self.tls_port}/"

    def sim(self, *arguments):
        return subprocess.check_output([os.path.join(self.bin, "wear2mqtt-sim"), "control", "--bus", self.bus, *arguments],
                                       text=True, timeout=20)

    def inspect(self, address):
        lines = self.sim("inspect", address).splitlines()
        return dict(line.split("=", 1) for line in lines if "=" in line)

    def log(self, name):
        with open(os.path.join(self.folder, f"{name}.log")) as f:
            return f.read()

    def stop(self):
        for _, child in reversed(self.children):
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
                try:
                    child.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()
