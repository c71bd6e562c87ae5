import Foundation
import Gateway
import Logging
import Testing
import Wear2MQTTTesting

@testable import Frontend

/// HTTPS (`frontend.tls`) on a real socket, spoken to by curl, a client nobody here wrote: the page over TLS with a
/// certificate signed by a test CA, refused by a client trusting another CA, nothing for plain HTTP on that port;
/// and files that cannot be used stop the start naming their key. The WebSocket over TLS is driven by a real
/// browser in Tests/browser/run.
@Suite("Web interface server over HTTPS")
struct FrontendTLSTests {
    /// curl's exit status and what it wrote (`-w` output after the body).
    func curl(_ arguments: [String], in directory: TemporaryDirectory) async throws -> (status: Int32?, output: String) {
        let child = try ChildProcess(executable: "/usr/bin/curl", arguments: ["--silent", "--max-time", "20"] + arguments,
                                     outputPath: directory.file("curl-\(UUID().uuidString).out"),
                                     errorPath: directory.file("curl-\(UUID().uuidString).err"))
        let status = await child.waitForExit(timeout: .seconds(30))
        if status == nil { child.signal(SIGKILL) }
        return (status, child.output)
    }

    @Test("the page over TLS 1.2+ with the configured certificate; another CA is refused; plain HTTP gets no page")
    func page() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let certificates = try await TestCertificates.make(in: directory)
        let tls = try TLSServerContext(certificateFile: certificates.serverCertificate, keyFile: certificates.serverKey)
        let port = try FreePort.loopback()
        var section = Configuration.FrontendSection()
        section.enabled = true
        section.listen = "127.0.0.1:\(port)"
        let feed = BrowserFeed(greeting: .init(baseTopic: "wear2mqtt", gatewayID: "t", version: "0"), token: nil, brokerConnected: { true })
        let (listening, told) = AsyncStream.makeStream(of: Void.self)
        let server = FrontendServer(section: section, feed: feed, tls: tls, logger: Logger(label: "frontend-tls-test"),
                                    listening: { told.yield() })
        let task = Task { try await server.run() }
        defer { task.cancel() }
        for await _ in listening { break }

        let body = directory.file("index.html")
        let trusted = try await curl(["--cacert", certificates.caFile, "--tlsv1.2", "-o", body, "-w", "%{http_code} %{ssl_verify_result}",
                                      "https://127.0.0.1:\(port)/"], in: directory)
        #expect(trusted.status == 0)
        #expect(trusted.output == "200 0")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: body))) == Asset.all["index.html"]?.bytes)
        let big = try await curl(["--cacert", certificates.caFile, "-o", "/dev/null", "-w", "%{http_code} %{size_download}",
                                  "https://127.0.0.1:\(port)/app.js"], in: directory)
        #expect(big.output == "200 \(Asset.all["app.js"]?.bytes.count ?? -1)", "a file of several TLS records arrives whole")
        // 60: the peer's certificate cannot be verified with the known CA.
        let stranger = try await curl(["--cacert", certificates.otherCAFile, "-o", "/dev/null", "https://127.0.0.1:\(port)/"], in: directory)
        #expect(stranger.status == 60)
        let plain = try await curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/"], in: directory)
        #expect(plain.status != 0 && plain.output != "200", "plain HTTP on the HTTPS port: \(plain)")
        let again = try await curl(["--cacert", certificates.caFile, "-o", "/dev/null", "-w", "%{http_code}",
                                    "https://127.0.0.1:\(port)/"], in: directory)
        #expect(again.output == "200", "the server still serves after a bad client")
    }

    @Test("a missing file, or a key that is not the certificate's, stops the start naming the key")
    func unusableFiles() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let certificates = try await TestCertificates.make(in: directory)
        func failure(_ certificate: String, _ key: String) -> String? {
            do {
                _ = try TLSServerContext(certificateFile: certificate, keyFile: key)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(failure(directory.file("absent.crt"), certificates.serverKey)?.hasPrefix("frontend.tls.cert_file: cannot use") == true)
        #expect(failure(certificates.serverCertificate, directory.file("absent.key"))?.hasPrefix("frontend.tls.key_file: cannot use") == true)
        // OpenSSL refuses the other key as it is loaded ("key values mismatch").
        let mismatched = failure(certificates.serverCertificate, certificates.clientKey)
        #expect(mismatched?.hasPrefix("frontend.tls.key_file") == true && mismatched?.contains("mismatch") == true, "\(mismatched ?? "")")
        #expect(failure(certificates.serverKey, certificates.serverKey)?.hasPrefix("frontend.tls.cert_file") == true, "a key is not a certificate")
        #expect(failure(certificates.serverCertificate, certificates.serverKey) == nil)
    }
}
