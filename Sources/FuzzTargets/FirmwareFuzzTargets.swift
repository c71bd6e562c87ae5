import Firmware

extension FuzzTarget {
    /// What Legacy and Secure DFU bootloaders and buttonless services send and receive.
    static let dfuProtocol = FuzzTarget(
        name: "dfu-protocol",
        summary: "Nordic DFU: Legacy and Secure control point requests, responses, notifications, sizes, version"
    ) { bytes in
        checkRoundTrip(bytes, LegacyDFURequest.init(decoding:), { $0.encoded() }, "LegacyDFURequest")
        checkRoundTrip(bytes, LegacyDFUImageSizes.init(decoding:), { $0.encoded() }, "LegacyDFUImageSizes")
        checkRoundTrip(bytes, LegacyDFUNotification.init(decoding:), { $0.encoded() }, "LegacyDFUNotification")
        checkRoundTrip(bytes, LegacyDFUInitPacket.init(decoding:), { $0.encoded() }, "LegacyDFUInitPacket")
        checkRoundTrip(bytes, LegacyDFUVersion.init(decoding:), { $0.encoded() }, "LegacyDFUVersion")
        checkRoundTrip(bytes, SecureDFURequest.init(decoding:), { $0.encoded() }, "SecureDFURequest")
        checkRoundTrip(bytes, SecureDFUResponse.init(decoding:), { $0.encoded() }, "SecureDFUResponse")
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
