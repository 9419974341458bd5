import Foundation
import Testing
import TestSupport
@testable import UpServer

/// `S3BlockStore.importBlob` (what `up-server migrate` moves blobs with): a blob arrives under
/// its own id, whole, once; a copy cut short is completed; bytes past the length are cut back.
@Suite("S3BlockStore import")
struct S3BlockStoreImportTests {
    @Test func aBlobArrivesUnderItsIdOnceAndACopyCutShortIsCompleted() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let disk = try FileBlockStore(dataDirectory: directory.url)
        let s3 = try await s3BlockStore(directory)
        let data = BytePattern.bytes(0..<10_000, seed: 11)
        try await BlockingIO.run {
            let blob = try disk.create()
            _ = try disk.append(data, to: blob, at: 0)
            // An interrupted run: only the first 3000 bytes made it.
            #expect(try s3.importBlob(blob, length: 3000, from: disk, pieceSize: 1000))
            #expect(try s3.length(of: blob) == 3000)
            #expect(try s3.importBlob(blob, length: 10_000, from: disk, pieceSize: 4096))
            #expect(try s3.read(blob, range: 0..<10_000) == data)
            #expect(try !s3.importBlob(blob, length: 10_000, from: disk))  // whole already: nothing written
            #expect(try s3.list() == [blob])
            // A block whose index acknowledged fewer bytes than its file holds: only those.
            #expect(try s3.importBlob(blob, length: 6000, from: disk))
            #expect(try s3.length(of: blob) == 6000)
            #expect(try s3.read(blob, range: 0..<6000) == Array(data[..<6000]))
            // Bytes the disk does not have are an error, never zeros.
            let short = try disk.create()
            _ = try disk.append([1, 2, 3], to: short, at: 0)
            #expect(throws: BlockStoreError.self) { try s3.importBlob(short, length: 4, from: disk) }
        }
    }
}
