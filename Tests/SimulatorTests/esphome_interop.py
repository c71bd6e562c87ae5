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

Prints PASS and what it saw, or raises.

Usage: esphome_interop.py PORT NAME [--key BASE64] [--wrong-key BASE64] [--no-key] [--slots N]
                          [--strap ADDRESS [--other ADDRESS]]
"""

import argparse
import asyncio

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
    session = await asyncio.wait_for(strap_session(client, info, args, slots), 60) if args.strap else ""
    unsubscribe()
    version = client.api_version
    await client.disconnect()
    print(f"PASS name={info.name} mac={info.mac_address} esphome={info.esphome_version} "
          f"features={int(features)} free={free}/{limit} encrypted={args.key is not None} "
          f"api={version.major}.{version.minor} {session}")


asyncio.run(main())
