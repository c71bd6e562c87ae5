/// One ownership decision as `<base>/bridge/site/owners/<device>` carries it: which gateway owns the device, from
/// which epoch, decided by which referee and why.
public struct SiteAssignment: Sendable, Equatable {
    public enum Reason: String, Sendable, Equatable {
        /// Nobody owned the device (it was just added, or the site just started).
        case unowned
        /// The owner left the site (its will fired) or stopped reporting.
        case ownerGone = "owner_gone"
        /// The owner reported its link to the device lost and no longer hears it.
        case linkLost = "link_lost"
        /// Another gateway heard the device clearly better for long enough.
        case stronger
    }

    public var gateway: String
    public var epoch: UInt64
    public var referee: String
    public var reason: Reason

    public init(gateway: String, epoch: UInt64, referee: String, reason: Reason) {
        self.gateway = gateway
        self.epoch = epoch
        self.referee = referee
        self.reason = reason
    }

    /// The order every gateway obeys: the greater epoch, and between equal epochs (two referees during a partition)
    /// the smaller referee id, which is the one the healed site elects.
    public func supersedes(_ other: SiteAssignment) -> Bool {
        if epoch != other.epoch { return epoch > other.epoch }
        return referee < other.referee
    }
}
