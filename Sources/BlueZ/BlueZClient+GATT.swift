import DBus
import Synchronization

/// How notifications reach us.
public enum NotifyMethod: Sendable, Equatable {
    /// AcquireNotify: a socket per characteristic, bypassing the bus daemon. Preferred for high rates.
    case acquire
    /// StartNotify: values as PropertiesChanged signals through the bus. Works with every peripheral.
    case startNotify
}

extension BlueZClient {
    public func read(_ characteristic: ObjectPath, offset: UInt16, timeout: Duration) async throws(BlueZError) -> [UInt8] {
        var options: [String: DBusValue] = [:]
        if offset > 0 { options["offset"] = .uint16(offset) }
        let reply = try await call(characteristic, BlueZNames.gattCharacteristic, "ReadValue",
                                   [.stringVariantDictionary(options)], timeout: timeout)
        guard let bytes = reply.first?.bytesValue else {
            throw .failed(name: "org.freedesktop.DBus.Error.InvalidSignature", message: "ReadValue returned \(reply)")
        }
        return bytes
    }

    /// Writes with response ("request") or without ("command").
    public func write(_ characteristic: ObjectPath, _ bytes: [UInt8], withResponse: Bool,
                      timeout: Duration) async throws(BlueZError) {
        _ = try await call(characteristic, BlueZNames.gattCharacteristic, "WriteValue",
                           [.bytes(bytes), .stringVariantDictionary(["type": .string(withResponse ? "request" : "command")])],
                           timeout: timeout)
    }

    public func readDescriptor(_ descriptor: ObjectPath) async throws(BlueZError) -> [UInt8] {
        let reply = try await call(descriptor, BlueZNames.gattDescriptor, "ReadValue", [.stringVariantDictionary([:])])
        return reply.first?.bytesValue ?? []
    }

    /// `notifications` handed to `handler` one at a time. (Issue 21 moves this onto the event loop that reads the
    /// socket; until then one task per subscription forwards the stream.)
    public func subscribe(_ characteristic: ObjectPath, method: NotifyMethod,
                          handler: @escaping @Sendable ([UInt8]) -> Void) async throws(BlueZError) -> NotificationSubscription {
        let values = try await notifications(characteristic, method: method)
        let pump = Mutex<Task<Void, Never>?>(nil)
        let subscription = NotificationSubscription { pump.withLock { $0?.cancel() } }
        pump.withLock { $0 = Task {
            for await value in values { handler(value) }
            subscription.finish()
        } }
        return subscription
    }

    /// The characteristic's notifications (or indications) until the link drops or the consumer stops.
    ///
    /// With `.acquire`, BlueZ hands over a socket; if it refuses (some peripherals and BlueZ versions do), this
    /// falls back to StartNotify. The stream finishes when the link goes (the socket closes, or the
    /// characteristic's object is removed); `DeviceSubscription` resubscribes after a reconnect.
    public func notifications(_ characteristic: ObjectPath,
                              method: NotifyMethod = .acquire) async throws(BlueZError) -> AsyncStream<[UInt8]> {
        if method == .acquire {
            do {
                let reply = try await call(characteristic, BlueZNames.gattCharacteristic, "AcquireNotify",
                                           [.stringVariantDictionary([:])])
                if let fd = reply.first?.unixFDValue {
                    if let stream = notifyReader.stream(fd) { return stream }
                    // Dropping the descriptor closes it, which ends BlueZ's side of the acquired notify.
                    logger.warning("the notify reader has no wake pipe; using StartNotify",
                                   metadata: ["characteristic": "\(characteristic)"])
                } else {
                    logger.info("AcquireNotify gave no descriptor; using StartNotify", metadata: ["characteristic": "\(characteristic)"])
                }
            } catch .notConnected {
                throw .notConnected
            } catch {
                logger.info("AcquireNotify refused; using StartNotify",
                            metadata: ["characteristic": "\(characteristic)", "reason": "\(error)"])
            }
        }
        return try await startNotifyStream(characteristic)
    }

    private func startNotifyStream(_ characteristic: ObjectPath) async throws(BlueZError) -> AsyncStream<[UInt8]> {
        let values = valueChanges(of: characteristic)
        let gone = events()
        _ = try await call(characteristic, BlueZNames.gattCharacteristic, "StartNotify")
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(4096))
        let forward = Task {
            for await value in values { continuation.yield(value) }
            continuation.finish()
        }
        let watch = Task { [self] in
            for await _ in gone where model.characteristics[characteristic] == nil {
                break
            }
            continuation.finish()
        }
        continuation.onTermination = { [self] _ in
            forward.cancel()
            watch.cancel()
            if model.characteristics[characteristic] != nil {
                Task { _ = try? await self.call(characteristic, BlueZNames.gattCharacteristic, "StopNotify") }
            }
        }
        return stream
    }
}
