import BlueZ
import DBus
import FoundationEssentials
import Logging
import Wearables

/// A site of gateways (docs/roaming.md): the manager connects only what this gateway holds, keeps discovery running
/// so every gateway hears every device, and takes holds, releases and the site registry's entries.
extension DeviceManager {
    /// From now on a device is connected only once `hold` names it (docs/roaming.md). Call before `start`.
    public func joinSite(onHeard: @escaping @Sendable (_ id: String, _ rssi: Int) -> Void) {
        held = held ?? []
        self.onHeard = onHeard
        // Unstructured: listens for the site while the gateway is in one; kept in `siteListening`, cancelled on leaving.
        siteListening = Task { [weak self] in await self?.listenForTheSite() }
    }

    /// Keeps discovery running for as long as the gateway is in a site: every gateway must hear every device, the
    /// ones it does not hold above all, or the device could never move to it.
    func listenForTheSite() async {
        while !Task.isCancelled {
            if let adapter {
                siteLease = await discovery.acquire(adapter: adapter.path)
                return
            }
            let bluez = bluez, selector = adapterSelector
            _ = await bluez.wait(timeout: .seconds(5)) { _ in (try? bluez.adapter(selector)) != nil }
        }
    }

    public var holdsOnlyAssigned: Bool { held != nil }

    /// This gateway owns `id` now: stores what the previous owner handed over (its cursors and held configuration),
    /// then connects the device.
    public func hold(id: String, storage entries: [String: [String: DeviceValue]]?) {
        held?.insert(id)
        guard let device = devices[id], let address = BluetoothAddress(device.address) else { return }
        if let entries {
            let storage = DriverFileStorage.storage(stateDirectory: store.stateDirectory, address: address)
            for (name, entry) in entries.sorted(by: { $0.key < $1.key }) {
                do { try storage.save(name, entry) } catch {
                    logger.error("cannot store what the previous owner handed over", metadata: [
                        "id": "\(id)", "entry": "\(name)", "error": "\(error)"])
                }
            }
        }
        startSessionIfIdle(id)
    }

    /// Another gateway owns `id` now: stops its session (streams, a sync after the page it is committing, waiting
    /// at most `commitWait` for that) and disconnects it, then answers the driver's stored entries for the handoff;
    /// `credentials` only when `sharingCredentials`.
    public func release(id: String, sharingCredentials: Bool, commitWait: Duration) async -> [String: [String: DeviceValue]] {
        held?.remove(id)
        if let session = sessions.removeValue(forKey: id) { await session.stop(commitWait: commitWait) }
        guard let device = devices[id], let address = BluetoothAddress(device.address) else { return [:] }
        return DriverFileStorage.entries(stateDirectory: store.stateDirectory, address: address,
                                         excluding: sharingCredentials ? [] : ["credentials"])
    }

    /// A device of the site's registry that this gateway does not manage yet (added on another gateway), or a newer
    /// entry for one it does (renamed elsewhere: the old id is retired by its own registry deletion): managed from
    /// now on, and held only if assigned here. Nothing is answered and no bridge event is sent; the gateway that
    /// took the request did both.
    public func adopt(_ device: ManagedDevice) {
        if let current = devices[device.id], current == device { return }
        if let other = devices.values.first(where: { $0.address == device.address && $0.id != device.id }) {
            logger.warning("not adopting a registry entry for an address managed under another id", metadata: [
                "id": "\(device.id)", "address": "\(device.address)", "managed_as": "\(other.id)"])
            return
        }
        var list = devices
        list[device.id] = device
        do { try saveBeforeChanging(list) } catch {
            logger.error("cannot store a device of the site's registry", metadata: ["id": "\(device.id)", "error": "\(error)"])
            return
        }
        devices[device.id] = device
        if sessions[device.id] == nil { startSession(device) }
        output(.deviceListChanged)
    }
}
