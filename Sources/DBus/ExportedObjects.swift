import Synchronization

/// A method an exported interface offers. `inputSignature` is checked before the handler runs (nil accepts
/// anything); the handler's reply must match `outputSignature`.
public struct MethodDefinition: Sendable {
    public var name: String
    public var inputSignature: String?
    public var outputSignature: String
    public var handler: @Sendable (MethodCall) async throws(BusError) -> [DBusValue]

    public init(_ name: String, input: String? = "", output: String = "",
                handler: @escaping @Sendable (MethodCall) async throws(BusError) -> [DBusValue]) {
        self.name = name
        self.inputSignature = input
        self.outputSignature = output
        self.handler = handler
    }
}

/// A property of an exported interface. A writable one calls `onSet` first, which may refuse the value.
public struct PropertyDefinition: Sendable {
    public enum Access: String, Sendable { case read, readwrite }

    public var name: String
    public var signature: String
    public var access: Access
    public var onSet: (@Sendable (DBusValue) async throws(BusError) -> Void)?

    public init(_ name: String, signature: String, access: Access = .read,
                onSet: (@Sendable (DBusValue) async throws(BusError) -> Void)? = nil) {
        self.name = name
        self.signature = signature
        self.access = access
        self.onSet = onSet
    }
}

/// A signal of an exported interface (listed for introspection; emitted with `ExportedObject.emit`).
public struct SignalDefinition: Sendable {
    public var name: String
    public var signature: String

    public init(_ name: String, signature: String = "") {
        self.name = name
        self.signature = signature
    }
}

public struct InterfaceDefinition: Sendable {
    public var name: String
    public var methods: [MethodDefinition]
    public var properties: [PropertyDefinition]
    public var signals: [SignalDefinition]

    public init(_ name: String, methods: [MethodDefinition] = [], properties: [PropertyDefinition] = [],
                signals: [SignalDefinition] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }
}

/// Sends on behalf of exported objects; shared so objects need no reference back to the registry.
final class ExportSender: Sendable {
    /// The closure lives in a class: copying a bare closure out of the `Mutex` on every message wrapped it in
    /// one more reabstraction thunk each time, so every message sent made the next one slower.
    private final class Attached: Sendable {
        let send: @Sendable (OutgoingBusMessage) -> Void
        init(_ send: @escaping @Sendable (OutgoingBusMessage) -> Void) { self.send = send }
    }

    private let attached = Mutex<Attached?>(nil)

    func attach(_ send: @escaping @Sendable (OutgoingBusMessage) -> Void) { attached.withLock { $0 = Attached(send) } }

    /// Drops the send closure, which holds the connection's loop: once the connection has closed, nothing is sent,
    /// and the loop (holding this registry through its method-call handler) can be freed.
    func detach() { attached.withLock { $0 = nil } }

    func callAsFunction(_ message: OutgoingBusMessage) {
        guard (try? message.body.forEach(MessageCoding.validate)) != nil else { return }
        attached.withLock { $0 }?.send(message)
    }
}

/// An object this process exports: its interfaces and their current property values. Setting a property
/// emits `PropertiesChanged` when the value changed.
public final class ExportedObject: Sendable {
    public let path: ObjectPath
    private let sender: ExportSender
    private let interfaces: Mutex<[String: (definition: InterfaceDefinition, values: [String: DBusValue])]>
    private let order: Mutex<[String]>

    init(path: ObjectPath, sender: ExportSender) {
        self.path = path
        self.sender = sender
        interfaces = Mutex([:])
        order = Mutex([])
    }

    func add(_ definition: InterfaceDefinition, values: [String: DBusValue]) {
        interfaces.withLock { $0[definition.name] = (definition, values) }
        order.withLock { names in if !names.contains(definition.name) { names.append(definition.name) } }
    }

    func remove(interface name: String) -> Bool {
        order.withLock { $0.removeAll { $0 == name } }
        return interfaces.withLock { $0.removeValue(forKey: name) } != nil
    }

