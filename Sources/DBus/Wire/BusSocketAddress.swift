/// The Unix socket a bus listens on, from a D-Bus address (specification, "Server Addresses" and "Transports"):
/// what `SignalSocket` connects to. Only the `unix` transport's `path`, `abstract` and `runtime` forms are understood;
/// anything else (TCP, `launchd:`, `autolaunch:`) gives nil, and the caller stays with libdbus alone.
enum BusSocketAddress: Equatable, CustomStringConvertible {
    case path(String)
    /// A Linux abstract socket: the name without its leading NUL.
    case abstract(String)

    /// libdbus's default when `DBUS_SYSTEM_BUS_ADDRESS` is not set.
    static let systemBusDefault = "unix:path=/var/run/dbus/system_bus_socket"

    var description: String {
        switch self {
        case .path(let path): path
        case .abstract(let name): "@" + name
        }
    }

    /// Where `address` is, reading the environment as libdbus does for `.system` and `.session`.
    static func resolve(_ address: BusAddress, environment: (String) -> String?) -> BusSocketAddress? {
        switch address {
        case .system: parse(environment("DBUS_SYSTEM_BUS_ADDRESS") ?? systemBusDefault, environment: environment)
        case .session: environment("DBUS_SESSION_BUS_ADDRESS").flatMap { parse($0, environment: environment) }
        case .address(let text): parse(text, environment: environment)
        }
    }

    /// The first usable address of a `;`-separated list.
    static func parse(_ text: String, environment: (String) -> String? = { _ in nil }) -> BusSocketAddress? {
        for entry in text.split(separator: ";") {
            guard let colon = entry.firstIndex(of: ":"), entry[..<colon] == "unix" else { continue }
            var keys: [Substring: String] = [:]
            var wellFormed = true
            for pair in entry[entry.index(after: colon)...].split(separator: ",") {
                guard let equals = pair.firstIndex(of: "="), let value = unescape(pair[pair.index(after: equals)...]) else {
                    wellFormed = false
                    break
                }
                keys[pair[..<equals]] = value
            }
            guard wellFormed else { continue }
            if let path = keys["path"], !path.isEmpty { return .path(path) }
            if let name = keys["abstract"], !name.isEmpty { return .abstract(name) }
            if keys["runtime"] == "yes", let directory = environment("XDG_RUNTIME_DIR"), !directory.isEmpty {
                return .path(directory + "/bus")
            }
        }
        return nil
    }

    /// Undoes the `%XX` escaping of an address value; nil when an escape is broken.
    private static func unescape(_ value: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = value.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexDigit), let low = iterator.next().flatMap(hexDigit) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
