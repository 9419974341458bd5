import Foundation
import Testing
@testable import UpClient

@Suite struct CheckpointStoreTests {
    static func sample(path: String) -> Checkpoint {
        Checkpoint(
            uploadProtocol: .v1, upHost: "http://a", bucket: "demo", scope: "demo:k", key: "k", filePath: path,
            file: FileFacts(size: 5, modificationTime: 1, inode: 2, fingerprint: "ab"), blockSize: 4 << 20,
            chunkSize: 1024, partSize: 4 << 20, blocks: [.empty])
    }

    @Test func savesAtomicallyReplacesAndRemoves() throws {
        let dir = FileManager.default.temporaryDirectory.appending(path: "ckpt-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = CheckpointStore(path: dir + "/sub/x.ckpt")
        var checkpoint = Self.sample(path: "/f")
        try store.save(checkpoint)
        checkpoint.blocks = [ResumableUpload.Block(context: "c", offset: 3, crc32: 9, expiresAt: 99)]
        try store.save(checkpoint)
        guard case .success(let loaded) = store.load() else { Issue.record("not loaded"); return }
        #expect(loaded == checkpoint)
        #expect(!FileManager.default.fileExists(atPath: dir + "/sub/x.ckpt.tmp"))
        store.remove()
        #expect(store.load() == nil)
    }
}
