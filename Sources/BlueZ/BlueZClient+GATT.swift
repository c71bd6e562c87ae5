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

    /// Notifications handed to `handler` one at a time. Through AcquireNotify, `handler` runs on the event loop
    /// that reads the socket, as each datagram is read (no task, no hand-off: in the daemon the same loop publishes
    /// the sample); through StartNotify, on the D-Bus connection's loop as the signal is dispatched (the same loop
    /// in the daemon).
    public func subscribe(_ characteristic: ObjectPath, method: NotifyMethod,
                          handler: @escaping @Sendable ([UInt8]) -> Void) async throws(BlueZError) -> NotificationSubscription {
        if method == .acquire, let notifyReader, let fd = try await acquireNotify(characteristic) {
            let delivery = Mutex<NotifyDescriptorReader.Delivery?>(nil)
            let subscription = NotificationSubscription { delivery.withLock { $0?.cancel() } }
            delivery.withLock { $0 = notifyReader.deliver(fd, handler: handler, ended: { subscription.finish() }) }
            return subscription
        }
        let stop = Mutex<(@Sendable () -> Void)?>(nil)
        let subscription = NotificationSubscription { stop.withLock { $0 }?() }
        let stopNotify = try await startNotify(characteristic, handler: handler, ended: { subscription.finish() })
        stop.withLock { $0 = stopNotify }
        if subscription.isEnded { stopNotify() }  // cancelled while StartNotify was on its way
        return subscription
    }

    /// The characteristic's notifications (or indications) until the link drops or the consumer stops.
    ///
    /// With `.acquire`, BlueZ hands over a socket; if it refuses (some peripherals and BlueZ versions do), this
    /// falls back to StartNotify. The stream finishes when the link goes (the socket closes, or the
    /// characteristic's object is removed); `DeviceSubscription` resubscribes after a reconnect.
    public func notifications(_ characteristic: ObjectPath,
                              method: NotifyMethod = .acquire) async throws(BlueZError) -> AsyncStream<[UInt8]> {
        if method == .acquire, let notifyReader, let fd = try await acquireNotify(characteristic) {
            return notifyReader.stream(fd)
        }
        return try await startNotifyStream(characteristic)
    }

    /// AcquireNotify's socket, or nil when BlueZ refused it or gave none (the caller falls back to StartNotify).
    /// Throws only `notConnected`, which StartNotify would meet too.
    private func acquireNotify(_ characteristic: ObjectPath) async throws(BlueZError) -> UnixFileDescriptor? {
        do {
            let reply = try await call(characteristic, BlueZNames.gattCharacteristic, "AcquireNotify",
                                       [.stringVariantDictionary([:])])
            if let fd = reply.first?.unixFDValue { return fd }
            logAcquireRefusal(characteristic, reason: "no descriptor")
        } catch .notConnected {
            throw .notConnected
        } catch {
            logAcquireRefusal(characteristic, reason: error.shortName)
        }
        return nil
    }

    /// Once per characteristic, at debug: falling back to StartNotify is normal for some peripherals, not news.
    private func logAcquireRefusal(_ characteristic: ObjectPath, reason: String) {
        guard state.withLock({ $0.acquireRefusalsLogged.insert(characteristic).inserted }) else { return }
        logger.debug("AcquireNotify refused; using StartNotify", metadata: ["characteristic": "\(characteristic)", "error": "\(reason)"])
    }

    /// StartNotify: `handler` gets every `Value` change as the connection dispatches it (on its event loop) until
    /// the answered closure is called (which calls StopNotify) or the characteristic goes away (then `ended`).
    private func startNotify(_ characteristic: ObjectPath, handler: @escaping @Sendable ([UInt8]) -> Void,
                             ended: @escaping @Sendable () -> Void) async throws(BlueZError) -> @Sendable () -> Void {
        // A lone Value change is read straight from the signal to the handler (the bus connection's watch); one that
        // changes more than Value reaches the model and the handler from there (`onValueChange`).
        let stopRoute = onValueChange(of: characteristic, handler)
        let stopWatch: @Sendable () -> Void
        do {
            stopWatch = try await connection.watchByteArrayProperty("Value", of: BlueZNames.gattCharacteristic,
                                                                    at: characteristic, sender: BlueZNames.service,
                                                                    handler: handler)
        } catch {
            stopRoute()
            throw BlueZError(error)
        }
        let gone = events()
        do {
            _ = try await call(characteristic, BlueZNames.gattCharacteristic, "StartNotify")
        } catch {
            stopWatch()
            stopRoute()
            throw error
        }
        // Unstructured: ends the subscription when BlueZ removes the characteristic; cancelled with the subscription.
        let watch = Task { [self] in
            for await _ in gone where model.characteristics[characteristic] == nil {
                stopWatch()
                stopRoute()
                ended()
                return
            }
        }
        return { [self] in
            stopWatch()
            stopRoute()
            watch.cancel()
            if model.characteristics[characteristic] != nil {
                // Unstructured: a subscription's cancel is synchronous (any thread); StopNotify is a D-Bus call.
                Task { _ = try? await self.call(characteristic, BlueZNames.gattCharacteristic, "StopNotify") }
            }
        }
    }

    private func startNotifyStream(_ characteristic: ObjectPath) async throws(BlueZError) -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(4096))
        let stop = try await startNotify(characteristic, handler: { continuation.yield($0) }, ended: { continuation.finish() })
        continuation.onTermination = { _ in stop() }
        return stream
    }
}
