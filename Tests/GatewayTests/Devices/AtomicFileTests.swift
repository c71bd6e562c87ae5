import BlueZ
import Foundation
@testable import Gateway
import Testing
import Wear2MQTTTesting

/// Issue 24: state files are the owner's alone whatever the umask and whatever was left behind.
@Suite("Atomic state files")
struct AtomicFileTests {
    static func mode(_ path: String) -> mode_t? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o7777
    }

    @Test("a file written is 0600, even over a temporary file left behind open to others")
    func writtenPrivate() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("devices.json")
        #expect(FileManager.default.createFile(atPath: path + ".tmp", contents: Data("old".utf8)))
        #expect(chmod(path + ".tmp", 0o666) == 0)
        try AtomicFile.replace(path, with: Data("[]".utf8))
        #expect(Self.mode(path) == 0o600)
        #expect(FileManager.default.contents(atPath: path) == Data("[]".utf8))
    }

    @Test("a symlink in the temporary file's place is refused, not written through")
    func symlinkRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let target = try directory.write("elsewhere", "untouched")
        let path = directory.file("devices.json")
        try FileManager.default.createSymbolicLink(atPath: path + ".tmp", withDestinationPath: target)
        #expect(throws: (any Error).self) { try AtomicFile.replace(path, with: Data("[]".utf8)) }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "untouched")
    }

    @Test("driver storage makes its folders 0700 and its files 0600")
    func driverStoragePrivate() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let address = try #require(BluetoothAddress("C0:FF:EE:00:00:01"))
        let storage = DriverFileStorage.storage(stateDirectory: directory.path, address: address)
        try storage.save("cursor", ["n": .integer(1)])
        let folder = DriverFileStorage.directory(stateDirectory: directory.path, address: address)
        #expect(Self.mode(directory.path + "/drivers") == 0o700)
        #expect(Self.mode(folder) == 0o700)
        #expect(Self.mode(folder + "/cursor.json") == 0o600)
    }
}
