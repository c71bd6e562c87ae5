"""aioesphomeapi (PyPI), a client nobody here wrote, against `wear2mqtt-sim proxy`: it connects with or without
encryption, reads the device info (name, MAC, Bluetooth proxy feature flags) and subscribes to the free connection
slots. With --wrong-key it must be refused with InvalidEncryptionKeyAPIError; with --no-key against an encrypted proxy,
with RequiresEncryptionAPIError.

With --strap ADDRESS (a proxy serving a scenario) it then does what Home Assistant's Bluetooth stack does through a
proxy: hears the strap's raw advertisement (its name and the Heart Rate service in the AD structures), connects
without cache, lists the services (Heart Rate, Battery), reads the battery level, writes the Heart Rate Control Point
(0x01 accepted, 0x02 refused with the service's ATT error 0x80), starts notifications of the Heart Rate Measurement
(BluetoothGATTNotifyRequest, then the CCCD written by the client itself, as API v3 requires) and receives several,
disconnects and sees its slot come back. With --other ADDRESS as well and a proxy of one slot, the second connect is
refused (not connected, the slot still the strap's).

With --walk PID as well (PID the proxy's; its scenario's connect_timeout short) it walks the strap out of the proxy's
range and back instead: hears the strap and connects, sends the proxy SIGUSR1, sees the link drop with the connection
timeout reason (0x08) and the slot freed, hears no advertisement for a second, sees a connect fail with 0x3E after the
connect timeout, sends SIGUSR2, hears the strap again and connects to it.

Prints PASS and what it saw, or raises.

Usage: esphome_interop.py PORT NAME [--key BASE64] [--wrong-key BASE64] [--no-key] [--slots N]
                          [--strap ADDRESS [--other ADDRESS | --walk PID]]
"""

import argparse
import asyncio
import os
import signal

import aioesphomeapi
from aioesphomeapi import APIClient, BluetoothProxyFeature
from aioesphomeapi.core import BluetoothGATTAPIError

HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"
BATTERY = "0000180f-0000-1000-8000-00805f9b34fb"
MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
CONTROL_POINT = "00002a39-0000-1000-8000-00805f9b34fb"
BATTERY_LEVEL = "00002a19-0000-1000-8000-00805f9b34fb"
CCCD = "00002902-0000-1000-8000-00805f9b34fb"
RANDOM = 1
CONNECTION_TIMEOUT = 0x08
FAILED_TO_ESTABLISH = 0x3E


def as_int(address):
    return int(address.replace(":", ""), 16)


def ad_structures(data):
    """The AD structures of advertising data: {type: [data, ...]}."""
    found, index = {}, 0
    while index < len(data) and data[index]:
        length = data[index]
        found.setdefault(data[index + 1], []).append(bytes(data[index + 2:index + 1 + length]))
        index += 1 + length
    return found


async def refused(args):
    client = APIClient("127.0.0.1", args.port, None, noise_psk=args.wrong_key, expected_name=args.name)
    expected = aioesphomeapi.InvalidEncryptionKeyAPIError if args.wrong_key else aioesphomeapi.RequiresEncryptionAPIError
    try:
        await asyncio.wait_for(client.connect(login=True), 20)
    except expected as error:
        print(f"PASS refused as expected: {type(error).__name__}: {error}")
        return
    finally:
        await client.disconnect(force=True)
    raise AssertionError(f"connected although {expected.__name__} was expected")


class Slots:
    """Every BluetoothConnectionsFreeResponse, and a way to wait for one that says something."""

    def __init__(self):
        self.changed = asyncio.Condition()
        self.last = None

    def __call__(self, free, limit, allocated):
        self.last = (free, limit, list(allocated))
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self):
        async with self.changed:
            self.changed.notify_all()

    async def until(self, predicate, what):
        async def wait():
            async with self.changed:
                await self.changed.wait_for(lambda: self.last is not None and predicate(*self.last))
        try:
            await asyncio.wait_for(wait(), 10)
        except TimeoutError:
            raise AssertionError(f"slots never {what}: last {self.last}") from None
        return self.last


