import ESPHome

/// Gathers raw advertisements into `BluetoothLERawAdvertisementsResponse`s as an ESP32 proxy does: a batch goes out
/// as soon as it holds `batchSize` advertisements (ESPHome's `BLUETOOTH_PROXY_ADVERTISEMENT_BATCH_SIZE`, 16: what fits
/// a Wi-Fi frame), and whatever is pending goes out on the proxy's 100 ms tick (`flush`). Pure: the caller owns the
/// tick and the sending.
///
/// ESPHome on Wi-Fi flushes a partial batch every other tick (about 200 ms) and on Ethernet every tick; the simulated
/// proxy behaves like the Ethernet one.
struct AdvertisementBatcher {
    static let batchSize = 16

    private var pending: [BluetoothLERawAdvertisement] = []

    var isEmpty: Bool { pending.isEmpty }

    /// Adds one advertisement; answers the batch to send now when it is full.
    mutating func append(_ advertisement: BluetoothLERawAdvertisement) -> BluetoothLERawAdvertisementsResponse? {
        pending.append(advertisement)
        return pending.count >= Self.batchSize ? flush() : nil
    }

    /// What is pending, as one response; nil when nothing is.
    mutating func flush() -> BluetoothLERawAdvertisementsResponse? {
        guard !pending.isEmpty else { return nil }
        var response = BluetoothLERawAdvertisementsResponse()
        response.advertisements = pending
        pending = []
        return response
    }

    /// Drops what is pending (the subscriber went away).
    mutating func reset() { pending = [] }
}
