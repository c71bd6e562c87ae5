#!/usr/bin/env python3
"""The Python peer: the BLE → MQTT bridge people write with bleak and paho-mqtt, as wear2mqtt-bench's baseline.

It connects to the given heart-rate sensors through BlueZ (bleak talks to the system bus: point
DBUS_SYSTEM_BUS_ADDRESS at the bench's private bus), subscribes to Heart Rate Measurement (0x2A37) and publishes
each measurement as the gateway's heart-rate sample JSON (Sources/Gateway/Contract/SamplePayload.swift),
`{"ts":…,"bpm":…,"contact":…,"energy_kj":…}`, to `<base>/<id>/sensor/heart_rate` at QoS 0, so the bench's
subscriber counts and decodes it exactly like the gateway's. No batching, state, commands or reconnection: it
does the least such a bridge does, in the usual way (asyncio for bleak, paho's network thread for MQTT).

    python3 peer.py --port 1883 --base bench --method acquire --devices C0:BE:00:00:00:00=hr000,…

Prints "connected N" on stdout once every device streams; runs until SIGTERM.
"""
import argparse
import asyncio
import json
import sys
import time

import paho.mqtt.client as mqtt
from bleak import BleakClient, BleakScanner

HEART_RATE_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"


def decode(data: bytes) -> dict:
    """Heart Rate Measurement → the gateway's sample keys (contact and energy only when the flags carry them)."""
    flags = data[0]
    if flags & 0x01:
        bpm, offset = int.from_bytes(data[1:3], "little"), 3
    else:
        bpm, offset = data[1], 2
    sample = {"ts": int(time.time() * 1000), "bpm": bpm}
    if flags & 0x04:
        sample["contact"] = bool(flags & 0x02)
    if flags & 0x08:
        sample["energy_kj"] = int.from_bytes(data[offset:offset + 2], "little")
        offset += 2
    if flags & 0x10:
        raw = [int.from_bytes(data[i:i + 2], "little") for i in range(offset, len(data) - 1, 2)]
        if raw:
            sample["rr_ms"] = [value * 1000 / 1024 for value in raw]
    return sample


async def discover(addresses: set, timeout: float) -> dict:
    """One scan until every wanted address has been seen: address → BLEDevice."""
    found = {}
    complete = asyncio.Event()

    def seen(device, _advertisement):
        if device.address.upper() in addresses:
            found[device.address.upper()] = device
            if len(found) == len(addresses):
                complete.set()

    async with BleakScanner(detection_callback=seen):
        await asyncio.wait_for(complete.wait(), timeout)
    return found


async def bridge(arguments) -> None:
    ids = dict(pair.split("=", 1) for pair in arguments.devices.split(","))
    ids = {address.upper(): device_id for address, device_id in ids.items()}
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"wear2mqtt-bench-peer-{arguments.port}")
    client.connect("127.0.0.1", arguments.port)
    client.loop_start()
    devices = await discover(set(ids), timeout=60)
    use_start_notify = arguments.method == "start_notify"
    connections = []
    for address, device_id in ids.items():
        topic = f"{arguments.base}/{device_id}/sensor/heart_rate"

        def publish(_characteristic, data: bytearray, topic=topic) -> None:
            payload = json.dumps(decode(bytes(data)), separators=(",", ":"))
            client.publish(topic, payload, qos=0)

        ble = BleakClient(devices[address], timeout=30)
        await ble.connect()
        await ble.start_notify(HEART_RATE_MEASUREMENT, publish, bluez={"use_start_notify": use_start_notify})
        connections.append(ble)
    print(f"connected {len(connections)}", flush=True)
    await asyncio.Event().wait()  # until SIGTERM ends the process


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True, help="MQTT broker port on 127.0.0.1")
    parser.add_argument("--base", default="bench", help="base topic")
    parser.add_argument("--method", choices=["acquire", "start_notify"], default="acquire")
    parser.add_argument("--devices", required=True, help="comma-separated ADDRESS=ID pairs")
    asyncio.run(bridge(parser.parse_args()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
