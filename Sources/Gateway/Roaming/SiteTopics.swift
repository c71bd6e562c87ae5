/// The topics of a site (docs/roaming.md, "Topics"), all under `<base>/bridge/site/`, where no device id can reach
/// (`bridge` is reserved), and the reverse: what an incoming site topic is.
public struct SiteTopics: Sendable, Equatable {
    public let prefix: String

    public init(base: String) { prefix = "\(base)/bridge/site/" }

    public func gateway(_ id: String) -> String { prefix + "gateways/" + id }
    public func sightings(_ gateway: String) -> String { prefix + "sightings/" + gateway }
    public func owner(_ device: String) -> String { prefix + "owners/" + device }
    public func handoff(_ device: String) -> String { prefix + "handoff/" + device }
    public func registry(_ device: String) -> String { prefix + "registry/" + device }
    /// The `bridge/devices` entries of the devices a gateway holds, from which the referee writes the site's list.
    public func devices(_ gateway: String) -> String { prefix + "devices/" + gateway }

    /// One filter per kind, each matching exactly its own topics.
    public var subscriptions: [String] {
        ["gateways", "sightings", "owners", "handoff", "registry", "devices"].map { prefix + $0 + "/+" }
    }

    public enum Incoming: Sendable, Equatable {
        case gateway(String)
        case sightings(String)
        case owner(String)
        case handoff(String)
        case registry(String)
        case devices(String)
    }

    /// The kind and the id a topic names; nil for anything else (a deeper level, an empty id, another prefix).
    public func classify(_ topic: String) -> Incoming? {
        guard topic.hasPrefix(prefix) else { return nil }
        let levels = topic.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 2, !levels[1].isEmpty else { return nil }
        let id = String(levels[1])
        switch levels[0] {
        case "gateways": return .gateway(id)
        case "sightings": return .sightings(id)
        case "owners": return .owner(id)
        case "handoff": return .handoff(id)
        case "registry": return .registry(id)
        case "devices": return .devices(id)
        default: return nil
        }
    }
}
