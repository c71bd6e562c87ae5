import CYAML

/// Turns YAML text into one ``YAMLNode`` tree with libyaml's event parser: anchors resolved, keys checked for
/// duplicates, each node with the line it starts on.
public enum YAMLComposer {
    /// How deep sequences and mappings may nest: composing recurses once per level, so without a bound a file of a few
    /// thousand `[` overflowed the stack (the `config` fuzz target). A configuration nests four or five levels.
    static let maximumDepth = 256

    /// The document in `text`, or `nil` when it holds none (empty, or only comments).
    ///
    /// - Throws: ``YAMLError`` for a syntax error, an undefined alias, a key given twice in one mapping, or
    ///   more than one document.
    public static func compose(_ text: String) throws(YAMLError) -> YAMLNode? {
        var bytes = Array(text.utf8)
        let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
        defer { parser.deallocate() }
        guard yaml_parser_initialize(parser) == 1 else {
            throw .reader(problem: "cannot start the YAML parser (out of memory)", offset: 0)
        }
        defer { yaml_parser_delete(parser) }
        return try bytes.withUnsafeMutableBufferPointer { (buffer) throws(YAMLError) -> YAMLNode? in
            yaml_parser_set_input_string(parser, buffer.baseAddress, buffer.count)
            var reader = EventReader(parser: parser)
            return try reader.singleDocument()
        }
    }
}

/// Reads events one at a time and builds nodes from them, remembering anchors for the aliases that follow.
private struct EventReader {
    let parser: UnsafeMutablePointer<yaml_parser_t>
    var anchors: [String: YAMLNode] = [:]

    init(parser: UnsafeMutablePointer<yaml_parser_t>) {
        self.parser = parser
    }

    mutating func singleDocument() throws(YAMLError) -> YAMLNode? {
        _ = try next()  // stream start
        let start = try next()
        guard start.type == YAML_DOCUMENT_START_EVENT else { return nil }
        let rootEvent = try next()
        let root = try node(from: rootEvent, depth: 0)
        _ = try next()  // document end
        let end = try next()
        if end.type != YAML_STREAM_END_EVENT {
            throw .syntax(problem: "but found another document", mark: end.mark,
                          context: ("expected a single document in the stream", root.mark ?? YAMLMark(line: 1, column: 1)))
        }
        return root
    }

    private func next() throws(YAMLError) -> Event {
        let event = Event()
        guard yaml_parser_parse(parser, event.pointer) == 1 else { throw error() }
        return event
    }

    private func error() -> YAMLError {
        let state = parser.pointee
        let problem = state.problem.map { String(cString: $0) } ?? "unknown problem"
        if state.error == YAML_READER_ERROR {
            return .reader(problem: problem, offset: state.problem_offset)
        }
        let context = state.context.map {
            (String(cString: $0), YAMLMark(state.context_mark))
        }
        return .syntax(problem: problem, mark: YAMLMark(state.problem_mark), context: context)
    }

    /// The node that starts with `event`, reading the events of its contents.
    private mutating func node(from event: Event, depth: Int) throws(YAMLError) -> YAMLNode {
        if depth >= YAMLComposer.maximumDepth, event.type == YAML_SEQUENCE_START_EVENT || event.type == YAML_MAPPING_START_EVENT {
            throw .syntax(problem: "nested deeper than \(YAMLComposer.maximumDepth) levels", mark: event.mark, context: nil)
        }
        let data = event.pointer.pointee.data
        switch event.type {
        case YAML_ALIAS_EVENT:
            let name = String(cString: data.alias.anchor)
            guard let node = anchors[name] else {
                throw .syntax(problem: "found undefined alias", mark: event.mark, context: nil)
            }
            return node
        case YAML_SCALAR_EVENT:
            let scalar = data.scalar
            let value = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
            // libyaml marks a quoted scalar without a tag as quoted-implicit: a string.
            let tag = scalar.quoted_implicit == 1 ? YAMLTag.str : scalar.tag.map { YAMLTag(String(cString: $0)) } ?? .implicit
            let style = YAMLNode.Scalar.Style(rawValue: Int32(scalar.style.rawValue)) ?? .any
            let node = YAMLNode.scalar(.init(value, tag: tag, style: style, mark: event.mark))
            remember(node, anchor: scalar.anchor)
            return node
        case YAML_SEQUENCE_START_EVENT:
            var items: [YAMLNode] = []
            while true {
                let item = try next()
                if item.type == YAML_SEQUENCE_END_EVENT { break }
                items.append(try node(from: item, depth: depth + 1))
            }
            let node = YAMLNode.sequence(.init(items, mark: event.mark))
            remember(node, anchor: data.sequence_start.anchor)
            return node
        case YAML_MAPPING_START_EVENT:
            var pairs: [(key: YAMLNode, value: YAMLNode)] = []
            while true {
                let keyEvent = try next()
                if keyEvent.type == YAML_MAPPING_END_EVENT { break }
                let key = try node(from: keyEvent, depth: depth + 1)
                let value = try node(from: try next(), depth: depth + 1)
                pairs.append((key, value))
            }
            try Self.checkDuplicates(pairs.map(\.key))
            let node = YAMLNode.mapping(.init(pairs, mark: event.mark))
            remember(node, anchor: data.mapping_start.anchor)
            return node
        default:
            throw .syntax(problem: "unexpected event \(event.type.rawValue)", mark: event.mark, context: nil)
        }
    }

    private mutating func remember(_ node: YAMLNode, anchor: UnsafeMutablePointer<yaml_char_t>?) {
        guard let anchor else { return }
        anchors[String(cString: anchor)] = node
    }

    /// Scalar keys written more than once, named in sorted order, located at the first one's first appearance.
    private static func checkDuplicates(_ keys: [YAMLNode]) throws(YAMLError) {
        var first: [String: YAMLMark] = [:]
        var duplicated: Set<String> = []
        for key in keys {
            guard let scalar = key.scalar else { continue }
            if first[scalar.string] == nil {
                first[scalar.string] = scalar.mark ?? YAMLMark(line: 0, column: 0)
            } else {
                duplicated.insert(scalar.string)
            }
        }
        let sorted = duplicated.sorted()
        guard let firstKey = sorted.first, let mark = first[firstKey] else { return }
        throw .duplicatedKeys(sorted, mark: mark)
    }
}

/// One libyaml event, freed with its owner. `yaml_parser_parse` zeroes the event first, so one it failed to fill is
/// freed safely too.
private final class Event {
    let pointer: UnsafeMutablePointer<yaml_event_t>

    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: yaml_event_t())
    }

    deinit {
        yaml_event_delete(pointer)
        pointer.deallocate()
    }

    var type: yaml_event_type_t { pointer.pointee.type }
    var mark: YAMLMark { YAMLMark(pointer.pointee.start_mark) }
}

extension YAMLMark {
    init(_ mark: yaml_mark_t) {
        self.init(line: mark.line + 1, column: mark.column + 1)
    }
}
