#if canImport(Glibc)
import Glibc
#endif
import CDBus

/// The lean path for one kind of signal: a `PropertiesChanged` whose only change is a byte-array property of an object
/// somebody watches — a BLE characteristic's notification through BlueZ's StartNotify, thousands a second. It is read
/// straight from the libdbus message with its iterators and handed to the watch's handler: no generic value tree, no
/// strings made, one allocation (the bytes the handler keeps). Anything else — another property or an invalidated one
/// beside it, a sender that does not own the watched name, a path nobody watches — is declined and goes the generic way,
/// untouched.
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

    private static let propertiesInterface = "org.freedesktop.DBus.Properties"
    private static let propertiesChanged = "PropertiesChanged"

    /// By a hash of the object path's bytes, so a signal's path is looked up without making a String of it.
    private var byPathHash: [UInt64: [Watch]] = [:]
    private var pathHashByID: [UInt64: UInt64] = [:]

    var isEmpty: Bool { pathHashByID.isEmpty }

    mutating func add(_ watch: Watch) {
        var path = watch.path.rawValue
        let hash = path.withUTF8 { Self.hash($0) }
        byPathHash[hash, default: []].append(watch)
        pathHashByID[watch.id] = hash
    }

    mutating func remove(id: UInt64) {
        guard let hash = pathHashByID.removeValue(forKey: id) else { return }
        byPathHash[hash]?.removeAll { $0.id == id }
        if byPathHash[hash]?.isEmpty == true { byPathHash[hash] = nil }
    }

    /// Hands `message` to its watches when it is a lone byte-array change of a watched property; answers whether it
    /// was (then nothing else should see it). `owner` gives the unique name that owns a well-known name now.
    func deliver(_ message: OpaquePointer, owner: (String) -> String?) -> Bool {
        guard dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_SIGNAL,
              let member = dbus_message_get_member(message), Self.equal(member, Self.propertiesChanged),
              let interface = dbus_message_get_interface(message), Self.equal(interface, Self.propertiesInterface),
              let rawPath = dbus_message_get_path(message),
              let watches = byPathHash[Self.hash(UnsafeBufferPointer(start: rawPath, count: strlen(rawPath)))],
              let sender = dbus_message_get_sender(message),
              let change = LoneByteArrayChange(message)
        else { return false }
        var delivered = false
        for watch in watches where Self.equal(rawPath, watch.path.rawValue) && Self.equal(change.interface, watch.interface)
            && Self.equal(change.property, watch.property) {
            guard let unique = owner(watch.sender), Self.equal(sender, unique) else { continue }
            watch.handler(change.bytes())
            delivered = true
        }
        return delivered
    }

    /// FNV-1a over a path's bytes.
    private static func hash<Byte: BinaryInteger>(_ bytes: UnsafeBufferPointer<Byte>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(UInt8(truncatingIfNeeded: byte))) &* 0x100_0000_01b3 }
        return hash
    }

    private static func equal(_ text: UnsafePointer<CChar>, _ expected: String) -> Bool {
        var expected = expected
        return expected.withUTF8 { utf8 in
            guard utf8.count == strlen(text), let bytes = utf8.baseAddress else { return utf8.count == strlen(text) }
            return memcmp(text, bytes, utf8.count) == 0
        }
    }
}

/// `PropertiesChanged(s interface, a{sv} changed, as invalidated)` when `changed` holds exactly one entry, a byte array,
/// and nothing is invalidated; the C strings and bytes point into the message, valid while it is.
struct LoneByteArrayChange {
    let interface: UnsafePointer<CChar>
    let property: UnsafePointer<CChar>
    private let start: UnsafePointer<UInt8>?
    private let count: Int

    init?(_ message: OpaquePointer) {
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
        self.interface = interface
        self.property = property
        self.start = start
        self.count = Int(count)
    }

    func bytes() -> [UInt8] {
        guard let start, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: start, count: count))
    }
}
