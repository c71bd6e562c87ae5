import Wearables

/// What a site's coordinator does with this gateway's devices: hold and release them for handovers, adopt and remove
/// the registry's entries. `DeviceManager` in the gateway; in tests a recorder that shows in which order it was asked.
public protocol SiteDeviceControl: AnyObject, Sendable {
    var managedDevices: [ManagedDevice] { get async }
    /// One managed device by its id (any case), without listing them all.
    func device(_ id: String) async -> ManagedDevice?
    func connectionState(id: String) async -> ConnectionState
    func hold(id: String, storage entries: [String: [String: DeviceValue]]?) async
    func release(id: String, sharingCredentials: Bool, commitWait: Duration) async -> [String: [String: DeviceValue]]
    func adopt(_ device: ManagedDevice) async
    func remove(id: String, announce: Bool) async throws(CommandError)
}

extension DeviceManager: SiteDeviceControl {}
