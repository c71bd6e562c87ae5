import FoundationEssentials
import Logging
import MQTT
import Wearables

/// `<state_dir>/device-states.json`: each device's last state document (`DeviceStateArchive`), written whole with
/// `AtomicFile` (a crash leaves the old file or the new one), at most every few seconds while documents change and
/// once more at stop.
struct DeviceStateStore: Sendable {
    let path: String

    init(stateDirectory: String) {
        path = stateDirectory + "/device-states.json"
    }

    /// The kept documents; none when there is no file, and none (logged) when it is damaged.
    func load(logger: Logger) -> [String: DeviceStateDocument] {
        guard let bytes = readWholeFile(atPath: path) else { return [:] }
        do throws(DeviceStateArchive.DamagedArchive) {
            return try DeviceStateArchive.decode(bytes)
        } catch {
            logger.warning("the kept device states are unreadable; starting without them",
                           metadata: ["path": "\(path)", "error": "\(error)"])
            return [:]
        }
    }

    func save(_ documents: [String: DeviceStateDocument]) throws {
        try AtomicFile.replace(path, with: Data(DeviceStateArchive.encode(documents)))
    }
}
