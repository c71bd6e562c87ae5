import CYAML

/// Writes a ``YAMLNode`` tree as YAML text with libyaml's emitter: block style, two spaces of indent, lines of about
/// 80 characters, non-ASCII characters escaped, no document markers (the settings Yams emitted with).
public enum YAMLEmitter {
    public static func emit(_ node: YAMLNode) throws(YAMLError) -> String {
        let emitter = UnsafeMutablePointer<yaml_emitter_t>.allocate(capacity: 1)
        defer { emitter.deallocate() }
        guard yaml_emitter_initialize(emitter) == 1 else { throw .reader(problem: "cannot start the YAML emitter", offset: 0) }
        defer { yaml_emitter_delete(emitter) }
        let output = Output()
        yaml_emitter_set_output(emitter, { context, buffer, size in
            guard let context, let buffer else { return 0 }
            Unmanaged<Output>.fromOpaque(context).takeUnretainedValue().bytes.append(contentsOf: UnsafeBufferPointer(start: buffer, count: size))
            return 1
        }, Unmanaged.passUnretained(output).toOpaque())
        yaml_emitter_set_encoding(emitter, YAML_UTF8_ENCODING)
        yaml_emitter_set_canonical(emitter, 0)
        yaml_emitter_set_indent(emitter, 2)
        yaml_emitter_set_width(emitter, 0)
        yaml_emitter_set_unicode(emitter, 0)
        yaml_emitter_set_break(emitter, YAML_LN_BREAK)

        let writer = EventWriter(emitter: emitter)
        try withExtendedLifetime(output) { () throws(YAMLError) in
            try writer.emit { yaml_stream_start_event_initialize(&$0, YAML_UTF8_ENCODING) }
            try writer.emit { yaml_document_start_event_initialize(&$0, nil, nil, nil, 1) }
            try writer.node(node)
            try writer.emit { yaml_document_end_event_initialize(&$0, 1) }
            try writer.emit { yaml_stream_end_event_initialize(&$0) }
        }
        yaml_emitter_flush(emitter)
        return String(decoding: output.bytes, as: UTF8.self)
    }
}

private final class Output {
    var bytes: [UInt8] = []
}

private struct EventWriter {
    let emitter: UnsafeMutablePointer<yaml_emitter_t>

    func emit(_ initialize: (inout yaml_event_t) -> Int32) throws(YAMLError) {
        var event = yaml_event_t()
        guard initialize(&event) == 1 else { throw .reader(problem: "cannot make a YAML event", offset: 0) }
        // yaml_emitter_emit takes the event over (and frees it) whether it succeeds or not.
        guard yaml_emitter_emit(emitter, &event) == 1 else {
            let problem = emitter.pointee.problem.map { String(cString: $0) } ?? "unknown problem"
            throw .reader(problem: "cannot emit YAML: \(problem)", offset: 0)
        }
    }

    /// Scalars keep their tag implicit (plain and quoted), so only a style they need is written; mappings and
    /// sequences are block style unless empty.
    func node(_ node: YAMLNode) throws(YAMLError) {
        switch node {
        case .scalar(let scalar):
            var value = Array(scalar.string.utf8) + [0]
            var tag = Array(scalar.resolvedTag.name.utf8) + [0]
            let style = yaml_scalar_style_t(rawValue: UInt32(scalar.style.rawValue))
            try emit { event in
                value.withUnsafeMutableBufferPointer { value in
                    tag.withUnsafeMutableBufferPointer { tag in
                        yaml_scalar_event_initialize(&event, nil, tag.baseAddress, value.baseAddress, Int32(value.count - 1), 1, 1, style)
                    }
                }
            }
        case .sequence(let sequence):
            var tag = Array(YAMLTag.seq.name.utf8) + [0]
            try emit { event in
                tag.withUnsafeMutableBufferPointer { yaml_sequence_start_event_initialize(&event, nil, $0.baseAddress, 1, YAML_ANY_SEQUENCE_STYLE) }
            }
            for item in sequence.items { try self.node(item) }
            try emit { yaml_sequence_end_event_initialize(&$0) }
        case .mapping(let mapping):
            var tag = Array(YAMLTag.map.name.utf8) + [0]
            try emit { event in
                tag.withUnsafeMutableBufferPointer { yaml_mapping_start_event_initialize(&event, nil, $0.baseAddress, 1, YAML_ANY_MAPPING_STYLE) }
            }
            for (key, value) in mapping.pairs {
                try self.node(key)
                try self.node(value)
            }
            try emit { yaml_mapping_end_event_initialize(&$0) }
        }
    }
}
