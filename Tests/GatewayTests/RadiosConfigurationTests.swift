import Foundation
import Testing

@testable import Gateway

/// `radios:` — ESPHome Bluetooth proxies as radios: what loads, what is refused and with which key named, and that the
/// key never shows.
@Suite("Configuration: radios")
struct RadiosConfigurationTests {
    static let key = "QRTIErOb/fcE9Ukd/5qA3RGYMn0Y+p06U58SCtOXvPc="

    @Test("none by default; an entry with a name and a host; port 6053; a key inline, masked in the summary")
    func entries() throws {
        #expect(try Configuration.parse(yaml: "").radios.isEmpty)
        let yaml = "radios:\n  - name: kitchen\n    host: proxy-kitchen.local\n    key: \"\(Self.key)\"\n  - name: hall\n    host: 192.168.1.41\n    port: 6054\n"
        let configuration = try Configuration.parse(yaml: yaml)
        #expect(configuration.radios.map(\.name) == ["kitchen", "hall"])
        #expect(configuration.radios[0].port == 6053)
        #expect(configuration.radios[0].keyBytes?.count == 32)
        #expect(configuration.radios[1].keyBytes == nil)
        let summary = configuration.resolvedSummary()
        #expect(!summary.contains(Self.key))
        #expect(summary.contains("key: '***'") || summary.contains("key: \"***\"") || summary.contains("key: ***"))
    }

    @Test("refused, naming the key", arguments: [
        ("radios:\n  - host: a\n", "radios[0]", "needs a name"),
        ("radios:\n  - name: a\n", "radios[0].host", "needs the proxy's host"),
        ("radios:\n  - name: \"a b\"\n    host: x\n", "radios[0].name", "may only contain"),
        ("radios:\n  - name: a\n    host: x\n    port: 0\n", "radios[0].port", "1-65535"),
        ("radios:\n  - name: a\n    host: x\n    key: not-base64!\n", "radios[0].key", "not base64"),
        ("radios:\n  - name: a\n    host: x\n    key: \"AAAA\"\n", "radios[0].key", "32 bytes"),
        ("radios:\n  - name: a\n    host: x\n    key: \"\(key)\"\n    key_file: /k\n", "radios[0].key", "not both"),
        ("radios:\n  - name: a\n    host: x\n  - name: A\n    host: y\n", "radios[1].name", "already the name"),
        ("radios:\n  - name: a\n    host: x\n  - name: b\n    host: X\n", "radios[1].host", "one client at a time"),
        ("radios:\n  - name: a\n    host: x\n    keyfile: /k\n", "radios[0].keyfile", ""),
    ])
    func refusals(yaml: String, keyPath: String, words: String) throws {
        let error = try #require(configurationError(yaml))
        #expect(error.keyPath == keyPath, "\(error)")
        #expect(words.isEmpty || error.message.contains(words), "\(error.message)")
        #expect(!error.message.contains(Self.key))
    }

    @Test("the key from a file: read, checked as a key, named with its file when it is not one")
    func keyFile() throws {
        try withTemporaryDirectory { folder in
            let directory = folder.path
            let good = directory + "/good.key", bad = directory + "/bad.key"
            try (Self.key + "\n").write(toFile: good, atomically: true, encoding: .utf8)
            try "hunter2\n".write(toFile: bad, atomically: true, encoding: .utf8)
            let path = directory + "/config.yaml"
            try "radios:\n  - name: a\n    host: x\n    key_file: \(good)\n".write(toFile: path, atomically: true, encoding: .utf8)
            let loaded = try Configuration.load(path: path, environment: [:])
            #expect(loaded.radios[0].keyBytes?.count == 32)
            try "radios:\n  - name: a\n    host: x\n    key_file: \(bad)\n".write(toFile: path, atomically: true, encoding: .utf8)
            do {
                _ = try Configuration.load(path: path, environment: [:])
                Issue.record("a file without a key loaded")
            } catch let error as ConfigurationError {
                #expect(error.keyPath == "radios[0].key_file")
                #expect(error.line == 4)
                #expect(!error.message.contains("hunter2"))
            }
        }
    }

    @Test("base64 as RFC 4648 has it, padding and all", arguments: [
        ("", [UInt8]()), ("Zg==", Array("f".utf8)), ("Zm8=", Array("fo".utf8)), ("Zm9v", Array("foo".utf8)),
        ("Zm9vYmFy", Array("foobar".utf8)),
    ])
    func base64(text: String, bytes: [UInt8]) {
        #expect(Configuration.RadioEntry.base64Decoded(text) == bytes)
    }

    @Test("not base64", arguments: ["Zg=", "Z===", "Zg==Zg==", "Zm9v!", "Zm 9"])
    func notBase64(text: String) {
        #expect(Configuration.RadioEntry.base64Decoded(text) == nil)
    }
}
