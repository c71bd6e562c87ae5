/// A message received from the bus, copied out of libdbus into Swift values.
public struct BusMessage: Sendable {
    public enum Kind: Sendable, Equatable { case methodCall, methodReturn, error, signal }

    public var kind: Kind
    public var serial: UInt32
    public var replySerial: UInt32
    public var sender: String?
    public var destination: String?
    public var path: ObjectPath?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    public var noReplyExpected: Bool
    public var body: [DBusValue]

    public var signature: String { body.map(\.signature).joined() }
}

/// A signal as subscribers see it.
public typealias BusSignal = BusMessage

/// A method call to an exported object, as its handler sees it.
public struct MethodCall: Sendable {
    /// The caller's unique bus name (`:1.42`); BlueZ ties notify sessions and agents to it.
    public var sender: String
    public var path: ObjectPath
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]

    public var signature: String { arguments.map(\.signature).joined() }
}

/// What the loop thread sends.
struct OutgoingBusMessage: Sendable {
    enum Kind: Sendable {
        case methodCall(destination: String?, path: ObjectPath, interface: String?, member: String)
        case signal(path: ObjectPath, interface: String, member: String, destination: String?)
        case methodReturn(replySerial: UInt32, destination: String?)
        case error(replySerial: UInt32, destination: String?, name: String, message: String)
    }

    var kind: Kind
    var body: [DBusValue]
    var noReplyExpected = false

    var memberDescription: String {
        switch kind {
        case .methodCall(_, let path, let interface, let member): "\(interface ?? "").\(member) on \(path)"
        case .signal(_, let interface, let member, _): "\(interface).\(member)"
        case .methodReturn: "method return"
        case .error(_, _, let name, _): name
        }
    }
}

/// A D-Bus match rule for signals. Fields left nil match anything.
public struct MatchRule: Sendable, Hashable, CustomStringConvertible {
    public var sender: String?
    public var path: ObjectPath?
    public var pathNamespace: ObjectPath?
    public var interface: String?
    public var member: String?
    public var arg0: String?

    public init(sender: String? = nil, path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil,
                interface: String? = nil, member: String? = nil, arg0: String? = nil) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// The rule as the bus daemon's AddMatch takes it.
    public var description: String {
        var parts = ["type='signal'"]
        if let sender { parts.append("sender='\(sender)'") }
        if let path { parts.append("path='\(path.rawValue)'") }
        if let pathNamespace, pathNamespace.rawValue != "/" { parts.append("path_namespace='\(pathNamespace.rawValue)'") }
        if let interface { parts.append("interface='\(interface)'") }
        if let member { parts.append("member='\(member)'") }
        if let arg0 { parts.append("arg0='\(arg0.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''"))'") }
        return parts.joined(separator: ",")
    }

    /// Whether every signal `other` matches, this rule matches too (each field this rule sets, `other` sets alike).
    func covers(_ other: MatchRule) -> Bool {
        (sender == nil || sender == other.sender) && (path == nil || path == other.path)
            && (pathNamespace == nil || pathNamespace == other.pathNamespace) && (interface == nil || interface == other.interface)
            && (member == nil || member == other.member) && (arg0 == nil || arg0 == other.arg0)
    }

    /// Whether `signal` matches. `senderOwner` is the unique name that currently owns `sender` when the rule
    /// names a well-known name, because signals carry the unique name.
    func matches(_ signal: BusMessage, senderOwner: String?) -> Bool {
        guard signal.kind == .signal else { return false }
        if let sender {
            let expected = sender.hasPrefix(":") || sender == "org.freedesktop.DBus" ? sender : senderOwner
            if sender == "org.freedesktop.DBus" {
                if signal.sender != "org.freedesktop.DBus" { return false }
            } else if signal.sender == nil || signal.sender != expected {
                return false
            }
        }
        if let path, signal.path != path { return false }
        if let pathNamespace, !(signal.path?.isDescendant(of: pathNamespace) ?? false) { return false }
        if let interface, signal.interface != interface { return false }
        if let member, signal.member != member { return false }
        if let arg0, signal.body.first?.stringValue != arg0 { return false }
        return true
    }
}
