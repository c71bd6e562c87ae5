#if canImport(Glibc)
import Glibc
#endif
import CDBus

/// The lean path for one kind of signal: a `PropertiesChanged` whose only change is a byte-array property of an object
/// somebody watches — a BLE characteristic's notification through BlueZ's StartNotify, thousands a second. It is read
/// straight from the message (a libdbus message with its iterators, or the bytes of the signal socket,
/// `SignalSocket`) and handed to the watch's handler: no generic value tree, no strings made, and no allocation once
/// the handler has let go of the last value (the bytes are refilled into one buffer, as `NotifyDescriptorReader`
/// refills its datagram; a handler that keeps them keeps its own copy, since refilling a shared buffer copies it
/// first). Anything else — another property or an invalidated one beside it, a sender that does not own the watched
/// name, a path nobody watches — is declined and goes the generic way, untouched.
///
/// Confined to the connection's loop thread, like the rest of `ConnectionLoop`'s state.
struct PropertyValueWatches {
    struct Watch {
        let id: UInt64
        /// The well-known name that must own the sender (`org.bluez`): signals carry the unique name.
        let sender: String
        let path: ObjectPath
        let interface: String
        let property: String
        let handler: @Sendable ([UInt8]) -> Void
    }

    /// By a hash of the object path's bytes, so a signal's path is looked up without making a String of it.
    private var byPathHash: [UInt64: [Watch]] = [:]
    private var pathHashByID: [UInt64: UInt64] = [:]
    /// The value handed to a handler, refilled for each delivery.
    private var value: [UInt8] = []

    var isEmpty: Bool { pathHashByID.isEmpty }

    mutating func add(_ watch: Watch) {
        var path = watch.path.rawValue
        let hash = path.withUTF8 { Self.hash(UnsafeRawBufferPointer($0)) }
        byPathHash[hash, default: []].append(watch)
        pathHashByID[watch.id] = hash
    }

    mutating func remove(id: UInt64) {
        guard let hash = pathHashByID.removeValue(forKey: id) else { return }
        byPathHash[hash]?.removeAll { $0.id == id }
        if byPathHash[hash]?.isEmpty == true { byPathHash[hash] = nil }
    }

    /// Hands a libdbus `message` to its watches when it is a lone byte-array change of a watched property; answers
    /// whether it was (then nothing else should see it). `owner` gives the unique name that owns a well-known name now.
    mutating func deliver(_ message: OpaquePointer, owner: (String) -> String?) -> Bool {
        guard dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_SIGNAL,
              let member = dbus_message_get_member(message), Self.bytes(member, equal: "PropertiesChanged"),
              let interface = dbus_message_get_interface(message), Self.bytes(interface, equal: "org.freedesktop.DBus.Properties"),
              let path = dbus_message_get_path(message).map(Self.bytes),
              let watches = byPathHash[Self.hash(path)],
              let sender = dbus_message_get_sender(message).map(Self.bytes),
              let change = LoneByteArrayChange(message)
        else { return false }
        return deliver(change, path: path, sender: sender, to: watches, owner: owner)
    }

    /// The same for a message read off the signal socket.
    mutating func deliver(_ message: WireMessage, owner: (String) -> String?) -> Bool {
        guard message.type == WireMessage.MessageType.signal.rawValue,
              WireMessage.field(message.member, is: "PropertiesChanged"),
              WireMessage.field(message.interface, is: "org.freedesktop.DBus.Properties"),
              let path = message.path, let watches = byPathHash[Self.hash(path)],
              let sender = message.sender, let change = LoneByteArrayChange(message)
        else { return false }
        return deliver(change, path: path, sender: sender, to: watches, owner: owner)
    }

    /// The watches are read in place by index: `for watch in watches` copied each, retaining its four strings and its
    /// handler, for every signal.
    private mutating func deliver(_ change: LoneByteArrayChange, path: UnsafeRawBufferPointer, sender: UnsafeRawBufferPointer,
                                  to watches: [Watch], owner: (String) -> String?) -> Bool {
        var delivered = false
        for index in watches.indices where Self.equal(path, watches[index].path.rawValue)
            && Self.equal(change.interface, watches[index].interface) && Self.equal(change.property, watches[index].property) {
            guard let unique = owner(watches[index].sender), Self.equal(sender, unique) else { continue }
            value.removeAll(keepingCapacity: true)
            value.append(contentsOf: change.value)
            watches[index].handler(value)
            delivered = true
        }
        return delivered
    }