    public var interfaceNames: [String] { order.withLock { $0 } }

    func definition(of interface: String) -> InterfaceDefinition? {
        interfaces.withLock { $0[interface]?.definition }
    }

    public func property(_ name: String, interface: String) -> DBusValue? {
        interfaces.withLock { $0[interface]?.values[name] }
    }

    public func properties(of interface: String) -> [String: DBusValue]? {
        interfaces.withLock { $0[interface]?.values }
    }

    /// Sets properties and emits one `PropertiesChanged` for those that changed.
    public func setProperties(_ values: [String: DBusValue], interface: String) {
        let changed: [String: DBusValue] = interfaces.withLock { all in
            guard var entry = all[interface] else { return [:] }
            var changed: [String: DBusValue] = [:]
            for (name, value) in values where entry.values[name] != value {
                entry.values[name] = value
                changed[name] = value
            }
            all[interface] = entry
            return changed
        }
        guard !changed.isEmpty else { return }
        emit(signal: "PropertiesChanged", interface: "org.freedesktop.DBus.Properties",
             arguments: [.string(interface), .stringVariantDictionary(changed), .strings([])])
    }

    public func setProperty(_ name: String, _ value: DBusValue, interface: String) {
        setProperties([name: value], interface: interface)
    }

    /// Sets a property even when the value is unchanged, emitting `PropertiesChanged` anyway: a GATT
    /// notification of the same bytes twice is two notifications.
    public func pushProperty(_ name: String, _ value: DBusValue, interface: String) {
        interfaces.withLock { $0[interface]?.values[name] = value }
        emit(signal: "PropertiesChanged", interface: "org.freedesktop.DBus.Properties",
             arguments: [.string(interface), .stringVariantDictionary([name: value]), .strings([])])
    }

    public func emit(signal: String, interface: String, arguments: [DBusValue], destination: String? = nil) {
        sender(OutgoingBusMessage(kind: .signal(path: path, interface: interface, member: signal,
                                                destination: destination), body: arguments))
    }

    /// `a{sa{sv}}`: every interface with its properties, as ObjectManager reports it. Includes the standard
    /// Introspectable and Properties interfaces with no properties, as BlueZ does.
    var managedInterfaces: DBusValue {
        let snapshot = interfaces.withLock { $0 }
        var entries = [DBusValue.DictionaryEntry(.string("org.freedesktop.DBus.Introspectable"), .stringVariantDictionary([:])),
                       DBusValue.DictionaryEntry(.string("org.freedesktop.DBus.Properties"), .stringVariantDictionary([:]))]
        for name in interfaceNames {
            guard let entry = snapshot[name] else { continue }
            entries.append(.init(.string(name), .stringVariantDictionary(entry.values)))
        }
        return .dictionary(keySignature: "s", valueSignature: "a{sv}", entries)
    }
}

/// The objects a connection exports, with org.freedesktop.DBus.Properties, ObjectManager (at the roots
/// given to `addObjectManager`) and Introspectable implemented once for all of them.
public final class ObjectRegistry: Sendable {
    private let sender = ExportSender()
    private let objects = Mutex<[ObjectPath: ExportedObject]>([:])
    private let managers = Mutex<Set<ObjectPath>>([])

    init() {}

    func attach(send: @escaping @Sendable (OutgoingBusMessage) -> Void) { sender.attach(send) }

    /// Called when the connection has closed: drops the sender (see `ExportSender.detach`) and every exported
    /// object, whose handlers a closed connection can never call again. An exporter's handlers usually hold the
    /// exporter, which holds the connection, which holds this registry: without this, a closed connection and its
    /// exporter (an in-process simulator) kept each other alive (LeakSanitizer, issue 24).
    func detach() {
        sender.detach()
        objects.withLock { $0 = [:] }
        managers.withLock { $0 = [] }
    }

