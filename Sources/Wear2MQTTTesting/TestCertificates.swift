import Foundation

/// A certificate authority, a server certificate for localhost / 127.0.0.1 and a client certificate, made with
/// the openssl command inside the test; plus an unrelated CA to show that a wrong CA is refused.
public struct TestCertificates: Sendable {
    public let caFile: String
    public let otherCAFile: String
    public let serverCertificate: String
    public let serverKey: String
    public let clientCertificate: String
    public let clientKey: String

    public static func make(in directory: TemporaryDirectory) async throws -> TestCertificates {
        func openssl(_ arguments: [String]) async throws {
            let child = try ChildProcess(executable: "/usr/bin/openssl", arguments: arguments,
                                         outputPath: directory.file("openssl.out"),
                                         errorPath: directory.file("openssl.err"))
            guard await child.waitForExit(timeout: .seconds(30)) == 0 else {
                throw TestSetupError("openssl \(arguments.first ?? "") failed: \(child.errorOutput)")
            }
        }
        let path = directory.file
        for ca in ["ca", "other-ca"] {
            try await openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=wear2mqtt test \(ca)",
                               "-keyout", path("\(ca).key"), "-out", path("\(ca).crt")])
        }
        let extensions = try directory.write("server.ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        for (name, ext) in [("server", Optional(extensions)), ("client", nil)] {
            try await openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=\(name == "server" ? "localhost" : "wear2mqtt-client")",
                               "-keyout", path("\(name).key"), "-out", path("\(name).csr")])
            try await openssl(["x509", "-req", "-in", path("\(name).csr"), "-CA", path("ca.crt"), "-CAkey", path("ca.key"),
                               "-CAcreateserial", "-days", "2", "-out", path("\(name).crt")]
                              + (ext.map { ["-extfile", $0] } ?? []))
        }
        return TestCertificates(caFile: path("ca.crt"), otherCAFile: path("other-ca.crt"),
                                serverCertificate: path("server.crt"), serverKey: path("server.key"),
                                clientCertificate: path("client.crt"), clientKey: path("client.key"))
    }
}
