/// Decodes `Decodable` values from a ``YAMLNode`` tree, throwing the standard `DecodingError`s with the coding path
/// of the value at fault (so a caller can turn the path back into a line of the file).
///
/// Scalars become values as ``YAMLScalarValue`` reads them; a mapping decodes a keyed container, a sequence an
/// unkeyed one. It does not merge `<<` keys.
public struct YAMLDecoder {
    public init() {}

    public func decode<Value: Decodable>(_ type: Value.Type, from node: YAMLNode) throws -> Value {
        try NodeDecoder(node: node, codingPath: []).decode(type)
    }
}

private struct NodeDecoder: Decoder, SingleValueDecodingContainer {
    let node: YAMLNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .mapping(let mapping) = node else { throw mismatch(YAMLNode.Mapping.self) }
        return KeyedDecodingContainer(KeyedNodeContainer<Key>(decoder: self, mapping: mapping))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .sequence(let sequence) = node else { throw mismatch(YAMLNode.Sequence.self) }
        return UnkeyedNodeContainer(decoder: self, items: sequence.items)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func child(_ node: YAMLNode, key: any CodingKey) -> NodeDecoder {
        NodeDecoder(node: node, codingPath: codingPath + [key])
    }

    func mismatch(_ expected: Any.Type) -> DecodingError {
        let found =
            switch node {
            case .scalar: "Scalar"
            case .mapping: "Mapping"
            case .sequence: "Sequence"
            }
        return .typeMismatch(expected, .init(codingPath: codingPath, debugDescription: "Expected to decode \(expected) but found \(found) instead."))
    }

    private func scalar(for type: Any.Type) throws -> YAMLNode.Scalar {
        guard case .scalar(let scalar) = node else { throw mismatch(YAMLNode.Scalar.self) }
        return scalar
    }

    private func value<Value>(_ type: Value.Type, _ read: (YAMLNode.Scalar) -> Value?) throws -> Value {
        guard let value = read(try scalar(for: type)) else { throw mismatch(type) }
        return value
    }

    private func integer<Value: FixedWidthInteger>(_ type: Value.Type) throws -> Value {
        try value(type) { YAMLScalarValue.integer($0, as: type) }
    }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool { node.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try value(type, YAMLScalarValue.bool) }
    func decode(_ type: String.Type) throws -> String { try value(type) { $0.string } }
    func decode(_ type: Double.Type) throws -> Double { try value(type, YAMLScalarValue.double) }
    func decode(_ type: Float.Type) throws -> Float { try value(type) { YAMLScalarValue.double($0).map(Float.init) } }
    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        switch type {
        case is Bool.Type: try decode(Bool.self) as! Value
        case is String.Type: try decode(String.self) as! Value
        case is Double.Type: try decode(Double.self) as! Value
        case is Float.Type: try decode(Float.self) as! Value
        case is Int.Type: try decode(Int.self) as! Value
        case is Int8.Type: try decode(Int8.self) as! Value
        case is Int16.Type: try decode(Int16.self) as! Value
        case is Int32.Type: try decode(Int32.self) as! Value
        case is Int64.Type: try decode(Int64.self) as! Value
        case is UInt.Type: try decode(UInt.self) as! Value
        case is UInt8.Type: try decode(UInt8.self) as! Value
        case is UInt16.Type: try decode(UInt16.self) as! Value
        case is UInt32.Type: try decode(UInt32.self) as! Value
        case is UInt64.Type: try decode(UInt64.self) as! Value
        default: try Value(from: self)
        }
    }
}

private struct KeyedNodeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: NodeDecoder
    let mapping: YAMLNode.Mapping

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { mapping.pairs.compactMap { $0.key.string.flatMap(Key.init(stringValue:)) } }

    func contains(_ key: Key) -> Bool { mapping[key.stringValue] != nil }

    private func child(_ key: Key) throws -> NodeDecoder {
        guard let node = mapping[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return decoder.child(node, key: key)
    }

    func decodeNil(forKey key: Key) throws -> Bool { try child(key).decodeNil() }

    func decode<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value {
        try child(key).decode(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { try child(key) }
}

private struct UnkeyedNodeContainer: UnkeyedDecodingContainer {
    let decoder: NodeDecoder
    let items: [YAMLNode]
    var currentIndex = 0

    init(decoder: NodeDecoder, items: [YAMLNode]) {
        self.decoder = decoder
        self.items = items
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private mutating func nextDecoder(for type: Any.Type) throws -> NodeDecoder {
        let key = IndexKey(index: currentIndex)
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [key], debugDescription: "Unkeyed container is at end."))
        }
        currentIndex += 1
        return decoder.child(items[currentIndex - 1], key: key)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        try nextDecoder(for: type).decode(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try nextDecoder(for: type).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try nextDecoder(for: [Any].self).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try nextDecoder(for: Any.self) }
}

/// The coding key of a sequence item: `intValue` is its index, as `ConfigurationKeyPath` reads it.
struct IndexKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init?(intValue: Int) {
        self.init(index: intValue)
    }
}
