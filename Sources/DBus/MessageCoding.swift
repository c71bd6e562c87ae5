import CDBus

/// D-Bus type codes (the macros in dbus-protocol.h are casts Swift does not import).
enum TypeCode {
    static let byte = Int32(UInt8(ascii: "y"))
    static let boolean = Int32(UInt8(ascii: "b"))
    static let int16 = Int32(UInt8(ascii: "n"))
    static let uint16 = Int32(UInt8(ascii: "q"))
    static let int32 = Int32(UInt8(ascii: "i"))
    static let uint32 = Int32(UInt8(ascii: "u"))
    static let int64 = Int32(UInt8(ascii: "x"))
    static let uint64 = Int32(UInt8(ascii: "t"))
    static let double = Int32(UInt8(ascii: "d"))
    static let string = Int32(UInt8(ascii: "s"))
    static let objectPath = Int32(UInt8(ascii: "o"))
    static let signature = Int32(UInt8(ascii: "g"))
    static let unixFD = Int32(UInt8(ascii: "h"))
    static let array = Int32(UInt8(ascii: "a"))
    static let structure = Int32(UInt8(ascii: "r"))
    static let dictionaryEntry = Int32(UInt8(ascii: "e"))
    static let variant = Int32(UInt8(ascii: "v"))
}

/// Writes `DBusValue`s into a libdbus message and reads them back. libdbus aborts the process on some
/// invalid input (a string with NUL, a bad object path or signature), so `validate` checks first and
/// callers get a typed error instead.
enum MessageCoding {
    static func validate(_ value: DBusValue) throws(BusError) {
        switch value {
        case .string(let text):
            if text.utf8.contains(0) { throw .invalidArguments("a string contains a NUL character") }
        case .objectPath(let path):
            if !path.isValid { throw .invalidArguments("\"\(path.rawValue)\" is not a valid object path") }
        case .signature(let signature):
            if dbus_signature_validate(signature, nil) == 0 { throw .invalidArguments("\"\(signature)\" is not a valid signature") }
        case .array(let element, let items):
            guard dbus_signature_validate_single(element, nil) != 0 else { throw .invalidArguments("bad array element signature \"\(element)\"") }
            for item in items {
                guard item.signature == element else {
                    throw .invalidArguments("array of \(element) holds a \(item.signature)")
                }
                try validate(item)
            }
        case .dictionary(let key, let valueSignature, let entries):
            guard dbus_signature_validate("a{" + key + valueSignature + "}", nil) != 0 else {
                throw .invalidArguments("bad dictionary signature a{\(key)\(valueSignature)}")
            }
            for entry in entries {
                guard entry.key.signature == key, entry.value.signature == valueSignature else {
                    throw .invalidArguments("dictionary a{\(key)\(valueSignature)} holds \(entry.key.signature) → \(entry.value.signature)")
                }
                try validate(entry.key)
                try validate(entry.value)
            }
        case .structure(let items):
            if items.isEmpty { throw .invalidArguments("an empty structure") }
            for item in items { try validate(item) }
        case .variant(let inner):
            try validate(inner)
        case .unixFD(let fd):
            if fd.rawValue < 0 { throw .invalidArguments("invalid file descriptor") }
        default:
            break
        }
    }

    /// Appends `values` as the message body. Values must have passed `validate`.
    static func append(_ values: [DBusValue], to message: OpaquePointer) -> Bool {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(message, &iterator)
        return values.allSatisfy { append($0, to: &iterator) }
    }

    private static func appendBasic<T: BitwiseCopyable>(_ type: Int32, _ value: T, to iterator: inout DBusMessageIter) -> Bool {
        withUnsafeBytes(of: value) { dbus_message_iter_append_basic(&iterator, type, $0.baseAddress) != 0 }
    }

