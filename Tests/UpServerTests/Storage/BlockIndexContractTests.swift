import NativeCrypto
import Outbox
import Testing
@testable import UpServer

/// The `BlockIndex` contract, for every implementation.
@Suite("BlockIndex contract")
struct BlockIndexContractTests {
    @Test(arguments: IndexKind.allCases)
    func onlyAnIncompleteBlockAtTheExpectedOffsetRewinds(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        let blob = BlobID.random()
        _ = try await index.createBlock(blob, blockSize: 8, expiresAt: 500, createdAt: 100)
        #expect(try await index.advanceBlock(blob, from: 0, to: 6, crc32: 66, sha1: nil))
        #expect(try await !index.rewindBlock(blob, from: 5, to: 2, crc32: 22))  // not at 5
        #expect(try await !index.rewindBlock(blob, from: 6, to: 6, crc32: 22))  // not backwards
        #expect(try await index.rewindBlock(blob, from: 6, to: 2, crc32: 22))
        let rewound = try #require(try await index.block(blob))
        #expect(rewound.offset == 2 && rewound.crc32 == 22 && rewound.sha1 == nil)
        #expect(try await index.advanceBlock(blob, from: 2, to: 8, crc32: 88, sha1: SHA1.hash([1])))
        #expect(try await !index.rewindBlock(blob, from: 8, to: 2, crc32: 22))  // complete: never
        #expect(try await !index.rewindBlock(BlobID.random(), from: 8, to: 2, crc32: 22))
    }

    /// mkblk's one index write: the row is born holding its first chunk (a full disk between a
    /// create and an advance would otherwise leave an empty row whose blob mkblk removed).
    @Test(arguments: IndexKind.allCases)
    func aBlockCanBeCreatedHoldingItsFirstChunk(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        let partial = BlobID.random()
        let created = try await index.createBlock(
            partial, blockSize: 8, received: 5, crc32: 55, sha1: nil, sniffedType: nil, expiresAt: 500, createdAt: 100)
        #expect(created == BlockRecord(blob: partial, blockSize: 8, offset: 5, crc32: 55, expiresAt: 500, createdAt: 100))
        #expect(try await index.block(partial) == created)
        #expect(try await index.advanceBlock(partial, from: 5, to: 8, crc32: 88, sha1: SHA1.hash([8])))

        let whole = BlobID.random()
        _ = try await index.createBlock(
            whole, blockSize: 4, received: 4, crc32: 44, sha1: SHA1.hash([4]), sniffedType: nil, expiresAt: 500,
            createdAt: 100)
        #expect(try await index.block(whole)?.isComplete == true)
        // The same rules as an advance from 0: a complete block carries its SHA-1, no other does.
        await #expect(throws: UpIndexError.self) {
            _ = try await index.createBlock(
                BlobID.random(), blockSize: 4, received: 4, crc32: 0, sha1: nil, sniffedType: nil, expiresAt: 500, createdAt: 100)
        }
        await #expect(throws: UpIndexError.self) {
            _ = try await index.createBlock(
                BlobID.random(), blockSize: 4, received: 5, crc32: 0, sha1: nil, sniffedType: nil, expiresAt: 500, createdAt: 100)
        }
    }

    /// What mkblk sniffed the first bytes as comes back with the row, whether a type, nothing
    /// recognised or not recorded, and stays through the advances (mkfile reads it at the end).
    @Test(arguments: IndexKind.allCases)
    func aBlockKeepsWhatItsFirstBytesWereSniffedAs(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        for sniffed: String?? in [.some("image/png"), .some(nil), nil] {
            let blob = BlobID.random()
            let created = try await index.createBlock(
                blob, blockSize: 8, received: 5, crc32: 55, sha1: nil, sniffedType: sniffed, expiresAt: 500, createdAt: 100)
            #expect(created.sniffedType == sniffed)
            #expect(try await index.advanceBlock(blob, from: 5, to: 8, crc32: 88, sha1: SHA1.hash([8])))
            #expect(try await index.block(blob)?.sniffedType == sniffed)
        }
    }

    @Test(arguments: IndexKind.allCases)
    func blockAdvanceIsACompareAndSet(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        let blob = BlobID.random()
        let created = try await index.createBlock(blob, blockSize: 8, expiresAt: 500, createdAt: 100)
        #expect(created == BlockRecord(blob: blob, blockSize: 8, expiresAt: 500, createdAt: 100))
        #expect(try await index.advanceBlock(blob, from: 0, to: 4, crc32: 11, sha1: nil))
        // The same chunk again (a retry) finds the offset moved and changes nothing.
        #expect(try await !index.advanceBlock(blob, from: 0, to: 4, crc32: 11, sha1: nil))
        let sha1 = SHA1.hash([UInt8](repeating: 1, count: 8))
        #expect(try await index.advanceBlock(blob, from: 4, to: 8, crc32: 22, sha1: sha1))
        #expect(try await !index.advanceBlock(blob, from: 4, to: 8, crc32: 22, sha1: sha1))
        let block = try #require(try await index.block(blob))
        #expect(block.offset == 8 && block.crc32 == 22 && block.sha1 == sha1 && block.isComplete)
        #expect(try await !index.advanceBlock(BlobID.random(), from: 0, to: 1, crc32: 0, sha1: nil))
        await #expect(throws: UpIndexError.self) { try await index.advanceBlock(blob, from: 8, to: 9, crc32: 0, sha1: nil) }
        let other = BlobID.random()
        _ = try await index.createBlock(other, blockSize: 4, expiresAt: 500, createdAt: 100)
        // Completing without the SHA-1 would leave the etag unknowable.
        await #expect(throws: UpIndexError.self) { try await index.advanceBlock(other, from: 0, to: 4, crc32: 0, sha1: nil) }
        await #expect(throws: UpIndexError.self) {
            try await index.createBlock(.random(), blockSize: 4_194_305, expiresAt: 1, createdAt: 0)
        }
    }
}