    /// Makes `path` an ObjectManager: GetManagedObjects lists everything below it, and objects added or
    /// removed below it are announced with InterfacesAdded / InterfacesRemoved.
    public func addObjectManager(at path: ObjectPath) {
        managers.withLock { _ = $0.insert(path) }
    }

    public func object(at path: ObjectPath) -> ExportedObject? { objects.withLock { $0[path] } }

    public var paths: [ObjectPath] { objects.withLock { Array($0.keys) }.sorted() }

    /// Exports `interfaces` at `path` (adding to an object already there) with their initial property values.
    @discardableResult
    public func export(_ path: ObjectPath, interfaces: [(InterfaceDefinition, [String: DBusValue])]) -> ExportedObject {
        let object = objects.withLock { all in
            if let existing = all[path] { return existing }
            let created = ExportedObject(path: path, sender: sender)
            all[path] = created
            return created
        }
        for (definition, values) in interfaces { object.add(definition, values: values) }
        if let manager = manager(of: path) {
            let added = DBusValue.dictionary(
                keySignature: "s", valueSignature: "a{sv}",
                interfaces.map { .init(.string($0.0.name), .stringVariantDictionary($0.1)) })
            sender(OutgoingBusMessage(kind: .signal(path: manager, interface: "org.freedesktop.DBus.ObjectManager",
                                                    member: "InterfacesAdded", destination: nil),
                                      body: [.objectPath(path), added]))
        }
        return object
    }

    /// Removes interfaces from the object at `path` (the whole object when none are left).
    public func remove(interfaces names: [String], from path: ObjectPath) {
        guard let object = object(at: path) else { return }
        let removed = names.filter { object.remove(interface: $0) }
        if object.interfaceNames.isEmpty { objects.withLock { _ = $0.removeValue(forKey: path) } }
        if !removed.isEmpty, let manager = manager(of: path) {
            sender(OutgoingBusMessage(kind: .signal(path: manager, interface: "org.freedesktop.DBus.ObjectManager",
                                                    member: "InterfacesRemoved", destination: nil),
                                      body: [.objectPath(path), .strings(removed)]))
        }
    }

    /// Removes the object at `path` and everything below it, announcing each removal.
    public func unexport(_ path: ObjectPath) {
        let doomed = objects.withLock { $0.keys.filter { $0.isDescendant(of: path) } }.sorted(by: >)
        for victim in doomed {
            remove(interfaces: object(at: victim)?.interfaceNames ?? [], from: victim)
        }
    }

    private func manager(of path: ObjectPath) -> ObjectPath? {
        managers.withLock { roots in
            roots.filter { path != $0 && path.isDescendant(of: $0) }.max { $0.rawValue.count < $1.rawValue.count }
        }
    }

    // MARK: Dispatch (loop thread)

