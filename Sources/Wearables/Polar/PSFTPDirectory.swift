import FoundationEssentials

/// What a GET of a directory answers: `PbPFtpDirectory` (`pftp_response.proto`), its entries' names (a
/// subdirectory's ends in "/"), sizes and, when the device sets them, times. `encode` is for simulated sensors.
public struct PSFTPDirectory: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        public var name: String
        public var size: UInt64
        /// `created`; the public sources do not show whether an H10 sets it (the SDK stamps H10 entries with the
        /// phone's clock instead).
        public var created: PSFTPDateTime?
        public var modified: PSFTPDateTime?

        public init(name: String, size: UInt64, created: PSFTPDateTime? = nil, modified: PSFTPDateTime? = nil) {
            self.name = name
            self.size = size
            self.created = created
            self.modified = modified
        }
    }

    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> PSFTPDirectory {
        let directory = try PSFTPProtobuf.decode(Psftp_PbPFtpDirectory.self, bytes)
        return PSFTPDirectory(entries: directory.entries.map { entry in
            Entry(name: entry.name, size: entry.size,
                  created: entry.hasCreated ? PSFTPDateTime(entry.created) : nil,
                  modified: entry.hasModified ? PSFTPDateTime(entry.modified) : nil)
        })
    }

    public func encode() -> [UInt8] {
        var directory = Psftp_PbPFtpDirectory()
        directory.entries = entries.map { entry in
            var message = Psftp_PbPFtpEntry()
            message.name = entry.name
            message.size = entry.size
            if let created = entry.created { message.created = created.protobuf }
            if let modified = entry.modified { message.modified = modified.protobuf }
            return message
        }
        return PSFTPProtobuf.encode(directory)
    }
}

/// `PbSystemDateTime` (`types.proto`): a UTC date and time as the device's fields, kept as sent (no range is
/// checked, so any value round-trips), and `date` when they name a real instant.
public struct PSFTPDateTime: Sendable, Hashable {
    public var year: UInt32, month: UInt32, day: UInt32
    public var hour: UInt32, minute: UInt32, second: UInt32, millisecond: UInt32
    /// The device's word on whether its clock came from a trusted source (phone, GPS) or was never set.
    public var trusted: Bool

    public init(year: UInt32, month: UInt32, day: UInt32, hour: UInt32, minute: UInt32, second: UInt32,
                millisecond: UInt32 = 0, trusted: Bool) {
        (self.year, self.month, self.day) = (year, month, day)
        (self.hour, self.minute, self.second, self.millisecond) = (hour, minute, second, millisecond)
        self.trusted = trusted
    }

    init(_ message: Psftp_PbSystemDateTime) {
        self.init(year: message.date.year, month: message.date.month, day: message.date.day, hour: message.time.hour,
                  minute: message.time.minute, second: message.time.seconds, millisecond: message.time.millis, trusted: message.trusted)
    }

    var protobuf: Psftp_PbSystemDateTime {
        var message = Psftp_PbSystemDateTime()
        message.date.year = year
        message.date.month = month
        message.date.day = day
        message.time.hour = hour
        message.time.minute = minute
        message.time.seconds = second
        if millisecond != 0 { message.time.millis = millisecond }
        message.trusted = trusted
        return message
    }

    /// The instant in UTC, or nil when a field is out of its range (month 13, hour 24, …).
    public var date: Date? {
        guard (1...9999).contains(year), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
              second < 60, millisecond < 1000 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: Int(year), month: Int(month), day: Int(day), hour: Int(hour), minute: Int(minute), second: Int(second))
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == Int(day) else { return nil }
        return date.addingTimeInterval(Double(millisecond) / 1000)
    }
}