    private static func appendString(_ type: Int32, _ text: String, to iterator: inout DBusMessageIter) -> Bool {
        text.withCString { pointer in
            var raw: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iterator, type, &raw) != 0
        }
    }

    private static func appendContainer(_ type: Int32, _ signature: String?, to iterator: inout DBusMessageIter,
                                        _ body: (inout DBusMessageIter) -> Bool) -> Bool {
        var sub = DBusMessageIter()
        let opened: Bool
        if let signature {
            opened = dbus_message_iter_open_container(&iterator, type, signature, &sub) != 0
        } else {
            opened = dbus_message_iter_open_container(&iterator, type, nil, &sub) != 0
        }
        guard opened else { return false }
        guard body(&sub) else {
            dbus_message_iter_abandon_container(&iterator, &sub)
            return false
        }
        return dbus_message_iter_close_container(&iterator, &sub) != 0
    }

    private static func append(_ value: DBusValue, to iterator: inout DBusMessageIter) -> Bool {
        switch value {
        case .byte(let v): return appendBasic(TypeCode.byte, v, to: &iterator)
        case .boolean(let v): return appendBasic(TypeCode.boolean, dbus_bool_t(v ? 1 : 0), to: &iterator)
        case .int16(let v): return appendBasic(TypeCode.int16, v, to: &iterator)
        case .uint16(let v): return appendBasic(TypeCode.uint16, v, to: &iterator)
        case .int32(let v): return appendBasic(TypeCode.int32, v, to: &iterator)
        case .uint32(let v): return appendBasic(TypeCode.uint32, v, to: &iterator)
        case .int64(let v): return appendBasic(TypeCode.int64, v, to: &iterator)
        case .uint64(let v): return appendBasic(TypeCode.uint64, v, to: &iterator)
        case .double(let v): return appendBasic(TypeCode.double, v, to: &iterator)
        case .string(let v): return appendString(TypeCode.string, v, to: &iterator)
        case .objectPath(let v): return appendString(TypeCode.objectPath, v.rawValue, to: &iterator)
        case .signature(let v): return appendString(TypeCode.signature, v, to: &iterator)
        case .unixFD(let fd): return appendBasic(TypeCode.unixFD, fd.rawValue, to: &iterator)
        case .bytes(let bytes):
            return appendContainer(TypeCode.array, "y", to: &iterator) { sub in
                bytes.withUnsafeBufferPointer { buffer in
                    var base: UnsafePointer<UInt8>? = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)
                    return dbus_message_iter_append_fixed_array(&sub, TypeCode.byte, &base, Int32(buffer.count)) != 0
                }
            }
        case .array(let element, let items):
            return appendContainer(TypeCode.array, element, to: &iterator) { sub in
                items.allSatisfy { append($0, to: &sub) }
            }
        case .dictionary(let key, let valueSignature, let entries):
            return appendContainer(TypeCode.array, "{" + key + valueSignature + "}", to: &iterator) { sub in
                entries.allSatisfy { entry in
                    appendContainer(TypeCode.dictionaryEntry, nil, to: &sub) { pair in
                        append(entry.key, to: &pair) && append(entry.value, to: &pair)
                    }
                }
            }
        case .structure(let items):
            return appendContainer(TypeCode.structure, nil, to: &iterator) { sub in
                items.allSatisfy { append($0, to: &sub) }
            }
        case .variant(let inner):
            return appendContainer(TypeCode.variant, inner.signature, to: &iterator) { sub in
                append(inner, to: &sub)
            }
        }
    }

    /// The whole body of a received message.
    static func read(_ message: OpaquePointer) -> [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(message, &iterator) != 0 else { return [] }
        return readAll(&iterator)
    }

    private static func readAll(_ iterator: inout DBusMessageIter) -> [DBusValue] {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iterator) != 0 {
            if let value = readOne(&iterator) { values.append(value) }
            dbus_message_iter_next(&iterator)
        }
        return values
    }

    private static func basic<T: BitwiseCopyable>(_ iterator: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        withUnsafeMutableBytes(of: &value) { dbus_message_iter_get_basic(&iterator, $0.baseAddress) }
        return value
    }

    private static func text(_ iterator: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iterator, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }

    private static func signature(of iterator: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iterator) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }

    private static func readOne(_ iterator: inout DBusMessageIter) -> DBusValue? {
        switch dbus_message_iter_get_arg_type(&iterator) {
        case TypeCode.byte: return .byte(basic(&iterator, UInt8(0)))
        case TypeCode.boolean: return .boolean(basic(&iterator, dbus_bool_t(0)) != 0)
        case TypeCode.int16: return .int16(basic(&iterator, Int16(0)))
        case TypeCode.uint16: return .uint16(basic(&iterator, UInt16(0)))
        case TypeCode.int32: return .int32(basic(&iterator, Int32(0)))
        case TypeCode.uint32: return .uint32(basic(&iterator, UInt32(0)))
        case TypeCode.int64: return .int64(basic(&iterator, Int64(0)))
        case TypeCode.uint64: return .uint64(basic(&iterator, UInt64(0)))
        case TypeCode.double: return .double(basic(&iterator, Double(0)))
        case TypeCode.string: return .string(text(&iterator))
        case TypeCode.objectPath: return .objectPath(ObjectPath(text(&iterator)))
        case TypeCode.signature: return .signature(text(&iterator))
        case TypeCode.unixFD:
            // libdbus hands out a duplicate that the reader owns.
            return .unixFD(UnixFileDescriptor(owning: basic(&iterator, Int32(-1))))
        case TypeCode.array:
            let element = String(signature(of: &iterator).dropFirst())
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            if element == "y" {
                var pointer: UnsafePointer<UInt8>? = nil
                var count: Int32 = 0
                if dbus_message_iter_get_arg_type(&sub) == TypeCode.byte {
                    dbus_message_iter_get_fixed_array(&sub, &pointer, &count)
                }
                return .bytes(pointer.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) } ?? [])
            }
            if element.hasPrefix("{") {
                let inner = String(element.dropFirst().dropLast())
                let keySignature = String(inner.prefix(1))
                var entries: [DBusValue.DictionaryEntry] = []
                while dbus_message_iter_get_arg_type(&sub) == TypeCode.dictionaryEntry {
                    var pair = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &pair)
                    let items = readAll(&pair)
                    if items.count == 2 { entries.append(.init(items[0], items[1])) }
                    dbus_message_iter_next(&sub)
                }
                return .dictionary(keySignature: keySignature, valueSignature: String(inner.dropFirst()), entries)
            }
            return .array(elementSignature: element, readAll(&sub))
        case TypeCode.structure:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return .structure(readAll(&sub))
        case TypeCode.variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return readOne(&sub).map(DBusValue.variant)
        default:
            return nil
        }
    }
}
