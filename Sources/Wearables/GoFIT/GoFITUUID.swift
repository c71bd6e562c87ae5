/// The GoFIT vendor service of docs/protocols/gofit.md, in lower case as BlueZ reports UUIDs.
public enum GoFITUUID {
    public static let service = "bf090001-ddc8-4f2f-80c1-72dc43319d7c"
    /// Host → band: request frames, written in segments (write or write without response).
    public static let request = "bf090002-ddc8-4f2f-80c1-72dc43319d7c"
    /// Band → host: response and event frames, notified in segments.
    public static let response = "bf090003-ddc8-4f2f-80c1-72dc43319d7c"
}
