/// Cuts one fuzz input into the parts a two-part decoder needs (a description read first, then the data it
/// frames): the first byte says how long the first part is, so the fuzzer can learn both.
struct InputSplit {
    let head: [UInt8]
    let tail: [UInt8]

    /// `unit`-byte records in the head, as many as the first byte says modulo `maximumUnits + 1`.
    init(_ bytes: [UInt8], unit: Int, maximumUnits: Int) {
        guard let first = bytes.first else {
            head = []
            tail = []
            return
        }
        let rest = bytes.dropFirst()
        let headLength = min(rest.count, Int(first) % (maximumUnits + 1) * unit)
        head = Array(rest.prefix(headLength))
        tail = Array(rest.dropFirst(headLength))
    }
}
