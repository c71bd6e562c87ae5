"""aioesphomeapi (PyPI), a client nobody here wrote, against `wear2mqtt-sim proxy`: it connects with or without
encryption, reads the device info (name, MAC, Bluetooth proxy feature flags) and subscribes to the free connection
slots. With --wrong-key it must be refused with InvalidEncryptionKeyAPIError; with --no-key against an encrypted proxy,
with RequiresEncryptionAPIError. Prints PASS and what it saw, or raises.

Usage: esphome_interop.py PORT NAME [--key BASE64] [--wrong-key BASE64] [--no-key] [--slots N]
"""

import argparse
import asyncio

import aioesphomeapi
from aioesphomeapi import APIClient, BluetoothProxyFeature


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("name")
    parser.add_argument("--key")
    parser.add_argument("--wrong-key")
    parser.add_argument("--no-key", action="store_true")
    parser.add_argument("--slots", type=int, default=3)
    args = parser.parse_args()

    if args.wrong_key or args.no_key:
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

    client = APIClient("127.0.0.1", args.port, None, noise_psk=args.key, expected_name=args.name)
    await asyncio.wait_for(client.connect(login=True), 20)
    info = await asyncio.wait_for(client.device_info(), 10)
    assert info.name == args.name, info.name
    features = BluetoothProxyFeature(info.bluetooth_proxy_feature_flags)
    for needed in (BluetoothProxyFeature.ACTIVE_CONNECTIONS, BluetoothProxyFeature.REMOTE_CACHING,
                   BluetoothProxyFeature.RAW_ADVERTISEMENTS):
        assert needed in features, f"{needed!r} missing from {features!r}"
    slots = asyncio.get_running_loop().create_future()

    def on_free(free, limit, allocated):
        if not slots.done():
            slots.set_result((free, limit))

    unsubscribe = client.subscribe_bluetooth_connections_free(on_free)
    free, limit = await asyncio.wait_for(slots, 10)
    assert (free, limit) == (args.slots, args.slots), (free, limit)
    unsubscribe()
    version = client.api_version
    await client.disconnect()
    print(f"PASS name={info.name} mac={info.mac_address} esphome={info.esphome_version} "
          f"features={int(features)} free={free}/{limit} encrypted={args.key is not None} "
          f"api={version.major}.{version.minor}")


asyncio.run(main())
