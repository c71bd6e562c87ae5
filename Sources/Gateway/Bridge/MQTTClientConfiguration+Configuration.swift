import MQTT

extension Configuration {
    /// Where the durable message spool lives: `<gateway.state_dir>/spool`.
    public var spoolDirectory: String { gateway.stateDirectory + "/spool" }

    /// The MQTT client's settings from the `mqtt:` section, with the bridge's will
    /// (`bridge/state` offline, retained, QoS 1).
    public func mqttClientConfiguration() -> MQTTClientConfiguration {
        let topics = TopicLayout(base: mqtt.baseTopic)
        let will = BridgeState.offline.message(topics: topics)
        var tls: MQTTClientConfiguration.TLS?
        if mqtt.tls.enabled {
            tls = MQTTClientConfiguration.TLS(
                caFile: mqtt.tls.caFile, caDirectory: mqtt.tls.caDirectory,
                certificateFile: mqtt.tls.certificateFile, keyFile: mqtt.tls.keyFile,
                minimumVersion: mqtt.tls.minimumVersion == .tls13 ? .v1_3 : .v1_2,
                insecure: mqtt.tls.insecure)
        }
        var client = MQTTClientConfiguration(
            host: mqtt.host, port: mqtt.port, clientID: mqtt.effectiveClientID,
            protocolVersion: mqtt.protocolVersion == .v311 ? .v311 : .v5,
            keepAliveSeconds: mqtt.keepaliveSeconds, sessionExpirySeconds: UInt32(clamping: mqtt.sessionExpirySeconds),
            username: mqtt.username, password: mqtt.password?.reveal(), tls: tls,
            // In a site the will deletes this gateway's record: bridge/state is the site's, not one gateway's.
            will: roaming.enabled ? SiteCoordinator.will(gatewayID: gateway.id, layout: topics) : OutgoingMessage(retainedJSON: will),
            reconnect: ReconnectBackoff(minimumDelay: .milliseconds(Int64(mqtt.reconnect.minDelaySeconds * 1000)),
                                        maximumDelay: .milliseconds(Int64(mqtt.reconnect.maxDelaySeconds * 1000))),
            spoolDirectory: spoolDirectory, spoolMaximumBytes: mqtt.spool.maxBytes,
            offlineQueueCapacity: mqtt.spool.memoryMessages)
        // Nothing the gateway reads is larger: a request may have 64 KiB, a site's record 256 KiB. A larger payload
        // is not kept, only answered (`INVALID_PAYLOAD`) and counted.
        client.maximumIncomingPayload = SiteMessages.limits.maximumBytes
        client.incomingBufferBytes = 16 << 20
        return client
    }
}

extension Configuration {
    /// `roaming.share_credentials`, honoured only when the broker link is TLS and the broker knows who connects (a
    /// username or a client certificate): pairing keys never cross the broker in clear or to anyone.
    public var sharesCredentialsWithTheSite: Bool {
        roaming.shareCredentials && mqtt.tls.enabled && (mqtt.username != nil || mqtt.tls.certificateFile != nil)
    }
}

extension OutgoingMessage {
    /// A retained QoS 1 JSON message: bridge and device state, availability.
    public init(retainedJSON description: OutgoingMessageDescription) {
        self.init(topic: description.topic, text: description.json, qos: .atLeastOnce, retain: true,
                  properties: MQTTProperties(contentType: "application/json"))
    }
}
