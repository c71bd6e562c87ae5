import Foundation
import Testing

@testable import Gateway

@Suite("Configuration: frontend")
struct FrontendConfigurationTests {
    @Test("off by default, on loopback port 8780, at the root, without a token")
    func defaults() throws {
        let section = try Configuration.parse(yaml: "").frontend
        #expect(section.enabled == false)
        #expect(section.endpoint == .init(host: "127.0.0.1", port: 8780))
        #expect(section.basePath == "/")
        #expect(section.authToken == nil)
        #expect(section.tls.enabled == false)
    }

    @Test("beyond loopback without a token is an error naming frontend.listen and what to set", arguments: ["0.0.0.0:8780", "192.168.1.5:80", "[::]:8780"])
    func exposedWithoutToken(listen: String) throws {
        let error = try #require(configurationError("frontend:\n  enabled: true\n  listen: \"\(listen)\"\n"))
        #expect(error.keyPath == "frontend.listen")
        #expect(error.line == 3)
        #expect(error.message.contains("frontend.auth_token_file"))
        #expect(error.message.contains("WEAR2MQTT_FRONTEND_AUTH_TOKEN"))
    }

    @Test("loopback needs no token; a disabled section is not checked", arguments: [
        "frontend:\n  enabled: true\n  listen: 127.0.0.1:8780\n", "frontend:\n  enabled: true\n  listen: \"[::1]:8780\"\n",
        "frontend:\n  enabled: true\n  listen: localhost:8780\n", "frontend:\n  enabled: false\n  listen: 0.0.0.0:8780\n",
    ])
    func loopback(yaml: String) throws {
        _ = try Configuration.parse(yaml: yaml)
    }

    @Test("trusted proxies are IP addresses; with one, listening beyond loopback needs no token")
    func trustedProxies() throws {
        let yaml = "frontend:\n  enabled: true\n  listen: 0.0.0.0:8099\n  trusted_proxies: [172.30.32.2, \"fd00::2\"]\n"
        let section = try Configuration.parse(yaml: yaml).frontend
        #expect(section.trustedProxies == ["172.30.32.2", "fd00::2"])
        #expect(section.authToken == nil)
        for bad in ["supervisor", "172.30.32", "172.30.32.2/24", ""] {
            let error = try #require(configurationError("frontend:\n  trusted_proxies: [\"\(bad)\"]\n"), "\(bad)")
            #expect(error.keyPath == "frontend.trusted_proxies")
            #expect(error.message.contains("is not an IP address"))
        }
        #expect(try Configuration.parse(yaml: "").frontend.trustedProxies.isEmpty)
    }

    @Test("the token comes from its file or the environment, never the file itself")
    func tokenSources() throws {
        let error = try #require(configurationError("frontend:\n  auth_token: hunter2\n"))
        #expect(error.keyPath == "frontend.auth_token")
        #expect(error.message.contains("does not belong in the configuration file"))
        try withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("token").path
            try "from-file\n".write(toFile: file, atomically: true, encoding: .utf8)
            let yaml = "frontend:\n  enabled: true\n  listen: 0.0.0.0:8780\n  auth_token_file: \(file)\n"
            #expect(try Configuration.parse(yaml: yaml).frontend.authToken?.reveal() == "from-file")
            let environment = ["WEAR2MQTT_FRONTEND_AUTH_TOKEN": "from-env"]
            #expect(try Configuration.parse(yaml: yaml, environment: environment).frontend.authToken?.reveal() == "from-env")
            try "\n".write(toFile: file, atomically: true, encoding: .utf8)
            let empty = try #require(configurationError(yaml))
            #expect(empty.keyPath == "frontend.auth_token_file")
            #expect(empty.message.contains("is empty"))
        }
        let missing = try #require(configurationError("frontend:\n  auth_token_file: /nonexistent/token\n"))
        #expect(missing.message.contains("cannot read the token file"))
    }

    @Test("the summary masks the token")
    func masked() throws {
        var configuration = Configuration()
        configuration.frontend.authToken = Secret("hunter2")
        #expect(!configuration.resolvedSummary().contains("hunter2"))
        #expect(configuration.resolvedSummary().contains("auth_token: '***'") || configuration.resolvedSummary().contains("auth_token: \"***\""))
    }

    @Test("base paths: a leading /, no empty, . or .. level, plain characters; a final / is dropped", arguments: [
        ("/wear2mqtt", "/wear2mqtt"), ("/wear2mqtt/", "/wear2mqtt"), ("/a/b-c_d.e~f", "/a/b-c_d.e~f"), ("/", "/"),
    ])
    func basePaths(text: String, expected: String) throws {
        #expect(try Configuration.parse(yaml: "frontend:\n  base_path: \"\(text)\"\n").frontend.basePath == expected)
    }

    @Test("bad base paths are refused naming the key", arguments: ["wear2mqtt", "//x", "/a//b", "/a/../b", "/a b", "/a?b", "/é"])
    func badBasePaths(text: String) throws {
        #expect(try #require(configurationError("frontend:\n  base_path: \"\(text)\"\n")).keyPath == "frontend.base_path")
    }

    @Test("allowed origins are scheme://host[:port] in lower case")
    func origins() throws {
        #expect(try Configuration.parse(yaml: "frontend:\n  allowed_origins: [\"https://ha.example.org\", \"http://10.0.0.2:8123\"]\n")
                    .frontend.allowedOrigins.count == 2)
        for bad in ["ha.example.org", "https://ha.example.org/", "ftp://x", "https://HA.example.org"] {
            #expect(try #require(configurationError("frontend:\n  allowed_origins: [\"\(bad)\"]\n")).keyPath == "frontend.allowed_origins")
        }
    }

    @Test("TLS takes a certificate and its key together")
    func tls() throws {
        #expect(try #require(configurationError("frontend:\n  tls:\n    cert_file: /a.pem\n")).keyPath == "frontend.tls.cert_file")
        #expect(try #require(configurationError("frontend:\n  tls:\n    key_file: /a.key\n")).keyPath == "frontend.tls.key_file")
        let both = try Configuration.parse(yaml: "frontend:\n  tls:\n    cert_file: /a.pem\n    key_file: /a.key\n",
                                           source: "config.yaml", environment: [:])
        #expect(both.frontend.tls.certificateFile == "/a.pem" && both.frontend.tls.keyFile == "/a.key")
    }
}
