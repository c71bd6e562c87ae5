import DBus

/// A characteristic named by UUIDs, so it can be found again after a reconnect (object paths usually stay
/// the same for a device, but nothing promises it).
public struct CharacteristicReference: Sendable, Hashable, CustomStringConvertible {
    /// BlueZ's lower-case 128-bit form; nil to take the characteristic from any service.
    public var service: String?
    public var characteristic: String

    public init(service: String?, characteristic: String) {
        self.service = service?.lowercased()
        self.characteristic = characteristic.lowercased()
    }

    public var description: String { (service.map { $0 + "/" } ?? "") + characteristic }
}

/// What a long-lived subscription reports.
public enum SubscriptionEvent: Sendable, Equatable {
    /// Subscribed (again) after the device's services were resolved.
    case subscribed(ObjectPath)
    case value([UInt8])
    /// The link went; a new subscription follows when the device is back.
    case interrupted
    /// Subscribing failed with this error; retried on the next resolution of the services.
    case failed(BlueZError)
}

extension BlueZClient {
    /// Notifications of `reference` on `device`, for as long as the consumer iterates: whenever the device is
    /// connected with its services resolved, the characteristic is looked up and subscribed; when the link
    /// drops, `.interrupted` is reported and the subscription is made again after the next connection, with
    /// no action from the caller (Bose devices, for one, forget everything on a disconnect). Who reconnects is
    /// the caller's business; this only follows.
    public func subscription(device: ObjectPath, _ reference: CharacteristicReference,
                             method: NotifyMethod = .acquire) -> AsyncStream<SubscriptionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SubscriptionEvent.self, bufferingPolicy: .bufferingNewest(4096))
        // Unstructured: produces the returned stream; cancelled when its consumer stops (onTermination).
        let task = Task { [self] in
            while !Task.isCancelled {
                let ready: @Sendable (BlueZModel) -> Bool = { model in
                    guard let info = model.devices[device], info.connected, info.servicesResolved else { return false }
                    return model.characteristic(device: device, service: reference.service, uuid: reference.characteristic) != nil
                }
                guard await wait(timeout: .seconds(3600), until: ready) else { continue }
                if Task.isCancelled { break }
                guard let characteristic = model.characteristic(device: device, service: reference.service,
                                                                uuid: reference.characteristic) else { continue }
                do throws(BlueZError) {
                    let values = try await notifications(characteristic.path, method: method)
                    continuation.yield(.subscribed(characteristic.path))
                    for await value in values { continuation.yield(.value(value)) }
                    if Task.isCancelled { break }
                    continuation.yield(.interrupted)
                    // The socket closes a moment before BlueZ reports Connected=false: let the link settle
                    // rather than resubscribe on a connection that is going away.
                    _ = await wait(timeout: .seconds(2)) { model in !(model.devices[device]?.connected ?? false) }
                } catch {
                    continuation.yield(.failed(error))
                    // Wait for this connection to end before trying again, unless it already did.
                    _ = await wait(timeout: .seconds(5)) { model in !(model.devices[device]?.connected ?? false) }
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
