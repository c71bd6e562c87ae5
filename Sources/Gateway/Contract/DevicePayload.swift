import Wearables

/// Payloads of a device's topics other than samples and state.
public enum DevicePayload {
    /// `<id>/availability`: `{"state":"online"}` or `{"state":"offline"}`.
    public static func availability(online: Bool) -> [UInt8] {
        var writer = JSONWriter(capacity: 24)
        writer.beginObject()
        writer.field("state", online ? "online" : "offline")
        writer.endObject()
        return writer.bytes
    }

    /// `<id>/gesture`: `{"ts":…,"gesture":"double_tap"}`.
    public static func gesture(name: String, timestamp: Int64) -> [UInt8] {
        var writer = JSONWriter(capacity: 48)
        writer.beginObject()
        writer.field("ts", timestamp)
        writer.field("gesture", name)
        writer.endObject()
        return writer.bytes
    }

    /// `<id>/event`: `{"ts":…,"event":"find_phone", …details}`, details in sorted key order. A detail named
    /// `ts` or `event` cannot replace the contract's own keys and is left out.
    public static func event(name: String, timestamp: Int64, details: [String: DeviceValue]) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("ts", timestamp)
        writer.field("event", name)
        writer.members(details, excluding: ["ts", "event"])
        writer.endObject()
        return writer.bytes
    }

    /// `<id>/fitness/<kind>`: `{"id":…,"ts":…, …fields}`, fields in sorted key order; `id` and `ts` in
    /// the fields are left out for the record's own.
    public static func record(_ record: FitnessRecord) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("id", record.id)
        writer.field("ts", record.timestamp)
        writer.members(record.fields, excluding: ["id", "ts"])
        writer.endObject()
        return writer.bytes
    }
}
