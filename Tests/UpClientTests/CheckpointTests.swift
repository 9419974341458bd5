import Foundation
import Testing
@testable import UpClient

@Suite struct CheckpointTests {
    static let facts = FileFacts(size: 5 << 20, modificationTime: 100, inode: 7, fingerprint: "f")
    static let base = Checkpoint(
        uploadProtocol: .v1, upHost: "http://a", bucket: "demo", scope: "demo:k", key: "k", filePath: "/f", file: facts,
        blockSize: 4 << 20, chunkSize: 1 << 20, partSize: 4 << 20,
        blocks: [
            .init(context: "c", offset: 4 << 20, crc32: 1, expiresAt: 1000, blockCRC32: 1, sha1: String(repeating: "ab", count: 20)),
            .empty,
        ])
    static let expected = Checkpoint.Expectation(
        uploadProtocol: .v1, upHosts: ["http://a", "http://b"], scope: "demo:k", key: "k", filePath: "/f",
        chunkSize: 1 << 20, partSize: 4 << 20)

    @Test func aMatchingCheckpointIsValid() {
        #expect(Self.base.validate(against: Self.facts, request: Self.expected, now: 500) == nil)
    }

    static let changes: [(String, @Sendable (inout FileFacts, inout Checkpoint.Expectation) -> Void, String)] = [
        ("size", { f, _ in f.size += 1 }, "file"),
        ("mtime", { f, _ in f.modificationTime += 1 }, "file"),
        ("inode", { f, _ in f.inode = 8 }, "file"),
        ("content", { f, _ in f.fingerprint = "g" }, "file"),
        ("protocol", { _, e in e.uploadProtocol = .v2 }, "settings"),
        ("chunk", { _, e in e.chunkSize = 2 << 20 }, "settings"),
        ("key", { _, e in e.key = "other" }, "settings"),
        ("scope", { _, e in e.scope = "other:k" }, "settings"),
        ("host", { _, e in e.upHosts = ["http://c"] }, "settings"),
        ("path", { _, e in e.filePath = "/g" }, "settings"),
    ]

    @Test(arguments: changes.indices)
    func eachChangeInvalidates(_ index: Int) {
        var facts = Self.facts
        var expected = Self.expected
        Self.changes[index].1(&facts, &expected)
        let reason = Self.base.validate(against: facts, request: expected, now: 500)
        switch (reason, Self.changes[index].2) {
        case (.fileChanged?, "file"), (.settingsChanged?, "settings"): break
        default: Issue.record("\(Self.changes[index].0): \(String(describing: reason))")
        }
    }

    @Test func expiredContextsAndUploadIDs() {
        guard case .expired? = Self.base.validate(against: Self.facts, request: Self.expected, now: 1000) else {
            Issue.record("ctx expiry not seen"); return
        }
        var v2 = Self.base
        v2.uploadProtocol = .v2
        v2.uploadID = "u"
        v2.uploadExpiresAt = 600
        var expected = Self.expected
        expected.uploadProtocol = .v2
        #expect(v2.validate(against: Self.facts, request: expected, now: 500) == nil)
        guard case .expired? = v2.validate(against: Self.facts, request: expected, now: 500, margin: 100) else {
            Issue.record("upload id expiry not seen"); return
        }
        expected.partSize = 8 << 20
        guard case .settingsChanged? = v2.validate(against: Self.facts, request: expected, now: 500) else {
            Issue.record("part size change not seen"); return
        }
    }

    /// Version 2 checkpoints carry the hashes of the bytes sent: a complete block without its
    /// SHA-1, a started one without its CRC-32 or a v2 part without its digest cannot be resumed.
    @Test func aCheckpointWithoutTheHashesOfTheBytesSentIsCorrupt() {
        var noSHA1 = Self.base
        noSHA1.blocks?[0].sha1 = nil
        var noCRC = Self.base
        noCRC.blocks?[1] = .init(context: "d", offset: 1 << 20, crc32: 1, expiresAt: 1000)
        var v2 = Self.base
        v2.uploadProtocol = .v2
        v2.uploadID = "u"
        v2.uploadExpiresAt = 600
        v2.parts = [.init(number: 1, etag: "e", digest: nil)]
        var expected = Self.expected
        for (checkpoint, name) in [(noSHA1, "sha1"), (noCRC, "crc")] {
            guard case .corrupt? = checkpoint.validate(against: Self.facts, request: Self.expected, now: 500) else {
                Issue.record("\(name): accepted"); continue
            }
        }
        expected.uploadProtocol = .v2
        guard case .corrupt? = v2.validate(against: Self.facts, request: expected, now: 500) else {
            Issue.record("v2 part without digest accepted"); return
        }
    }

    @Test func corruptJSONIsReported() {
        guard case .failure(.corrupt) = Checkpoint.decode(Data("{\"version\":".utf8)) else {
            Issue.record("corrupt JSON accepted"); return
        }
        var old = Self.base
        old.version = 0
        guard case .corrupt? = old.validate(against: Self.facts, request: Self.expected, now: 0) else {
            Issue.record("old version accepted"); return
        }
    }
}
