/// Metrics as a gateway extension: every answered request is timed.
extension GatewayMetrics: GatewayExtension {
    public func answered(_ request: ContractRequest, ok: Bool, duration: Duration) {
        recordCommand(request, ok: ok, duration: duration)
    }
}
