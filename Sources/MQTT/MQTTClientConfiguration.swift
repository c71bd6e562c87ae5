/// Everything the MQTT client needs, already validated by the gateway's configuration layer. The MQTT
/// module knows nothing of YAML; the gateway maps its `mqtt:` section onto this.
public struct MQTTClientConfiguration: Sendable {
    public enum ProtocolVersion: String, Sendable { case v5 = "5", v311 = "3.1.1" }
    public enum TLSVersion: String, Sendable { case v1_2 = "1.2", v1_3 = "1.3" }

    public struct TLS: Sendable {
        public var caFile: String?
        public var caDirectory: String?
        public var certificateFile: String?
        public var keyFile: String?
        public var minimumVersion: TLSVersion
        /// Skips hostname verification. The certificate chain is still checked.
        public var insecure: Bool

        public init(caFile: String? = nil, caDirectory: String? = nil, certificateFile: String? = nil,
                    keyFile: String? = nil, minimumVersion: TLSVersion = .v1_2, insecure: Bool = false) {
            self.caFile = caFile
            self.caDirectory = caDirectory
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.minimumVersion = minimumVersion
            self.insecure = insecure
        }
    }

    public var host: String
    public var port: Int
    public var clientID: String
    public var protocolVersion: ProtocolVersion
    public var keepAliveSeconds: Int
    /// MQTT 5 session expiry interval; 0 ends the session with the connection.
    public var sessionExpirySeconds: UInt32
    public var username: String?
    /// Never logged, never published.
    public var password: String?
    public var tls: TLS?
    public var will: OutgoingMessage?
    public var reconnect: ReconnectBackoff
    /// Directory of the on-disk spool for durable messages.
    public var spoolDirectory: String
    public var spoolMaximumBytes: Int
    /// Non-durable messages kept in memory while the broker is away; the oldest is dropped beyond this.
    public var offlineQueueCapacity: Int
    /// Durable messages in flight (sent, not yet acknowledged) at once.
    public var durableWindow: Int
    /// A connection attempt with no CONNACK after this long is abandoned and retried.
    public var connectTimeout: Duration
    /// Incoming messages buffered for a slow consumer before new ones are dropped (and counted).
    public var incomingBufferCapacity: Int
    /// The same buffer bounded in bytes (payloads and topics): reading pauses at this many, and beyond twice it a
    /// message is dropped and counted, so a storm of large messages cannot grow the process.
    public var incomingBufferBytes: Int = 16 << 20
    /// A payload larger than this is not kept: the message is delivered without it, `droppedPayloadBytes` saying
    /// how large it was (so a request can still be answered), and counted as oversized.
    public var maximumIncomingPayload: Int = 1 << 20
    /// The broker accepted these credentials before (an earlier run said so): a refusal is then an outage of the
    /// broker's authentication, retried like any other, not the end of `run()`. Without it only a refusal after
    /// this client's own first connection is retried.
    public var credentialsAcceptedBefore = false

    public init(
        host: String, port: Int, clientID: String, protocolVersion: ProtocolVersion = .v5,
        keepAliveSeconds: Int = 60, sessionExpirySeconds: UInt32 = 0, username: String? = nil,
        password: String? = nil, tls: TLS? = nil, will: OutgoingMessage? = nil,
        reconnect: ReconnectBackoff = ReconnectBackoff(minimumDelay: .seconds(1), maximumDelay: .seconds(60)),
        spoolDirectory: String, spoolMaximumBytes: Int = 64 << 20, offlineQueueCapacity: Int = 10_000,
        durableWindow: Int = 32, connectTimeout: Duration = .seconds(10), incomingBufferCapacity: Int = 4096
    ) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.protocolVersion = protocolVersion
        self.keepAliveSeconds = keepAliveSeconds
        self.sessionExpirySeconds = sessionExpirySeconds
        self.username = username
        self.password = password
        self.tls = tls
        self.will = will
        self.reconnect = reconnect
        self.spoolDirectory = spoolDirectory
        self.spoolMaximumBytes = spoolMaximumBytes
        self.offlineQueueCapacity = offlineQueueCapacity
        self.durableWindow = durableWindow
        self.connectTimeout = connectTimeout
        self.incomingBufferCapacity = incomingBufferCapacity
    }
}

/// Counters for `bridge/health`.
public struct MQTTClientStatistics: Sendable, Equatable {
    public var connected = false
    public var connections: UInt64 = 0
    /// Connection attempts the broker answered with a refusal (CONNACK reason), credentials or otherwise.
    public var refusedConnections: UInt64 = 0
    public var offlineQueued = 0
    public var offlineDropped: UInt64 = 0
    public var spoolPending = 0
    public var spoolBytes = 0
    public var durableRejectedByBroker: UInt64 = 0
    public var incomingDropped: UInt64 = 0
    /// Incoming messages whose payload was over `maximumIncomingPayload` and was not kept.
    public var incomingOversized: UInt64 = 0
    /// Times reading paused because the consumer's buffer was full, and pauses ended by the keepalive bound rather
    /// than by the consumer catching up.
    public var incomingPauses: UInt64 = 0
    public var incomingPausesCutShort: UInt64 = 0
    /// Durable messages that could not be stored in the spool (full, or a write error such as a full disk), since
    /// start; each was refused to its publisher, so nothing acknowledged is lost, but records wait on the device.
    public var spoolFailures: UInt64 = 0
    public var published: UInt64 = 0

    public init() {}
}
