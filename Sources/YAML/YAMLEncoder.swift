/// Encodes `Encodable` values into a ``YAMLNode`` tree and YAML text, keys in the order they are encoded.
///
/// Scalars are represented as Yams represented them (the summary `wear2mqtt config check` prints kept its look): text
/// that would read back as something else (`'1.2'`, `'true'`) is single-quoted, `nil` is `null`. Doubles are written
/// as Swift describes them (`0.5`, `64.0`), not in Yams' scientific form.
public struct YAMLEncoder {
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    public init() {}

    public func encodeNode(_ value: some Encodable) throws -> YAMLNode {
        let box = NodeBox()
        try value.encode(to: NodeEncoder(box: box, codingPath: [], userInfo: userInfo))
        return box.node ?? .mapping(.init())
    }

    /// `value` as a YAML document, indented by two spaces per level.
    public func encode(_ value: some Encodable) throws -> String {
        try YAMLEmitter.emit(encodeNode(value))
    }
}

/// The node one encoder builds, shared with the containers it hands out.
private class NodeBox {
    var node: YAMLNode?

    var mapping: YAMLNode.Mapping {
        get { node?.mapping ?? .init() }
        set { node = .mapping(newValue) }
    }

    var items: [YAMLNode] {
        get { node?.sequence?.items ?? [] }
        set { node = .sequence(.init(newValue)) }
    }
}

private struct NodeEncoder: Encoder, SingleValueEncodingContainer {
    let box: NodeBox
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    init(box: NodeBox, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: Any]) {
        self.box = box
        self.codingPath = codingPath
        self.userInfo = userInfo
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if box.node?.mapping == nil { box.mapping = .init() }
        return KeyedEncodingContainer(KeyedNodeContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if box.node?.sequence == nil { box.items = [] }
        return UnkeyedNodeContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    /// The node `value` encodes to, at `key` below this encoder.
    func node(for value: some Encodable, key: any CodingKey) throws -> YAMLNode {
        let child = NodeBox()
        try NodeEncoder(box: child, codingPath: codingPath + [key], userInfo: userInfo).encode(value)
        return child.node ?? .mapping(.init())
    }

    // MARK: SingleValueEncodingContainer

    func encodeNil() { box.node = YAMLNode("null", tag: .null) }
    func encode(_ value: Bool) { box.node = YAMLNode(value ? "true" : "false", tag: .bool) }
    func encode(_ value: String) { box.node = Self.text(value) }
    func encode(_ value: Double) { box.node = YAMLNode(value.description, tag: .float) }
    func encode(_ value: Float) { box.node = YAMLNode(value.description, tag: .float) }
    func encode(_ value: Int) { box.node = YAMLNode(String(value), tag: .int) }
    func encode(_ value: Int8) { box.node = YAMLNode(String(value), tag: .int) }
    func encode(_ value: Int16) { box.node = YAMLNode(String(value), tag: .int) }
    func encode(_ value: Int32) { box.node = YAMLNode(String(value), tag: .int) }
    func encode(_ value: Int64) { box.node = YAMLNode(String(value), tag: .int) }
    func encode(_ value: UInt) { box.node = YAMLNode(String(value), tag: .int) }
    func encode(_ value: UInt8) { box.node = YAMLNode(String(value), tag: .int) }
    func encode(_ value: UInt16) { box.node = YAMLNode(String(value), tag: .int) }
    func encode(_ value: UInt32) { box.node = YAMLNode(String(value), tag: .int) }
    func encode(_ value: UInt64) { box.node = YAMLNode(String(value), tag: .int) }

    func encode<Value: Encodable>(_ value: Value) throws {
        switch value {
        case let value as Bool: encode(value)
        case let value as String: encode(value)
        case let value as Double: encode(value)
        case let value as Float: encode(value)
        case let value as any FixedWidthInteger: box.node = YAMLNode(String(describing: value), tag: .int)
        default: try value.encode(to: self)
        }
    }

    /// Text that would read back as another type (a number, a boolean, null) is single-quoted.
    static func text(_ value: String) -> YAMLNode {
        YAMLTag.resolve(value) == .str ? YAMLNode(value) : YAMLNode(value, tag: .str, style: .singleQuoted)
    }
}

private struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: NodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    func encodeNil(forKey key: Key) { encoder.box.mapping[key.stringValue] = YAMLNode("null", tag: .null) }

    func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        encoder.box.mapping[key.stringValue] = try encoder.node(for: value, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        nested(key).container(keyedBy: keyType)
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        nested(key).unkeyedContainer()
    }

    func superEncoder() -> any Encoder { encoder }
    func superEncoder(forKey key: Key) -> any Encoder { nested(key) }

    /// An encoder whose node is written at `key` once it has one (containers are filled after they are made).
    private func nested(_ key: Key) -> LinkedEncoder {
        LinkedEncoder(parent: encoder.box, key: key.stringValue, codingPath: codingPath + [key], userInfo: encoder.userInfo)
    }
}

private struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
    let encoder: NodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { encoder.box.items.count }

    func encodeNil() { encoder.box.items.append(YAMLNode("null", tag: .null)) }

    func encode<Value: Encodable>(_ value: Value) throws {
        encoder.box.items.append(try encoder.node(for: value, key: IndexKey(index: count)))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        LinkedEncoder(parent: encoder.box, index: count, codingPath: codingPath + [IndexKey(index: count)], userInfo: encoder.userInfo)
            .container(keyedBy: keyType)
    }

    func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        LinkedEncoder(parent: encoder.box, index: count, codingPath: codingPath + [IndexKey(index: count)], userInfo: encoder.userInfo)
            .unkeyedContainer()
    }

    func superEncoder() -> any Encoder {
        LinkedEncoder(parent: encoder.box, index: count, codingPath: codingPath + [IndexKey(index: count)], userInfo: encoder.userInfo)
    }
}

/// A nested container's encoder: its own node box, copied into the parent's mapping key or sequence slot after
/// every change (nested containers are filled after they are handed out).
private struct LinkedEncoder: Encoder {
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]
    private let box = LinkedBox()

    init(parent: NodeBox, key: String, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: Any]) {
        (self.codingPath, self.userInfo) = (codingPath, userInfo)
        box.onChange = { node in parent.mapping[key] = node }
    }

    init(parent: NodeBox, index: Int, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: Any]) {
        (self.codingPath, self.userInfo) = (codingPath, userInfo)
        parent.items.append(.mapping(.init()))
        box.onChange = { node in parent.items[index] = node }
    }

    private var encoder: NodeEncoder { NodeEncoder(box: box, codingPath: codingPath, userInfo: userInfo) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> { encoder.container(keyedBy: type) }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { encoder.unkeyedContainer() }
    func singleValueContainer() -> any SingleValueEncodingContainer { encoder }
}

/// A node box that reports each change, for ``LinkedEncoder``.
private final class LinkedBox: NodeBox {
    var onChange: ((YAMLNode) -> Void)?
    override var node: YAMLNode? {
        didSet { if let node { onChange?(node) } }
    }
}
