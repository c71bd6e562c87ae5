/// Where a node starts in its text, counted from 1 as editors count.
public struct YAMLMark: Sendable, Hashable {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }
}

/// One node of a composed YAML document: aliases are already replaced by the nodes they name, and every node
/// read from text remembers where it started, so errors can name a line.
///
/// It does not keep comments, anchors or the document's directives.
public enum YAMLNode: Sendable {
    case scalar(Scalar)
    case mapping(Mapping)
    case sequence(Sequence)

    /// A single value as written, with its tag (explicit, or resolved from the text the way YAML 1.1 does).
    public struct Scalar: Sendable, Hashable {
        /// libyaml's scalar styles (`yaml_scalar_style_t`), in its order.
        public enum Style: Int32, Sendable {
            case any = 0, plain, singleQuoted, doubleQuoted, literal, folded
        }

        public var string: String
        /// The tag written or given (``YAMLTag/implicit`` when none): see ``resolvedTag``.
        public var tag: YAMLTag
        public var style: Style
        public var mark: YAMLMark?

        public init(_ string: String, tag: YAMLTag = .implicit, style: Style = .any, mark: YAMLMark? = nil) {
            self.string = string
            self.tag = tag
            self.style = style
            self.mark = mark
        }

        /// The tag that decides what the scalar means: an implicit tag is resolved from the text
        /// (``YAMLTag/resolve(_:)``), a non-specific `!` means a string.
        public var resolvedTag: YAMLTag {
            switch tag {
            case .implicit: YAMLTag.resolve(string)
            case .nonSpecific: .str
            default: tag
            }
        }
    }

    /// Keys and values in the order written.
    public struct Mapping: Sendable {
        public var pairs: [(key: YAMLNode, value: YAMLNode)]
        public var mark: YAMLMark?

        public init(_ pairs: [(key: YAMLNode, value: YAMLNode)] = [], mark: YAMLMark? = nil) {
            self.pairs = pairs
            self.mark = mark
        }

        /// The value of the first key whose text is `key`; setting replaces it in place, or appends a new pair.
        public subscript(key: String) -> YAMLNode? {
            get { pairs.first { $0.key.scalar?.string == key }?.value }
            set {
                let index = pairs.firstIndex { $0.key.scalar?.string == key }
                switch (index, newValue) {
                case (let index?, let value?): pairs[index].value = value
                case (let index?, nil): pairs.remove(at: index)
                case (nil, let value?): pairs.append((YAMLNode.scalar(Scalar(key)), value))
                case (nil, nil): break
                }
            }
        }
    }

    public struct Sequence: Sendable {
        public var items: [YAMLNode]
        public var mark: YAMLMark?

        public init(_ items: [YAMLNode] = [], mark: YAMLMark? = nil) {
            self.items = items
            self.mark = mark
        }
    }
}

extension YAMLNode {
    /// A plain scalar with an implicit tag, as a value written in a file would be.
    public init(_ string: String, tag: YAMLTag = .implicit, style: Scalar.Style = .any) {
        self = .scalar(Scalar(string, tag: tag, style: style))
    }

    public var mark: YAMLMark? {
        switch self {
        case .scalar(let scalar): scalar.mark
        case .mapping(let mapping): mapping.mark
        case .sequence(let sequence): sequence.mark
        }
    }

    public var scalar: Scalar? {
        if case .scalar(let scalar) = self { return scalar }
        return nil
    }

    public var mapping: Mapping? {
        if case .mapping(let mapping) = self { return mapping }
        return nil
    }

    public var sequence: Sequence? {
        if case .sequence(let sequence) = self { return sequence }
        return nil
    }

    /// The node's resolved tag: a scalar's ``Scalar/resolvedTag``, `map` or `seq` for the others.
    public var tag: YAMLTag {
        switch self {
        case .scalar(let scalar): scalar.resolvedTag
        case .mapping: .map
        case .sequence: .seq
        }
    }

    /// A scalar's text, whatever its tag.
    public var string: String? { scalar?.string }
    public var bool: Bool? { scalar.flatMap(YAMLScalarValue.bool) }
    public var int: Int? { scalar.flatMap(YAMLScalarValue.integer) }
    public var float: Double? { scalar.flatMap(YAMLScalarValue.double) }
    /// Whether this is a plain `null`, `~` or empty scalar (a quoted `'null'` is text).
    public var isNull: Bool { scalar.map(YAMLScalarValue.isNull) ?? false }
}