async def strap_session(client, info, args, slots):
    strap = as_int(args.strap)
    heard = asyncio.get_running_loop().create_future()

    def on_advertisements(response):
        for advertisement in response.advertisements:
            if advertisement.address == strap and not heard.done():
                heard.set_result(advertisement)

    stop_advertisements = client.subscribe_bluetooth_le_raw_advertisements(on_advertisements)
    advertisement = await asyncio.wait_for(heard, 10)
    structures = ad_structures(advertisement.data)
    name = (structures.get(0x09) or structures.get(0x08) or [b""])[0].decode()
    uuids16 = b"".join(structures.get(0x03, []))
    assert b"\x0d\x18" in uuids16, f"no Heart Rate in {structures}"
    assert advertisement.address_type == RANDOM and -100 < advertisement.rssi < 0, advertisement

    states = []
    await client.bluetooth_device_connect(strap, lambda *state: states.append(state), timeout=20,
                                          feature_flags=info.bluetooth_proxy_feature_flags, has_cache=False,
                                          address_type=RANDOM)
    assert states and states[-1][0], f"not connected: {states}"
    mtu = states[-1][1]
    free, limit, allocated = await slots.until(lambda f, l, a: strap in a, "listed the strap")
    assert free == limit - 1, (free, limit, allocated)

    services = (await client.bluetooth_gatt_get_services(strap)).services
    by_uuid = {service.uuid: service for service in services}
    assert HEART_RATE in by_uuid and BATTERY in by_uuid, sorted(by_uuid)
    characteristics = {c.uuid: c for service in services for c in service.characteristics}

    battery = await client.bluetooth_gatt_read(strap, characteristics[BATTERY_LEVEL].handle)
    assert len(battery) == 1 and 0 <= battery[0] <= 100, battery

    control = characteristics[CONTROL_POINT].handle
    await client.bluetooth_gatt_write(strap, control, b"\x01", response=True)
    try:
        await client.bluetooth_gatt_write(strap, control, b"\x02", response=True)
        raise AssertionError("control point accepted 0x02")
    except BluetoothGATTAPIError as error:
        assert error.error.error == 0x80, error

    measurement = characteristics[MEASUREMENT]
    cccd = next(d.handle for d in measurement.descriptors if d.uuid == CCCD)
    values = []
    enough = asyncio.get_running_loop().create_future()

    def on_notify(handle, data):
        values.append(bytes(data))
        if len(values) >= 3 and not enough.done():
            enough.set_result(None)

    stop_notify, _ = await client.bluetooth_gatt_start_notify(strap, measurement.handle, on_notify)
    await client.bluetooth_gatt_write_descriptor(strap, cccd, b"\x01\x00")
    await asyncio.wait_for(enough, 10)
    assert all(len(v) >= 2 and 30 <= (v[1] if v[0] & 1 == 0 else v[1] | v[2] << 8) <= 240 for v in values), values
    await stop_notify()

    other = "none"
    if args.other:
        refusal = []
        await client.bluetooth_device_connect(as_int(args.other), lambda *state: refusal.append(state), timeout=20,
                                              feature_flags=info.bluetooth_proxy_feature_flags, has_cache=False,
                                              address_type=RANDOM)
        assert refusal and not refusal[0][0], f"second device connected beyond the slots: {refusal}"
        assert slots.last[0] == 0 and slots.last[2] == [strap], slots.last
        other = f"refused(connected={refusal[0][0]},error={refusal[0][2]})"

    await client.bluetooth_device_disconnect(strap)
    free, limit, allocated = await slots.until(lambda f, l, a: f == l and not a, "came back")
    stop_advertisements()
    return (f"strap={args.strap} name={name} rssi={advertisement.rssi} mtu={mtu} services={len(services)} "
            f"battery={battery[0]} notifications={len(values)} other={other} free_after={free}/{limit}")