    func dispatch(_ message: BusMessage) {
        guard let path = message.path, let member = message.member, let sender = message.sender else { return }
        let call = MethodCall(sender: sender, path: path, interface: message.interface ?? "", member: member,
                              arguments: message.body)
        let reply: @Sendable (Result<[DBusValue], BusError>) -> Void = { [self] result in
            guard !message.noReplyExpected else { return }
            switch result {
            case .success(let values):
                self.sender(OutgoingBusMessage(kind: .methodReturn(replySerial: message.serial, destination: sender), body: values))
            case .failure(let error):
                let (name, text) = error.remoteName.map { ($0, Self.text(of: error)) }
                    ?? ("org.freedesktop.DBus.Error.Failed", error.description)
                self.sender(OutgoingBusMessage(kind: .error(replySerial: message.serial, destination: sender,
                                                            name: name, message: text), body: []))
            }
        }
        switch (call.interface, member) {
        case ("org.freedesktop.DBus.Introspectable", "Introspect"):
            reply(.success([.string(introspect(path))]))
        case ("org.freedesktop.DBus.Peer", "Ping"):
            reply(.success([]))
        case ("org.freedesktop.DBus.ObjectManager", "GetManagedObjects"):
            guard managers.withLock({ $0.contains(path) }) else {
                reply(.failure(.unknownMethod("\(path) is not an object manager")))
                return
            }
            reply(.success([managedObjects(below: path)]))
        case ("org.freedesktop.DBus.Properties", _):
            properties(call, reply: reply)
        default:
            guard let object = object(at: path) else {
                reply(.failure(.unknownObject("no object at \(path)")))
                return
            }
            let candidates = call.interface.isEmpty ? object.interfaceNames : [call.interface]
            guard let (interface, method) = candidates.lazy.compactMap({ name in
                object.definition(of: name)?.methods.first { $0.name == member }.map { (name, $0) }
            }).first else {
                if !call.interface.isEmpty, object.definition(of: call.interface) == nil {
                    reply(.failure(.unknownInterface("\(path) has no interface \(call.interface)")))
                } else {
                    reply(.failure(.unknownMethod("\(call.interface).\(member) is not a method of \(path)")))
                }
                return
            }
            if let expected = method.inputSignature, expected != call.signature {
                reply(.failure(.invalidArgs("\(interface).\(member) takes (\(expected)), got (\(call.signature))")))
                return
            }
            var resolved = call
            resolved.interface = interface
            // Unstructured: dispatch is synchronous on the loop thread; the async handler's reply goes back through `sender`.
            Task {
                do throws(BusError) {
                    let values = try await method.handler(resolved)
                    let signature = values.map(\.signature).joined()
                    guard signature == method.outputSignature else {
                        reply(.failure(.failed("\(interface).\(member) produced (\(signature)), declared (\(method.outputSignature))")))
                        return
                    }
                    reply(.success(values))
                } catch {
                    reply(.failure(error))
                }
            }
        }
    }

    private static func text(of error: BusError) -> String {
        if case .remote(_, let message) = error { return message }
        return error.description
    }

    private func properties(_ call: MethodCall, reply: @escaping @Sendable (Result<[DBusValue], BusError>) -> Void) {
        guard let object = object(at: call.path) else {
            reply(.failure(.unknownObject("no object at \(call.path)")))
            return
        }
        let interfaceName = call.arguments.first?.stringValue ?? ""
        guard let definition = object.definition(of: interfaceName) else {
            reply(.failure(.unknownInterface("\(call.path) has no interface \(interfaceName)")))
            return
        }
        switch (call.member, call.signature) {
        case ("GetAll", "s"):
            reply(.success([.stringVariantDictionary(object.properties(of: interfaceName) ?? [:])]))
        case ("Get", "ss"):
            let name = call.arguments[1].stringValue ?? ""
            guard let value = object.property(name, interface: interfaceName) else {
                reply(.failure(.unknownProperty("\(interfaceName).\(name) does not exist")))
                return
            }
            reply(.success([.variant(value)]))
        case ("Set", "ssv"):
            let name = call.arguments[1].stringValue ?? ""
            let value = call.arguments[2].unwrapped
            guard let property = definition.properties.first(where: { $0.name == name }) else {
                reply(.failure(.unknownProperty("\(interfaceName).\(name) does not exist")))
                return
            }
            guard property.access == .readwrite else {
                reply(.failure(.propertyReadOnly("\(interfaceName).\(name) is read-only")))
                return
            }
            guard value.signature == property.signature else {
                reply(.failure(.invalidArgs("\(interfaceName).\(name) is \(property.signature), got \(value.signature)")))
                return
            }
            // Unstructured: as above, for an async property setter.
            Task {
                do throws(BusError) {
                    try await property.onSet?(value)
                    object.setProperty(name, value, interface: interfaceName)
                    reply(.success([]))
                } catch {
                    reply(.failure(error))
                }
            }
        default:
            reply(.failure(.unknownMethod("org.freedesktop.DBus.Properties.\(call.member)(\(call.signature))")))
        }
    }

