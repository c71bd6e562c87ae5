/// Where a request for the web interface goes, from its path alone (pure, so every prefix and trick is tested
/// without a socket). Paths are under `basePath` (`/` or a prefix such as `/wear2mqtt` that a reverse proxy does not
/// strip); the page's links are all relative, so Home Assistant's ingress, which strips its own prefix, needs nothing.
enum PageRoute: Equatable {
    /// An embedded asset, by its name in the assets folder (`index.html` for the base itself).
    case asset(String)
    case webSocket
    /// `GET <base>/health`: whether the data-path loop turns (`DataPathHeartbeat`), for health checks and watchdogs.
    case health
    /// The base without its final `/`: relative links need it, so the browser is sent there.
    case addSlash
    case notFound

    static let webSocketPath = "api/ws"
    static let healthPath = "health"

    /// A header's path prefix fit to put in a `Location`: `/`-led, no trailing `/`, plain characters only (a
    /// forged header cannot redirect elsewhere: no `//host`, no scheme, no CR/LF).
    static func isPathPrefix(_ text: String) -> Bool {
        text.hasPrefix("/") && !text.hasPrefix("//") && !text.hasSuffix("/") && text.utf8.count <= 512
            && text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "/-_.~".unicodeScalars.contains($0)) }
    }

    init(path rawPath: String, basePath: String) {
        // The query and fragment play no part in routing (`?v=2` cache busting, `#/device/band`).
        let path = rawPath.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let base = basePath == "/" ? "" : basePath
        guard path.hasPrefix(base) else { self = .notFound; return }
        let rest = path.dropFirst(base.count)
        if rest.isEmpty { self = base.isEmpty ? .asset("index.html") : .addSlash; return }
        guard rest.hasPrefix("/") else { self = .notFound; return }
        let name = rest.dropFirst()
        if name.isEmpty { self = .asset("index.html"); return }
        if name == Self.webSocketPath { self = .webSocket; return }
        if name == Self.healthPath { self = .health; return }
        // Names are looked up in a fixed table, never on a disk; `..` and encoded bytes simply name nothing.
        self = .asset(String(name))
    }
}