async def until(condition, what, timeout=10):
    """Polls `condition` every 20 ms; `timeout` only guards against a hang."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        await asyncio.sleep(0.02)


async def walk_session(client, info, args, slots):
    strap = as_int(args.strap)
    # What the proxy sent, in the order it arrived: ("advertisement", address) and ("connection", connected, error).
    # aioesphomeapi calls back as it reads each message, so an entry after another was sent after it.
    events = []

    def on_advertisements(response):
        events.extend(("advertisement", advertisement.address) for advertisement in response.advertisements)

    def heard_strap(since):
        return ("advertisement", strap) in events[since:]

    def connect(on_state):
        return client.bluetooth_device_connect(strap, on_state, timeout=20,
                                               feature_flags=info.bluetooth_proxy_feature_flags, has_cache=False,
                                               address_type=RANDOM)

    stop_advertisements = client.subscribe_bluetooth_le_raw_advertisements(on_advertisements)
    await until(lambda: heard_strap(0), "the strap was never heard")
    stop_state = await connect(lambda connected, mtu, error: events.append(("connection", connected, error)))
    assert events[-1][:2] == ("connection", True), f"not connected: {events[-1]}"
    await slots.until(lambda f, l, a: strap in a, "listed the strap")

    os.kill(args.walk, signal.SIGUSR1)
    await until(lambda: ("connection", False, CONNECTION_TIMEOUT) in events, "the link never dropped with 0x08")
    dropped = events.index(("connection", False, CONNECTION_TIMEOUT))
    assert [e for e in events if e[0] == "connection"][-2:] == [("connection", True, 0), events[dropped]], events
    free, limit, _ = await slots.until(lambda f, l, a: f == l and not a, "came back after the drop")
    stop_state()
    # Ten of the strap's 100 ms advertising intervals: in range it would have been heard about ten times.
    await asyncio.sleep(1)
    heard_out = sum(1 for event in events[dropped:] if event[0] == "advertisement")
    assert heard_out == 0, f"{heard_out} advertisements out of range"

    refusal = []
    stop_refusal = await connect(lambda *state: refusal.append(state))
    stop_refusal()
    assert refusal == [(False, 0, FAILED_TO_ESTABLISH)], f"a connect out of range: {refusal}"
    await slots.until(lambda f, l, a: f == l and not a, "came back after the failed connect")
    assert not any(event[0] == "advertisement" for event in events[dropped:]), "heard out of range"

    came_back = len(events)
    os.kill(args.walk, signal.SIGUSR2)
    await until(lambda: heard_strap(came_back), "the strap was not heard again")
    again = []
    stop_again = await connect(lambda *state: again.append(state))
    assert again and again[-1][0], f"not connected again: {again}"
    connected_again = again[-1][0]
    await client.bluetooth_device_disconnect(strap)
    await slots.until(lambda f, l, a: f == l and not a, "came back after the disconnect")
    stop_again()
    stop_advertisements()
    return (f"walk: dropped(error={CONNECTION_TIMEOUT}) free_after_drop={free}/{limit} heard_out_of_range={heard_out} "
            f"connect_out_of_range=refused(connected={refusal[0][0]},error={refusal[0][2]}) heard_again=True "
            f"connected_again={connected_again}")


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("name")
    parser.add_argument("--key")
    parser.add_argument("--wrong-key")
    parser.add_argument("--no-key", action="store_true")
    parser.add_argument("--slots", type=int, default=3)
    parser.add_argument("--strap")
    parser.add_argument("--other")
    parser.add_argument("--walk", type=int)
    args = parser.parse_args()

    if args.wrong_key or args.no_key:
        await refused(args)
        return

    client = APIClient("127.0.0.1", args.port, None, noise_psk=args.key, expected_name=args.name)
    await asyncio.wait_for(client.connect(login=True), 20)
    info = await asyncio.wait_for(client.device_info(), 10)
    assert info.name == args.name, info.name
    features = BluetoothProxyFeature(info.bluetooth_proxy_feature_flags)
    for needed in (BluetoothProxyFeature.ACTIVE_CONNECTIONS, BluetoothProxyFeature.REMOTE_CACHING,
                   BluetoothProxyFeature.RAW_ADVERTISEMENTS):
        assert needed in features, f"{needed!r} missing from {features!r}"
    slots = Slots()
    unsubscribe = client.subscribe_bluetooth_connections_free(slots)
    free, limit, _ = await slots.until(lambda f, l, a: True, "arrived")
    assert (free, limit) == (args.slots, args.slots), (free, limit)
    session = ""
    if args.strap:
        run = walk_session if args.walk else strap_session
        session = await asyncio.wait_for(run(client, info, args, slots), 60)
    unsubscribe()
    version = client.api_version
    await client.disconnect()
    print(f"PASS name={info.name} mac={info.mac_address} esphome={info.esphome_version} "
          f"features={int(features)} free={free}/{limit} encrypted={args.key is not None} "
          f"api={version.major}.{version.minor} {session}")


asyncio.run(main())
