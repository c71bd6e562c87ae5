import Wearables

/// Each device's last state document as the gateway keeps it between runs (`<state_dir>/device-states.json`), so a
/// restart republishes identity, battery, firmware, settings, sync and `last_seen` whole instead of
/// `{"connection":"connecting"}`: a retained `<base>/<id>` is never narrower than the one before.
///
/// Pure: bytes in and out. What is kept is the document without its live connection fact (`connection`, which
/// the gateway sets again as it reaches the device). On the way back an operation that was under way when the
/// gateway stopped (a sync at 40 %, an update at 70 %) reads `interrupted`: nothing runs it any more, and a state
/// that said otherwise would stay true-looking until the next sync. A damaged file yields an error, and the
/// gateway starts without it (logged), as without one.
public enum DeviceStateArchive {
    public static let version: Int64 = 1
    /// Progress states that mean nothing is running: kept as they are.
    static let restingStates: Set<String> = ["idle", "completed", "scheduled", "interrupted", "failed", "cancelled"]

    public struct DamagedArchive: Error, CustomStringConvertible {
        public let description: String
    }

    /// `{"version":1,"devices":{"<id>":{…document without connection…}}}`, keys sorted.
    public static func encode(_ documents: [String: DeviceStateDocument]) -> [UInt8] {
        var devices: [String: DeviceValue] = [:]
        for (id, document) in documents {
            var fields = document.fields
            fields["connection"] = nil
            devices[id] = .object(fields)
        }
        return JSONWriter.encode(.object(["version": .integer(version), "devices": .object(devices)]))
    }

    /// The documents of `bytes`, each `disconnected` (the gateway has not reached the device yet) and with
    /// operations under way read as `interrupted`.
    public static func decode(_ bytes: [UInt8]) throws(DamagedArchive) -> [String: DeviceStateDocument] {
        let value: DeviceValue
        do throws(JSONParsingError) {
            value = try JSONParser.parse(bytes, limits: JSONLimits(maximumBytes: 64 << 20, maximumDepth: 64))
        } catch {
            throw DamagedArchive(description: "not JSON: \(error.description)")
        }
        guard value["version"]?.integer == version else {
            throw DamagedArchive(description: "version \(value["version"].map { RequestReader.quote($0) } ?? "missing"), expected \(version)")
        }
        guard let devices = value["devices"]?.object else { throw DamagedArchive(description: "no devices object") }
        var documents: [String: DeviceStateDocument] = [:]
        for (id, entry) in devices {
            guard DeviceIdentifier.isValid(id), var fields = entry.object else {
                throw DamagedArchive(description: "entry \(RequestReader.quote(id)) is not a device id with an object")
            }
            for (key, field) in fields {
                guard let state = field["state"]?.text, field["progress"] != nil || field["remaining_s"] != nil,
                      !restingStates.contains(state), var progress = field.object else { continue }
                progress["state"] = .text("interrupted")
                progress["remaining_s"] = nil
                fields[key] = .object(progress)
            }
            fields["connection"] = .text(ConnectionState.disconnected.rawValue)
            documents[id] = DeviceStateDocument(fields: fields)
        }
        return documents
    }
}
