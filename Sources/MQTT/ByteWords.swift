/// Byte-class checks eight bytes at a time, for the two checks every published topic gets (printable ASCII; no
/// wildcard and no NUL). A byte at a time they cost about a twentieth of a sample's instructions.
///
/// The word tests are the classic ones from Sean Eron Anderson's "Bit Twiddling Hacks" ("determine if a word has a
/// byte less than n / greater than n / equal to n"). Each may flag the wrong byte once a lower byte really matches
/// (a borrow or carry runs on), never a word without a match, so "does any byte match" is exact.
enum ByteWords {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Some byte of `word` is less than `limit` (at most 128).
    static func hasByte(below limit: UInt8, in word: UInt64) -> Bool {
        (word &- ones &* UInt64(limit)) & ~word & highBits != 0
    }

    /// Some byte of `word` is greater than `limit` (at most 127).
    static func hasByte(above limit: UInt8, in word: UInt64) -> Bool {
        ((word &+ ones &* UInt64(127 - limit)) | word) & highBits != 0
    }

    /// Some byte of `word` is `byte`.
    static func hasByte(_ byte: UInt8, in word: UInt64) -> Bool {
        hasByte(below: 1, in: word ^ (ones &* UInt64(byte)))
    }

    /// Whether no byte of `bytes` matches: whole words through `wordMatches`, the last few bytes through `byteMatches`
    /// (the two must agree).
    static func noByte(of bytes: UnsafeBufferPointer<UInt8>, matchesWord wordMatches: (UInt64) -> Bool,
                       orByte byteMatches: (UInt8) -> Bool) -> Bool {
        let raw = UnsafeRawBufferPointer(bytes)
        var offset = 0
        while offset + 8 <= raw.count {
            if wordMatches(raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) { return false }
            offset += 8
        }
        while offset < raw.count {
            if byteMatches(raw[offset]) { return false }
            offset += 1
        }
        return true
    }
}
