import Logging

/// One log event with everything a line shows, independent of the clock and of where the line goes.
public struct LogRecord: Sendable {
    /// Unix time in milliseconds, like `ts` in the MQTT payloads.
    public var timestampMilliseconds: Int64
    public var level: Logger.Level
    /// The logger's label, e.g. `mqtt` or `gateway.devices`.
    public var label: String
    public var message: String
    /// Already merged: provider, then logger, then call-site metadata.
    public var metadata: Logger.Metadata
    /// The error attached to the event, rendered as `error=…` unless the metadata has an `error` key.
    public var error: String?

    public init(
        timestampMilliseconds: Int64,
        level: Logger.Level,
        label: String,
        message: String,
        metadata: Logger.Metadata = [:],
        error: String? = nil
    ) {
        self.timestampMilliseconds = timestampMilliseconds
        self.level = level
        self.label = label
        self.message = message
        self.metadata = metadata
        self.error = error
    }
}
