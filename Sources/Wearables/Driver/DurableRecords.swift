/// The gateway's durable-record queue as a driver sees it: records are numbered as they are handed over, and a
/// driver can wait until a range of them is in the spool (on disk) before it lets the device forget them.
/// Without that wait a record handed over but not yet stored was lost with the process (SIGKILL mid-sync), while the
/// device had already been told it was delivered.
public struct DurableRecords: Sendable {
    /// How many records were handed over so far (the number of the last one).
    public let handedOver: @Sendable () -> UInt64
    /// Returns once records `(after, upTo]` are stored: true if all were, false if any could not be (spool full or
    /// unwritable).
    public let stored: @Sendable (_ after: UInt64, _ upTo: UInt64) async -> Bool

    public init(handedOver: @escaping @Sendable () -> UInt64,
                stored: @escaping @Sendable (_ after: UInt64, _ upTo: UInt64) async -> Bool) {
        self.handedOver = handedOver
        self.stored = stored
    }

    /// For links with no gateway behind them (driver tests): every record counts as stored when emitted.
    public static let immediate = DurableRecords(handedOver: { 0 }, stored: { _, _ in true })
}