    private func managedObjects(below root: ObjectPath) -> DBusValue {
        let all = objects.withLock { $0 }
        let entries = all.filter { $0.key != root && $0.key.isDescendant(of: root) }
            .sorted { $0.key < $1.key }
            .map { DBusValue.DictionaryEntry(.objectPath($0.key), $0.value.managedInterfaces) }
        return .dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", entries)
    }

    /// Introspection XML: the object's interfaces and the next level of child nodes.
    private func introspect(_ path: ObjectPath) -> String {
        var xml = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <interface name="org.freedesktop.DBus.Introspectable"><method name="Introspect"><arg name="xml" type="s" direction="out"/></method></interface>

        """
        if let object = object(at: path) {
            xml += """
              <interface name="org.freedesktop.DBus.Properties">
                <method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>
                <method name="Set"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="in"/></method>
                <method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>
                <signal name="PropertiesChanged"><arg type="s"/><arg type="a{sv}"/><arg type="as"/></signal>
              </interface>

            """
            for name in object.interfaceNames {
                guard let definition = object.definition(of: name) else { continue }
                xml += "  <interface name=\"\(name)\">\n"
                for method in definition.methods {
                    xml += "    <method name=\"\(method.name)\">"
                    xml += Self.arguments(method.inputSignature ?? "", direction: "in")
                    xml += Self.arguments(method.outputSignature, direction: "out")
                    xml += "</method>\n"
                }
                for property in definition.properties {
                    xml += "    <property name=\"\(property.name)\" type=\"\(property.signature)\" access=\"\(property.access.rawValue)\"/>\n"
                }
                for signal in definition.signals {
                    xml += "    <signal name=\"\(signal.name)\">\(Self.arguments(signal.signature, direction: nil))</signal>\n"
                }
                xml += "  </interface>\n"
            }
        }
        if managers.withLock({ $0.contains(path) }) {
            xml += """
              <interface name="org.freedesktop.DBus.ObjectManager">
                <method name="GetManagedObjects"><arg type="a{oa{sa{sv}}}" direction="out"/></method>
                <signal name="InterfacesAdded"><arg type="o"/><arg type="a{sa{sv}}"/></signal>
                <signal name="InterfacesRemoved"><arg type="o"/><arg type="as"/></signal>
              </interface>

            """
        }
        let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
        let children = Set(paths.filter { $0.rawValue.hasPrefix(prefix) && $0 != path }.compactMap {
            $0.rawValue.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
        })
        for child in children.sorted() { xml += "  <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }

    /// One `<arg>` per complete type in `signature`.
    private static func arguments(_ signature: String, direction: String?) -> String {
        SignatureSplitter.completeTypes(signature).map { type in
            "<arg type=\"\(type)\"" + (direction.map { " direction=\"\($0)\"" } ?? "") + "/>"
        }.joined()
    }
}

/// Splits a signature into its complete types: `sa{sv}(ii)` → `s`, `a{sv}`, `(ii)`.
enum SignatureSplitter {
    static func completeTypes(_ signature: String) -> [String] {
        let characters = Array(signature)
        var types: [String] = []
        var index = 0
        while index < characters.count {
            let start = index
            index = end(of: characters, from: index)
            types.append(String(characters[start..<index]))
        }
        return types
    }

    private static func end(of characters: [Character], from start: Int) -> Int {
        guard start < characters.count else { return start }
        switch characters[start] {
        case "a": return end(of: characters, from: start + 1)
        case "(", "{":
            var depth = 0
            var index = start
            while index < characters.count {
                if characters[index] == "(" || characters[index] == "{" { depth += 1 }
                if characters[index] == ")" || characters[index] == "}" { depth -= 1 }
                index += 1
                if depth == 0 { return index }
            }
            return index
        default: return start + 1
        }
    }
}
