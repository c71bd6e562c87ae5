/// The `error` values a proxy puts in its answers: ESPHome's own "no such connection" and the ESP-IDF / HCI reasons a
/// link ends with (aioesphomeapi's `BLEConnectionError` names them). GATT failures carry the ATT error code itself.
enum ProxyErrorCode {
    /// ESPHome's `ESP_GATT_NOT_CONNECTED`: a request for an address the proxy holds no connection to.
    static let notConnected: Int32 = -1
    /// The link's supervision timeout ran out (`ESP_GATT_CONN_TIMEOUT`, HCI's "connection timeout"): the device stopped
    /// answering, as one carried out of the proxy's range does.
    static let connectionTimeout: Int32 = 0x08
    /// The connection could not be established (the device never answered the connect).
    static let failedToEstablish: Int32 = 0x3E
    /// The peripheral ended the link.
    static let terminatedByPeer: Int32 = 0x13
    /// The proxy ended the link (its client asked to disconnect).
    static let terminatedLocally: Int32 = 0x16
}
