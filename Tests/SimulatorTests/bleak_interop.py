#!/usr/bin/env python3
"""Interoperability check: bleak (a BlueZ client nobody on this project wrote) against wear2mqtt-sim.

Point DBUS_SYSTEM_BUS_ADDRESS at the bus the simulator owns org.bluez on, then:

    python3 bleak_interop.py C0:FF:EE:00:00:01 [notifications] [--acquire]

Discovers the strap by its Heart Rate service, connects, reads the battery level, and waits for at least
`notifications` (default 3) heart-rate measurements, decoded here independently of the Swift codecs.
Prints one line starting with PASS or FAIL and exits 0 or 1.
"""
import asyncio
import sys

HEART_RATE_SERVICE = "0000180d-0000-1000-8000-00805f9b34fb"
HEART_RATE_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
BATTERY_LEVEL = "00002a19-0000-1000-8000-00805f9b34fb"


def decode_heart_rate(data: bytes) -> int:
    flags = data[0]
    return int.from_bytes(data[1:3], "little") if flags & 0x01 else data[1]


async def check(address: str, wanted: int, acquire: bool) -> str:
    from bleak import BleakClient, BleakScanner

    device = await BleakScanner.find_device_by_address(address, timeout=10, service_uuids=[HEART_RATE_SERVICE])
    if device is None:
        return f"FAIL: {address} was not discovered"
    received = []
    done = asyncio.Event()

    def on_measurement(_, data: bytearray) -> None:
        received.append(decode_heart_rate(bytes(data)))
        if len(received) >= wanted:
            done.set()

    async with BleakClient(device, timeout=15) as client:
        services = client.services
        if services.get_service(HEART_RATE_SERVICE) is None:
            return "FAIL: the Heart Rate service was not resolved"
        battery = await client.read_gatt_char(BATTERY_LEVEL)
        await client.start_notify(HEART_RATE_MEASUREMENT, on_measurement,
                                  bluez={"use_start_notify": not acquire})
        try:
            await asyncio.wait_for(done.wait(), timeout=15)
        except asyncio.TimeoutError:
            return f"FAIL: only {len(received)} of {wanted} heart-rate notifications arrived"
        await client.stop_notify(HEART_RATE_MEASUREMENT)
    how = "AcquireNotify" if acquire else "StartNotify"
    return (f"PASS: {device.name} ({address}) battery {battery[0]} %, "
            f"{len(received)} heart-rate notifications via {how}: {received[:wanted]} bpm")


def main() -> int:
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    acquire = "--acquire" in sys.argv
    if not arguments:
        print("FAIL: usage: bleak_interop.py ADDRESS [NOTIFICATIONS] [--acquire]")
        return 1
    wanted = int(arguments[1]) if len(arguments) > 1 else 3
    try:
        line = asyncio.run(check(arguments[0], wanted, acquire))
    except Exception as error:  # any bleak or D-Bus failure is a failed check
        line = f"FAIL: {type(error).__name__}: {error}"
    print(line, flush=True)
    return 0 if line.startswith("PASS") else 1


if __name__ == "__main__":
    sys.exit(main())
