/// The body of `GET <base>/health`: 200 while the data-path loop turns, 503 once it stalled. The broker's state is
/// said but does not make the gateway unhealthy: a watchdog that restarted the gateway whenever the broker restarts
/// would only add a second outage to the first (the gateway reconnects and spools meanwhile).
struct HealthReport: Equatable {
    var dataPathRunning: Bool
    var brokerConnected: Bool

    var healthy: Bool { dataPathRunning }

    var json: [UInt8] {
        Array(#"{"status":"\#(healthy ? "ok" : "stalled")","data_path":"\#(dataPathRunning ? "running" : "stalled")","broker":"\#(brokerConnected ? "connected" : "disconnected")"}"#.utf8)
    }
}
