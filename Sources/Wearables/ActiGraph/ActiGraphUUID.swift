/// Our modeled ActiGraph Link vendor service of docs/protocols/actigraph.md, in lower case as BlueZ reports
/// UUIDs. A real Link does not offer it; the simulated Link and the `actigraph` driver do.
public enum ActiGraphUUID {
    public static let service = "82160001-5e87-4ee6-91ed-1fe5f8a1f698"
    /// Host → Link: request frames (GoFIT framing), write or write without response.
    public static let control = "82160002-5e87-4ee6-91ed-1fe5f8a1f698"
    /// Link → host: response frames, notified.
    public static let controlResponse = "82160003-5e87-4ee6-91ed-1fe5f8a1f698"
    /// Link → host: one unframed `ActiGraphRawPacket` per notification.
    public static let rawStream = "82160004-5e87-4ee6-91ed-1fe5f8a1f698"
    /// Link → host: one unframed `ActiGraphIMUPacket` per notification.
    public static let imuStream = "82160005-5e87-4ee6-91ed-1fe5f8a1f698"
}