    /// FNV-1a over a path's bytes.
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    private static func bytes(_ text: UnsafePointer<CChar>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: text, count: strlen(text))
    }

    private static func bytes(_ text: UnsafePointer<CChar>, equal expected: StaticString) -> Bool {
        WireMessage.field(bytes(text), is: expected)
    }

    /// Over the string's own bytes (every native string has them contiguous), without the copy `withUTF8` needs.
    private static func equal(_ bytes: UnsafeRawBufferPointer, _ expected: String) -> Bool {
        func equal(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
            utf8.count == bytes.count && (utf8.isEmpty || memcmp(bytes.baseAddress!, utf8.baseAddress!, utf8.count) == 0)
        }
        return expected.utf8.withContiguousStorageIfAvailable(equal) ?? Array(expected.utf8).withUnsafeBufferPointer(equal)
    }
}

/// `PropertiesChanged(s interface, a{sv} changed, as invalidated)` when `changed` holds exactly one entry, a byte array,
/// and nothing is invalidated; the views point into the message, valid while it is.
public struct LoneByteArrayChange {
    public let interface: UnsafeRawBufferPointer
    public let property: UnsafeRawBufferPointer
    public let value: UnsafeRawBufferPointer

    /// From a libdbus message, through its iterators.
    public init?(_ message: OpaquePointer) {
        var arguments = DBusMessageIter()
        guard dbus_message_iter_init(message, &arguments) != 0,
              dbus_message_iter_get_arg_type(&arguments) == TypeCode.string else { return nil }
        var interface: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&arguments, &interface)
        guard let interface, dbus_message_iter_next(&arguments) != 0,
              dbus_message_iter_get_arg_type(&arguments) == TypeCode.array else { return nil }
        var changed = DBusMessageIter(), entry = DBusMessageIter(), value = DBusMessageIter()
        dbus_message_iter_recurse(&arguments, &changed)
        guard dbus_message_iter_get_arg_type(&changed) == TypeCode.dictionaryEntry else { return nil }
        dbus_message_iter_recurse(&changed, &entry)
        guard dbus_message_iter_get_arg_type(&entry) == TypeCode.string else { return nil }
        var property: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&entry, &property)
        guard let property, dbus_message_iter_next(&entry) != 0,
              dbus_message_iter_get_arg_type(&entry) == TypeCode.variant else { return nil }
        dbus_message_iter_recurse(&entry, &value)
        guard dbus_message_iter_get_arg_type(&value) == TypeCode.array,
              dbus_message_iter_get_element_type(&value) == TypeCode.byte,
              // The only change, and nothing invalidated (an empty `as`, or none at all).
              dbus_message_iter_next(&changed) == 0 else { return nil }
        if dbus_message_iter_next(&arguments) != 0 {
            guard dbus_message_iter_get_arg_type(&arguments) == TypeCode.array,
                  dbus_message_iter_get_element_type(&arguments) == TypeCode.string else { return nil }
            var invalidated = DBusMessageIter()
            dbus_message_iter_recurse(&arguments, &invalidated)
            guard dbus_message_iter_get_arg_type(&invalidated) == 0 else { return nil }
        }
        var bytes = DBusMessageIter()
        dbus_message_iter_recurse(&value, &bytes)
        var start: UnsafePointer<UInt8>?
        var count: Int32 = 0
        if dbus_message_iter_get_arg_type(&bytes) == TypeCode.byte {
            dbus_message_iter_get_fixed_array(&bytes, &start, &count)
        }
        self.interface = UnsafeRawBufferPointer(start: interface, count: strlen(interface))
        self.property = UnsafeRawBufferPointer(start: property, count: strlen(property))
        self.value = UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : Int(count))
    }

    /// From a message's bytes: the body laid out as the specification's marshalling rules say, for the signature
    /// `sa{sv}as` (or `sa{sv}`), with the one entry's variant of signature `ay`.
    public init?(_ message: WireMessage) {
        guard let signature = message.signature,
              WireMessage.field(signature, is: "sa{sv}as") || WireMessage.field(signature, is: "sa{sv}") else { return nil }
        var body = message.bodyReader
        guard let interface = body.string(), let changedLength = body.uint32().map(Int.init),
              // Dictionary entries align to 8, even when there are none.
              body.align(8) else { return nil }
        let changedEnd = body.position + changedLength
        guard changedLength > 0, changedEnd <= body.end, let property = body.string(),
              let valueSignature = body.signature(), WireMessage.field(valueSignature, is: "ay"),
              let value = body.byteArray(), body.position == changedEnd else { return nil }
        if WireMessage.field(signature, is: "sa{sv}as") {
            guard body.uint32() == 0 else { return nil }
        }
        guard body.position == body.end else { return nil }
        self.interface = interface
        self.property = property
        self.value = value
    }
}
