import Foundation
@testable import MQTT
import Testing
import Wear2MQTTTesting

/// Issue 24: the state folder and `spool/` followed the process umask (world-writable under umask 000). These run
/// under the test process's umask (tests share it, so none changes it); the folder modes they check are exact,
/// which a umask can only narrow, and the wide modes a umask of 000 would leave are made by `chmod`. The gateway
/// under a real umask of 000 is in `StatePermissionsEndToEndTests`.
@Suite("Owner-only state folders and files")
struct OwnerOnlyDirectoryTests {
    static func mode(_ path: String) -> mode_t? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o7777
    }

    @Test("a missing folder and its missing parents are created 0700; an existing parent is left as it is")
    func createsPrivateFolders() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        #expect(chmod(root.path, 0o755) == 0)
        let nested = root.file("state/spool")
        #expect(try OwnerOnlyDirectory.prepare(nested) == nil)
        #expect(Self.mode(root.file("state")) == 0o700)
        #expect(Self.mode(nested) == 0o700)
        #expect(Self.mode(root.path) == 0o755)
        #expect(try OwnerOnlyDirectory.prepare(nested + "/") == nil, "a trailing slash names the same folder")
    }

    @Test("an existing folder open to others is tightened to 0700 and its old mode returned; a private one is untouched")
    func tightensLooseFolders() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let state = root.file("state")
        #expect(mkdir(state, 0o700) == 0 && chmod(state, 0o777) == 0)
        #expect(try OwnerOnlyDirectory.prepare(state) == 0o777)
        #expect(Self.mode(state) == 0o700)
        #expect(try OwnerOnlyDirectory.prepare(state) == nil)
    }

    @Test("a file where the folder should be is an error, not replaced")
    func refusesAFile() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let file = try root.write("state", "x")
        #expect(throws: OwnerOnlyDirectoryError.notADirectory(file)) { try OwnerOnlyDirectory.prepare(file) }
    }

    @Test("parents of a path are found with or without trailing slashes")
    func parents() {
        #expect(OwnerOnlyDirectory.parent(of: "/var/lib/wear2mqtt") == "/var/lib")
        #expect(OwnerOnlyDirectory.parent(of: "/var/lib/wear2mqtt/") == "/var/lib")
        #expect(OwnerOnlyDirectory.parent(of: "/state") == "/")
        #expect(OwnerOnlyDirectory.parent(of: "state") == "")
    }

    @Test("the spool's folder is 0700 and its segment and commit files 0600, even over leftovers open to others")
    func spoolIsPrivate() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let directory = root.file("spool")
        #expect(mkdir(directory, 0o700) == 0 && chmod(directory, 0o777) == 0)
        let leftover = directory + "/committed.tmp"
        #expect(FileManager.default.createFile(atPath: leftover, contents: Data()) && chmod(leftover, 0o666) == 0)
        let spool = try DurableSpool(directory: directory, maximumBytes: 1 << 20)
        #expect(spool.looseModeTightened == 0o777)
        #expect(Self.mode(directory) == 0o700)
        let sequence = try spool.append(OutgoingMessage(topic: "t", payload: [1], qos: .atLeastOnce), enqueuedAtMilliseconds: 0)
        spool.acknowledge(sequence)
        spool.sync()
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(!names.isEmpty)
        for name in names { #expect(Self.mode(directory + "/" + name) == 0o600, "\(name)") }
    }
}
