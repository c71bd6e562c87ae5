/// The device list at start, merged from config.yaml's devices and those stored by earlier requests. Pure: the
/// manager starts sessions on what it answers.
enum ManagedDeviceList {
    struct Merged: Equatable {
        /// The devices managed from now on, by id (a configured one without an id yet by its address).
        var managed: [String: ManagedDevice]
        /// Configured devices without `driver:` that no stored entry names: managed once seen advertising.
        var undetected: [ManagedDevice]
    }

    /// `configuredOptions`: the options config.yaml sets, by address; they win over the stored ones they name. A
    /// stored entry for a configured device keeps what requests changed (its id, name, options, configuration, the
    /// driver detected for it); a stored device config.yaml does not name stays managed.
    static func merge(configured: [ManagedDevice], stored: [ManagedDevice],
                      configuredOptions: [String: DeviceOptionsChange]) -> Merged {
        var all: [String: ManagedDevice] = [:]
        var undetected: [ManagedDevice] = []
        for device in configured {
            if device.needsDriverDetection, !stored.contains(where: { $0.address == device.address }) {
                undetected.append(device)
            } else {
                all[device.id.isEmpty ? device.address : device.id] = device
            }
        }
        for device in stored where !all.values.contains(where: { $0.address == device.address }) && !undetected.contains(where: { $0.address == device.address }) {
            all[device.id] = device
        }
        for device in stored {
            // A rename, options or a configuration given over MQTT to a configured device outlive a restart, and so
            // does the driver detected for one that names none.
            if let key = all.first(where: { $0.value.address == device.address && $0.value.fromConfiguration })?.key {
                var merged = all.removeValue(forKey: key)!
                merged.id = device.id
                merged.name = device.name ?? merged.name
                merged.options = configuredOptions[device.address]?.applied(to: device.options) ?? device.options
                merged.configure = device.configure ?? merged.configure
                if merged.needsDriverDetection { merged.driver = device.driver }
                all[merged.id] = merged
            }
        }
        return Merged(managed: all, undetected: undetected)
    }
}
