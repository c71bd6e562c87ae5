#if canImport(Glibc)
import Glibc
#endif
import BlueZ
import FoundationEssentials
import MQTT
import Wearables

/// The `DriverStorage` of one device: `<state_dir>/drivers/<address without colons>/<name>.json`, in a directory
/// and files only the gateway's user can read (entries hold pairing credentials). Keyed by address, not id, so
/// a `device/rename` keeps them.
enum DriverFileStorage {
    static func directory(stateDirectory: String, address: BluetoothAddress) -> String {
        stateDirectory + "/drivers/" + address.rawValue.replacing(":", with: "").lowercased()
    }

    /// Deletes everything kept for the device: `device/remove` forgets its pairing as BlueZ forgets the bond.
    static func forget(stateDirectory: String, address: BluetoothAddress) {
        try? FileManager.default.removeItem(atPath: directory(stateDirectory: stateDirectory, address: address))
    }

    /// Every entry kept for the device, by name: what a roaming gateway hands to the next owner (docs/roaming.md).
    /// `excluding` leaves out names such as `credentials`.
    static func entries(stateDirectory: String, address: BluetoothAddress,
                        excluding excluded: Set<String> = []) -> [String: [String: DeviceValue]] {
        let directory = directory(stateDirectory: stateDirectory, address: address)
        let storage = storage(stateDirectory: stateDirectory, address: address)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }
        var entries: [String: [String: DeviceValue]] = [:]
        for name in names where !excluded.contains(name) {
            if let entry = storage.load(name) { entries[name] = entry }
        }
        return entries
    }

    static func storage(stateDirectory: String, address: BluetoothAddress) -> DriverStorage {
        let directory = directory(stateDirectory: stateDirectory, address: address)
        return DriverStorage(
            load: { name in
                guard let bytes = readWholeFile(atPath: "\(directory)/\(name).json") else { return nil }
                return try? JSONDecoder().decode([String: DeviceValue].self, from: Data(bytes))
            },
            save: { name, value in
                let path = "\(directory)/\(name).json"
                guard let value else {
                    if unlink(path) != 0 && errno != ENOENT { throw FileWriteError(code: errno) }
                    return
                }
                try OwnerOnlyDirectory.prepare(directory)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                try AtomicFile.replace(path, with: try encoder.encode(value))
            })
    }
}
