import ESPHome
import SimulatedWearables

/// A simulated peripheral's attribute table as a proxy client sees it: attributes by handle (the API names
/// characteristics by their value handle, descriptors by their own), and the service list `BluetoothGATTGetServices`
/// answers, every service including GAP and GATT, as ESP-IDF's discovery finds them. Pure.
struct ProxyGATTTable {
    enum Attribute {
        case value(GATTLayout.Characteristic)
        case descriptor(GATTLayout.Characteristic, GATTLayout.Descriptor)
    }

    /// ESPHome's limit for one `BluetoothGATTGetServicesResponse` (a Wi-Fi frame, WPA3 overhead allowed for): services
    /// beyond it go in the next message; a service larger than that goes alone.
    static let maximumResponseSize = 1360

    let layout: GATTLayout
    private let attributes: [UInt16: Attribute]

    init(_ layout: GATTLayout) {
        self.layout = layout
        var attributes: [UInt16: Attribute] = [:]
        for characteristic in layout.services.flatMap(\.characteristics) {
            attributes[characteristic.valueHandle] = .value(characteristic)
            for descriptor in characteristic.descriptors { attributes[descriptor.handle] = .descriptor(characteristic, descriptor) }
        }
        self.attributes = attributes
    }

    func attribute(_ handle: UInt32) -> Attribute? {
        guard let handle = UInt16(exactly: handle) else { return nil }
        return attributes[handle]
    }

    /// The value handle of the characteristic `uuid` (the first, as a peripheral's own lookup by UUID finds it).
    func valueHandle(of uuid: BluetoothUUID) -> UInt16? {
        layout.services.lazy.flatMap(\.characteristics).first { $0.uuid == uuid }?.valueHandle
    }

    /// The services as the responses ESPHome streams, packed up to `maximumResponseSize` each.
    /// - Parameter efficientUUIDs: a client of API 1.12 or later: 16-bit UUIDs go in `short_uuid`, 128-bit ones in
    ///   `uuid` as two `uint64`s (high, low); older clients get every UUID in `uuid`.
    func servicesResponses(address: UInt64, efficientUUIDs: Bool) -> [BluetoothGATTGetServicesResponse] {
        var responses: [BluetoothGATTGetServicesResponse] = []
        var current = BluetoothGATTGetServicesResponse()
        current.address = address
        for service in layout.services {
            let encoded = Self.encode(service, efficientUUIDs: efficientUUIDs)
            var candidate = current
            candidate.services.append(encoded)
            if !current.services.isEmpty, ((try? candidate.serializedBytes() as [UInt8])?.count ?? 0) > Self.maximumResponseSize {
                responses.append(current)
                current.services = [encoded]
            } else {
                current = candidate
            }
        }
        if !current.services.isEmpty { responses.append(current) }
        return responses
    }

    private static func encode(_ service: GATTLayout.Service, efficientUUIDs: Bool) -> BluetoothGATTService {
        var encoded = BluetoothGATTService()
        encoded.handle = UInt32(service.handle)
        setUUID(service.uuid, efficientUUIDs) { encoded.uuid = $0; encoded.shortUuid = $1 }
        encoded.characteristics = service.characteristics.map { characteristic in
            var item = BluetoothGATTCharacteristic()
            item.handle = UInt32(characteristic.valueHandle)
            // The declaration's properties byte; the extended properties live in a descriptor.
            item.properties = UInt32(characteristic.flags.rawValue & 0xFF)
            setUUID(characteristic.uuid, efficientUUIDs) { item.uuid = $0; item.shortUuid = $1 }
            item.descriptors = characteristic.descriptors.map { descriptor in
                var entry = BluetoothGATTDescriptor()
                entry.handle = UInt32(descriptor.handle)
                setUUID(descriptor.uuid, efficientUUIDs) { entry.uuid = $0; entry.shortUuid = $1 }
                return entry
            }
            return item
        }
        return encoded
    }

    private static func setUUID(_ uuid: BluetoothUUID, _ efficient: Bool, _ set: ([UInt64], UInt32) -> Void) {
        if efficient, let short = uuid.shortUUID { set([], UInt32(short)) } else { set(splitUUID(uuid), 0) }
    }

    /// A UUID as ESPHome's two `uint64`s: the first 8 bytes of its written form, then the last 8.
    static func splitUUID(_ uuid: BluetoothUUID) -> [UInt64] {
        let bytes = Array(AdvertisingData.uuidBytes(uuid).reversed())
        let high = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let low = bytes.dropFirst(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return [high, low]
    }
}
