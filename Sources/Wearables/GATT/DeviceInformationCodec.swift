/// The UTF-8 string characteristics of the Device Information Service 1.1 (manufacturer 0x2A29, model 0x2A24,
/// serial 0x2A25, hardware 0x2A27, firmware 0x2A26 and software revision 0x2A28).
///
/// The specification gives them no terminator, but many devices return a fixed-size buffer padded with NULs, so
/// trailing NULs are cut off. A zero-length value is a valid empty string (devices without a serial number
/// send one), so, unlike the other codecs, an empty input is not an error.
public enum DeviceInformationString {
    /// The characteristics this codec applies to.
    public static let characteristicUUIDs: [UInt16] = [
        GATTUUID.Characteristic.manufacturerName, GATTUUID.Characteristic.modelNumber,
        GATTUUID.Characteristic.serialNumber, GATTUUID.Characteristic.hardwareRevision,
        GATTUUID.Characteristic.firmwareRevision, GATTUUID.Characteristic.softwareRevision,
    ]

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> String {
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[end - 1] == 0 { end -= 1 }
        guard let text = String(validating: bytes[..<end], as: UTF8.self) else { throw .invalidUTF8 }
        return text
    }

    public static func encode(_ text: String) -> [UInt8] { Array(text.utf8) }
}

/// The System ID (characteristic 0x2A23; Device Information Service 1.1, "System ID"): a 40-bit
/// manufacturer-defined identifier followed by a 24-bit IEEE Organizationally Unique Identifier, 8 bytes, LE.
public struct SystemID: GATTCharacteristicValue, Hashable {
    public static let characteristicUUID = GATTUUID.Characteristic.systemID

    /// 40 bits.
    public let manufacturerIdentifier: UInt64
    /// 24 bits.
    public let organizationallyUniqueIdentifier: UInt32

    public init(manufacturerIdentifier: UInt64, organizationallyUniqueIdentifier: UInt32) throws(GATTCodecError) {
        guard manufacturerIdentifier < 1 << 40 else {
            throw .outOfRange(field: "manufacturer identifier", value: Int(truncatingIfNeeded: manufacturerIdentifier))
        }
        guard organizationallyUniqueIdentifier < 1 << 24 else {
            throw .outOfRange(field: "organizationally unique identifier", value: Int(organizationallyUniqueIdentifier))
        }
        self.manufacturerIdentifier = manufacturerIdentifier
        self.organizationallyUniqueIdentifier = organizationallyUniqueIdentifier
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> SystemID {
        var reader = ByteReader(bytes)
        let whole = try reader.read(UInt64.self)
        return try SystemID(
            manufacturerIdentifier: whole & 0xFF_FFFF_FFFF, organizationallyUniqueIdentifier: UInt32(whole >> 40))
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(manufacturerIdentifier | UInt64(organizationallyUniqueIdentifier) << 40)
        return writer.bytes
    }
}

/// The Plug-and-Play ID (characteristic 0x2A50; Device Information Service 1.1, "PnP ID"): who assigned the
/// vendor ID, vendor ID, product ID and product version, 7 bytes, LE.
public struct PnPID: GATTCharacteristicValue, Hashable {
    public static let characteristicUUID = GATTUUID.Characteristic.pnpID

    /// Which registry the vendor ID comes from; other values are reserved but kept, since the IDs stay useful.
    /// Equal when the raw values are, so `.unknown(1)` is `.bluetoothSIG`.
    public enum VendorIDSource: Sendable, Hashable {
        case bluetoothSIG
        case usbImplementersForum
        case unknown(UInt8)

        public init(rawValue: UInt8) {
            switch rawValue {
            case 1: self = .bluetoothSIG
            case 2: self = .usbImplementersForum
            default: self = .unknown(rawValue)
            }
        }

        public var rawValue: UInt8 {
            switch self {
            case .bluetoothSIG: 1
            case .usbImplementersForum: 2
            case .unknown(let value): value
            }
        }

        public static func == (lhs: VendorIDSource, rhs: VendorIDSource) -> Bool { lhs.rawValue == rhs.rawValue }
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
    }

    public let vendorIDSource: VendorIDSource
    public let vendorID: UInt16
    public let productID: UInt16
    public let productVersion: UInt16

    public init(vendorIDSource: VendorIDSource, vendorID: UInt16, productID: UInt16, productVersion: UInt16) {
        self.vendorIDSource = vendorIDSource
        self.vendorID = vendorID
        self.productID = productID
        self.productVersion = productVersion
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> PnPID {
        var reader = ByteReader(bytes)
        return PnPID(
            vendorIDSource: VendorIDSource(rawValue: try reader.readUInt8()),
            vendorID: try reader.read(UInt16.self),
            productID: try reader.read(UInt16.self),
            productVersion: try reader.read(UInt16.self)
        )
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(vendorIDSource.rawValue)
        writer.write(vendorID)
        writer.write(productID)
        writer.write(productVersion)
        return writer.bytes
    }
}
