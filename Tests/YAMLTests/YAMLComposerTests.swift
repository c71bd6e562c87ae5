import Testing

@testable import YAML

@Suite("YAML composer, decoder and encoder")
struct YAMLComposerTests {
    @Test("plain text resolves as YAML 1.1: numbers, booleans, null; quoted text is a string")
    func tagResolution() throws {
        let root = try #require(try YAMLComposer.compose("a: 8883\nb: yes\nc: ~\nd: '8883'\ne: 0x1F\nf: 1:30\ng: 0.5\nh: text\n"))
        let mapping = try #require(root.mapping)
        #expect(mapping["a"]?.int == 8883)
        #expect(mapping["b"]?.bool == true)
        #expect(mapping["c"]?.isNull == true)
        #expect(mapping["d"]?.tag == .str)
        #expect(mapping["d"]?.int == nil)
        #expect(mapping["e"]?.int == 31)
        #expect(mapping["f"]?.int == 90)
        #expect(mapping["g"]?.float == 0.5)
        #expect(mapping["h"]?.tag == .str)
    }

    @Test("every node knows its line; an alias is the node its anchor names")
    func linesAndAliases() throws {
        let root = try #require(try YAMLComposer.compose("first: &x\n  port: 1\nsecond: *x\n"))
        let mapping = try #require(root.mapping)
        #expect(mapping["first"]?.mapping?["port"]?.mark?.line == 2)
        #expect(mapping["second"]?.mapping?["port"]?.int == 1)
        #expect(mapping.pairs[1].key.mark?.line == 3)
    }

    @Test("a syntax error names libyaml's problem and line; a key twice names the key and its first line")
    func errors() {
        var syntax: YAMLError?
        do { _ = try YAMLComposer.compose("a:\n  b: 1\n c: 2\n") } catch { syntax = error }
        guard case .syntax(_, let mark, _)? = syntax else { Issue.record("no syntax error: \(String(describing: syntax))"); return }
        #expect(mark.line == 3)

        var duplicate: YAMLError?
        do { _ = try YAMLComposer.compose("x: 0\nhost: a\nhost: b\n") } catch { duplicate = error }
        guard case .duplicatedKeys(let keys, let at)? = duplicate else { Issue.record("no duplicate error"); return }
        #expect(keys == ["host"])
        #expect(at.line == 2)
    }

    @Test("nesting deeper than the bound is an error naming the line, never a stack overflow (the config fuzz target's input)")
    func depthBound() throws {
        let limit = YAMLComposer.maximumDepth
        #expect(try YAMLComposer.compose(String(repeating: "[", count: limit) + String(repeating: "]", count: limit)) != nil)
        for text in [String(repeating: "[", count: 100_000), String(repeating: "- ", count: 5_000) + "x\n",
                     String(repeating: "{a: ", count: 10_000)] {
            var error: YAMLError?
            do { _ = try YAMLComposer.compose(text) } catch let thrown { error = thrown }
            guard case .syntax(let problem, let mark, _)? = error else { Issue.record("\(String(describing: error))"); continue }
            #expect(problem == "nested deeper than \(limit) levels")
            #expect(mark.line == 1)
        }
    }

    @Test("empty text and a document of comments hold no node; two documents are an error")
    func documents() throws {
        #expect(try YAMLComposer.compose("") == nil)
        #expect(try YAMLComposer.compose("# nothing\n") == nil)
        #expect(throws: YAMLError.self) { try YAMLComposer.compose("a: 1\n---\nb: 2\n") }
    }

    struct Settings: Codable, Equatable {
        var name: String
        var port: Int
        var ratio: Double
        var enabled: Bool
        var tags: [String]
        var note: String?
    }

    @Test("Codable round trip: values decode from their text and encode back as block YAML, ambiguous text quoted")
    func codableRoundTrip() throws {
        let text = "name: '1.2'\nport: 8883\nratio: 0.5\nenabled: true\ntags:\n- a\n- 'yes'\nnote: null\n"
        let root = try #require(try YAMLComposer.compose(text))
        let settings = try YAMLDecoder().decode(Settings.self, from: root)
        #expect(settings == Settings(name: "1.2", port: 8883, ratio: 0.5, enabled: true, tags: ["a", "yes"], note: nil))
        let encoded = try YAMLEncoder().encode(settings)
        #expect(encoded == "name: '1.2'\nport: 8883\nratio: 0.5\nenabled: true\ntags:\n- a\n- 'yes'\n")
    }

    @Test("a value of the wrong type is a typeMismatch at its coding path")
    func typeMismatch() throws {
        let root = try #require(try YAMLComposer.compose("name: x\nport: '80'\nratio: 1\nenabled: true\ntags: []\n"))
        do {
            _ = try YAMLDecoder().decode(Settings.self, from: root)
            Issue.record("decoded a quoted port")
        } catch DecodingError.typeMismatch(let type, let context) {
            #expect(type is Int.Type)
            #expect(context.codingPath.map(\.stringValue) == ["port"])
        }
    }
}
