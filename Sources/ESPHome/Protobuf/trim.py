"""Cuts api.proto as ESPHome publishes it (aioesphomeapi/api.proto) down to what a Bluetooth proxy client needs: the
connection's messages and the Bluetooth proxy's, with the enums and nested messages they use. Field numbers, types and
names are kept, so the wire format is ESPHome's; ESPHome's own options (ids, sources, C++ hints) are dropped, each
message's id kept as a `// id N` comment, and the ids written to APIMessageType.swift.

Usage: python3 trim.py FULL_API_PROTO   (writes api.proto and ../Frames/APIMessageType.swift beside this file)
"""

import re
import sys

KEEP = [
    "HelloRequest", "HelloResponse", "DisconnectReason", "DisconnectRequest", "DisconnectResponse", "PingRequest",
    "PingResponse", "DeviceInfoRequest", "AreaInfo", "DeviceInfo", "SerialProxyPortType", "SerialProxyInfo",
    "DeviceInfoResponse", "SubscribeBluetoothLEAdvertisementsRequest", "BluetoothLERawAdvertisement",
    "BluetoothLERawAdvertisementsResponse", "BluetoothDeviceRequestType", "BluetoothDeviceRequest",
    "BluetoothDeviceConnectionResponse", "BluetoothGATTGetServicesRequest", "BluetoothGATTDescriptor",
    "BluetoothGATTCharacteristic", "BluetoothGATTService", "BluetoothGATTGetServicesResponse",
    "BluetoothGATTGetServicesDoneResponse", "BluetoothGATTReadRequest", "BluetoothGATTReadResponse",
    "BluetoothGATTWriteRequest", "BluetoothGATTReadDescriptorRequest", "BluetoothGATTWriteDescriptorRequest",
    "BluetoothGATTNotifyRequest", "BluetoothGATTNotifyDataResponse", "SubscribeBluetoothConnectionsFreeRequest",
    "BluetoothConnectionsFreeResponse", "BluetoothGATTErrorResponse", "BluetoothGATTWriteResponse",
    "BluetoothGATTNotifyResponse", "BluetoothDevicePairingResponse", "BluetoothDeviceUnpairingResponse",
    "UnsubscribeBluetoothLEAdvertisementsRequest", "BluetoothDeviceClearCacheResponse", "BluetoothScannerState",
    "BluetoothScannerMode", "BluetoothScannerStateResponse", "BluetoothScannerSetModeRequest",
]


def blocks(text):
    """Top-level `message` and `enum` blocks: (kind, name, body lines)."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = re.match(r"^(message|enum) (\w+) \{", lines[i])
        if not match:
            i += 1
            continue
        depth, body = 0, []
        while True:
            line = lines[i]
            depth += line.count("{") - line.count("}")
            body.append(line)
            i += 1
            if depth == 0:
                break
        yield match.group(1), match.group(2), body


def clean(body):
    out, message_id = [], None
    # Field options spread over several lines are joined first.
    joined = re.sub(r"\[([^\]]*)\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", "\n".join(body), flags=re.S)
    for line in joined.splitlines():
        option = re.match(r"^\s*option ?\((\w+)\) = (.*);", line)
        if option:
            if option.group(1) == "id":
                message_id = int(option.group(2))
            continue
        if re.match(r"^\s*option deprecated", line) or re.match(r"^\s*//", line):
            continue
        # Field options that are ESPHome's own (in brackets, with parentheses) go; `deprecated` stays.
        line = re.sub(r"\s*\[([^\]]*)\]", lambda m: keep_standard(m.group(1)), line)
        line = re.sub(r"\s*//.*$", "", line)
        if line.strip() == "" and out and out[-1].strip() == "":
            continue
        out.append(line.rstrip())
    return out, message_id


def keep_standard(options):
    kept = [o.strip() for o in options.split(",") if not o.strip().startswith("(")]
    return f" [{', '.join(kept)}]" if kept else ""


def main():
    full = open(sys.argv[1]).read()
    found = {name: (kind, body) for kind, name, body in blocks(full)}
    missing = [name for name in KEEP if name not in found]
    if missing:
        sys.exit(f"not in {sys.argv[1]}: {missing}")
    proto = ['// ESPHome\'s native API, the part a Bluetooth proxy client uses: cut from api.proto as ESPHome publishes it',
             '// (github.com/esphome/aioesphomeapi, aioesphomeapi/api.proto) by trim.py. Field numbers and types are ESPHome\'s;',
             '// the message ids are in APIMessageType.swift. Do not edit: run ./regenerate.', 'syntax = "proto3";', '']
    ids = []
    for name in KEEP:
        kind, body = found[name]
        cleaned, message_id = clean(body)
        if message_id is not None:
            cleaned.insert(1, f"  // id {message_id}")
            ids.append((name, message_id))
        # No blank line right after the opening brace or the id comment.
        while len(cleaned) > 2 and cleaned[1 if message_id is None else 2].strip() == "":
            del cleaned[1 if message_id is None else 2]
        proto += cleaned + [""]
    with open("api.proto", "w") as f:
        f.write("\n".join(proto))
    swift = ["/// The native API's message ids (the `(id)` option of each message in ESPHome's api.proto), for the messages",
             "/// a Bluetooth proxy client uses. Written by Protobuf/trim.py; do not edit.",
             "public enum APIMessageType: UInt32, Sendable, CaseIterable {"]
    for name, message_id in ids:
        case = name[0].lower() + name[1:]
        swift.append(f"    case {case} = {message_id}")
    swift.append("}")
    with open("../Frames/APIMessageType.swift", "w") as f:
        f.write("\n".join(swift) + "\n")
    print(f"api.proto: {len(KEEP)} types, {len(ids)} messages with ids")


if __name__ == "__main__":
    main()
