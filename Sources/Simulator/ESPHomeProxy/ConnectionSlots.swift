/// The proxy's active-connection slots, as ESPHome's `bluetooth_proxy` accounts them: a slot is taken when a connect
/// request arrives (before the link is up) and given back when the link ends or the attempt fails; a device holds at
/// most one slot; `allocated` lists the addresses holding one, in slot order. Pure.
struct ConnectionSlots: Equatable {
    enum Reservation: Equatable {
        /// A free slot now holds the address.
        case reserved
        /// The address already held a slot (a repeated connect).
        case alreadyHeld
        /// Every slot is taken by another device: ESPHome answers "not connected" and changes nothing.
        case full
    }

    let limit: Int
    /// One entry per slot; nil is free.
    private var holders: [UInt64?]

    init(limit: Int) {
        self.limit = max(0, limit)
        holders = Array(repeating: nil, count: self.limit)
    }

    var free: Int { holders.filter { $0 == nil }.count }
    var allocated: [UInt64] { holders.compactMap { $0 } }

    func holds(_ address: UInt64) -> Bool { holders.contains(address) }

    mutating func reserve(_ address: UInt64) -> Reservation {
        if holds(address) { return .alreadyHeld }
        guard let index = holders.firstIndex(of: nil) else { return .full }
        holders[index] = address
        return .reserved
    }

    /// Frees the address's slot; false when it held none.
    @discardableResult
    mutating func release(_ address: UInt64) -> Bool {
        guard let index = holders.firstIndex(of: address) else { return false }
        holders[index] = nil
        return true
    }
}

import ESPHome

extension ConnectionSlots {
    /// What the proxy tells its subscriber after every change (and a client that subscribes to the slots).
    var response: BluetoothConnectionsFreeResponse {
        var response = BluetoothConnectionsFreeResponse()
        response.free = UInt32(free)
        response.limit = UInt32(limit)
        response.allocated = allocated
        return response
    }
}
