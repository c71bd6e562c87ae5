import Firmware

extension FuzzTarget {
    /// What Legacy and Secure DFU bootloaders and buttonless services send and receive.
    static let dfuProtocol = FuzzTarget(
        name: "dfu-protocol",
        summary: "Nordic DFU: Legacy and Secure control point requests, responses, notifications, sizes, version"
    ) { bytes in
        if let value = try? LegacyDFURequest(decoding: bytes) {
            expectStable(value, { $0.encoded() }, { try LegacyDFURequest(decoding: $0) }, "LegacyDFURequest")
        }
        if let value = try? LegacyDFUImageSizes(decoding: bytes) {
            expectStable(value, { $0.encoded() }, { try LegacyDFUImageSizes(decoding: $0) }, "LegacyDFUImageSizes")
        }
        if let value = try? LegacyDFUNotification(decoding: bytes) {
            expectStable(value, { $0.encoded() }, { try LegacyDFUNotification(decoding: $0) }, "LegacyDFUNotification")
        }
        if let value = try? LegacyDFUInitPacket(decoding: bytes) {
            expectStable(value, { $0.encoded() }, { try LegacyDFUInitPacket(decoding: $0) }, "LegacyDFUInitPacket")
        }
        if let value = try? LegacyDFUVersion(decoding: bytes) {
            expectStable(value, { $0.encoded() }, { try LegacyDFUVersion(decoding: $0) }, "LegacyDFUVersion")
        }
        if let value = try? SecureDFURequest(decoding: bytes) {
            expectStable(value, { $0.encoded() }, { try SecureDFURequest(decoding: $0) }, "SecureDFURequest")
        }
        if let value = try? SecureDFUResponse(decoding: bytes) {
            expectStable(value, { $0.encoded() }, { try SecureDFUResponse(decoding: $0) }, "SecureDFUResponse")
        }
        _ = SecureDFUButtonless.result(of: bytes)
    }

    /// The init packet of Secure DFU packages (protobuf, `dfu-cc.proto`), with the bootloader's own checks.
    static let dfuInitPacket = FuzzTarget(
        name: "dfu-init",
        summary: "Nordic Secure DFU init packet (protobuf) and the checks the bootloader makes"
    ) { bytes in
        guard let packet = try? DFUInitPacket(decoding: bytes) else { return }
        expectStable(packet, { $0.encoded() }, { try DFUInitPacket(decoding: $0) }, "DFUInitPacket")
    }

    /// A whole firmware package as `request/dfu` reads one from `dfu.dir`: zip, manifest, images, init packets.
    static let dfuPackage = FuzzTarget(
        name: "dfu-package",
        summary: "Nordic DFU packages: zip archive, manifest.json, images and init packets"
    ) { bytes in
        guard let package = try? DFUPackage(data: bytes, maximumSize: 1 << 20) else { return }
        precondition(!package.images.isEmpty, "a package decoded without an image")
    }
}
