import NativeCrypto
import Testing
import UpCore
@testable import UpServer

/// `BlockUpload`, table-driven: each row is a chunk request's start (mkblk, or bput with the
/// block's row) and the events its handler reports, with the actions the machine must answer.
@Suite("BlockUpload")
struct BlockUploadTests {
    static let blob = BlobID(hex: "00112233445566778899aabbccddeeff")!
    static let sha1 = SHA1.hash([1])

    static func row(offset: Int64, crc: UInt32 = 0, size: Int64 = 8, sha1: [UInt8]? = nil) -> BlockRecord {
        BlockRecord(blob: blob, blockSize: size, offset: offset, crc32: crc, sha1: sha1, expiresAt: 500, createdAt: 1)
    }

    static func claim(_ offset: Int64, crc: UInt32 = 0, size: Int64 = 8) -> BlockUpload.Claim {
        BlockUpload.Claim(offset: offset, blockSize: size, crc32: crc)
    }

    static func written(_ count: Int64, chunk: UInt32 = 7, block: UInt32 = 9, sha1: [UInt8]? = nil) -> BlockUpload.Event {
        .written(.init(count: count, chunkCRC: chunk, blockCRC: block, sha1: sha1))
    }

    static let overflow = UpError(.invalidContext)
    static let write4 = BlockUpload.Action.write(offset: 4, blockSize: 8, resumingCRC: 44, overflow: overflow)

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var start: Start
        var first: BlockUpload.Action
        var steps: [(BlockUpload.Event, BlockUpload.Action)] = []
        var testDescription: String { name }
    }

    enum Start: Sendable {
        case mkblk(size: Int64)
        case bput(BlockUpload.Claim, BlockRecord?)
    }

    static func stale() -> BlockUpload.Action { .undo(.nothing, answer: UpError(.invalidContext)) }

    static let rows: [Row] = [
        // mkblk
        Row(name: "mkblk writes the first chunk, then creates the row holding it, then answers",
            start: .mkblk(size: 8),
            first: .write(offset: 0, blockSize: 8, resumingCRC: 0, overflow: UpError(.badRequest)),
            steps: [
                (written(3), .create(BlockRecord(blob: blob, blockSize: 8, offset: 3, crc32: 9, expiresAt: 500, createdAt: 1))),
                (.recorded(true), .reply(BlockRecord(blob: blob, blockSize: 8, offset: 3, crc32: 9, expiresAt: 500, createdAt: 1), chunkCRC: 7)),
            ]),
        Row(name: "mkblk of a whole block creates it complete, with its SHA-1",
            start: .mkblk(size: 8),
            first: .write(offset: 0, blockSize: 8, resumingCRC: 0, overflow: UpError(.badRequest)),
            steps: [(written(8, sha1: sha1),
                     .create(BlockRecord(blob: blob, blockSize: 8, offset: 8, crc32: 9, sha1: sha1, expiresAt: 500, createdAt: 1)))]),
        Row(name: "an empty first chunk removes the blob: 400",
            start: .mkblk(size: 8),
            first: .write(offset: 0, blockSize: 8, resumingCRC: 0, overflow: UpError(.badRequest)),
            steps: [(written(0), .undo(.discard, answer: UpError(.badRequest)))]),
        Row(name: "a failed mkblk write (overflow, full disk, disconnect) removes the blob and rethrows",
            start: .mkblk(size: 8),
            first: .write(offset: 0, blockSize: 8, resumingCRC: 0, overflow: UpError(.badRequest)),
            steps: [(.failed(superseded: false), .undo(.discard, answer: nil))]),
        Row(name: "an mkblk whose row cannot be created (full index) removes the blob",
            start: .mkblk(size: 8),
            first: .write(offset: 0, blockSize: 8, resumingCRC: 0, overflow: UpError(.badRequest)),
            steps: [(written(3), .create(BlockRecord(blob: blob, blockSize: 8, offset: 3, crc32: 9, expiresAt: 500, createdAt: 1))),
                    (.failed(superseded: false), .undo(.discard, answer: nil))]),
        // bput at the row's offset
        Row(name: "the next chunk is written at the acknowledged offset and advances the row",
            start: .bput(claim(4, crc: 44), row(offset: 4, crc: 44)),
            first: write4,
            steps: [(written(2), .advance(from: 4, to: row(offset: 6, crc: 9))),
                    (.recorded(true), .reply(row(offset: 6, crc: 9), chunkCRC: 7))]),
        Row(name: "the last chunk completes the block with its SHA-1",
            start: .bput(claim(4, crc: 44), row(offset: 4, crc: 44)),
            first: write4,
            steps: [(written(4, sha1: sha1), .advance(from: 4, to: row(offset: 8, crc: 9, sha1: sha1)))]),
        Row(name: "the index's compare-and-set losing (another node moved it) cuts back: 701",
            start: .bput(claim(4, crc: 44), row(offset: 4, crc: 44)),
            first: write4,
            steps: [(written(2), .advance(from: 4, to: row(offset: 6, crc: 9))),
                    (.recorded(false), .undo(.cutBack(to: 4), answer: UpError(.invalidContext)))]),
        Row(name: "a failed write (full disk, client gone, overflow) cuts back and rethrows",
            start: .bput(claim(4, crc: 44), row(offset: 4, crc: 44)),
            first: write4,
            steps: [(.failed(superseded: false), .undo(.cutBack(to: 4), answer: nil))]),
        Row(name: "a chunk taken over by a newer request cuts back: 599 chunk superseded",
            start: .bput(claim(4, crc: 44), row(offset: 4, crc: 44)),
            first: write4,
            steps: [(.failed(superseded: true), .undo(.cutBack(to: 4), answer: UpError(.chunkSuperseded)))]),
        Row(name: "an empty bput cuts back: 400",
            start: .bput(claim(4, crc: 44), row(offset: 4, crc: 44)),
            first: write4,
            steps: [(written(0), .undo(.cutBack(to: 4), answer: UpError(.badRequest)))]),
        // stale ctx
        Row(name: "a ctx whose row is gone (swept, never created) is 701",
            start: .bput(claim(4), nil), first: stale()),
        Row(name: "a ctx ahead of the row is 701", start: .bput(claim(6), row(offset: 4)), first: stale()),
        Row(name: "a ctx of another block size is 701", start: .bput(claim(4, size: 9), row(offset: 4)), first: stale()),
        Row(name: "a ctx at the row's offset with other bytes (a history rewound away) is 701",
            start: .bput(claim(4, crc: 1), row(offset: 4, crc: 44)), first: stale()),
        Row(name: "a ctx of a complete block at its end is 701",
            start: .bput(claim(8, crc: 9), row(offset: 8, crc: 9, sha1: sha1)), first: stale()),
        // rewind
        Row(name: "an older ctx of an incomplete block rewinds it, then writes from there",
            start: .bput(claim(2, crc: 22), row(offset: 6, crc: 66)),
            first: .rewind(from: 6, to: 2, crc32: 22),
            steps: [(.rewound(true), .write(offset: 2, blockSize: 8, resumingCRC: 22, overflow: overflow)),
                    (written(2), .advance(from: 2, to: row(offset: 4, crc: 9)))]),
        Row(name: "a rewind the index refuses (the row moved meanwhile) is 701",
            start: .bput(claim(2, crc: 22), row(offset: 6, crc: 66)),
            first: .rewind(from: 6, to: 2, crc32: 22), steps: [(.rewound(false), stale())]),
        Row(name: "a rewind that fails (index down) rethrows, nothing written",
            start: .bput(claim(2, crc: 22), row(offset: 6, crc: 66)),
            first: .rewind(from: 6, to: 2, crc32: 22), steps: [(.failed(superseded: false), .undo(.nothing, answer: nil))]),
        // replay
        Row(name: "an older ctx of a complete block is compared, not rewound",
            start: .bput(claim(2, crc: 22), row(offset: 8, crc: 88, sha1: sha1)),
            first: .compare(offset: 2, limit: 6)),
        Row(name: "a replayed chunk equal to the stored bytes is answered with the ctx after it, block untouched",
            start: .bput(claim(2, crc: CRC32.checksum([1, 2])), row(offset: 8, crc: CRC32.checksum([1, 2, 3, 4, 5, 6, 7, 8]), sha1: sha1)),
            first: .compare(offset: 2, limit: 6),
            steps: [(.replayed(.bytes(length: 2, chunkCRC: CRC32.checksum([3, 4]), matches: true)),
                     .reply(row(offset: 4, crc: CRC32.checksum([1, 2, 3, 4])), chunkCRC: CRC32.checksum([3, 4])))]),
        Row(name: "a replayed last chunk is answered with the block's final ctx and SHA-1",
            start: .bput(claim(6, crc: CRC32.checksum([1, 2, 3, 4, 5, 6])), row(offset: 8, crc: CRC32.checksum([1, 2, 3, 4, 5, 6, 7, 8]), sha1: sha1)),
            first: .compare(offset: 6, limit: 2),
            steps: [(.replayed(.bytes(length: 2, chunkCRC: CRC32.checksum([7, 8]), matches: true)),
                     .reply(row(offset: 8, crc: CRC32.checksum([1, 2, 3, 4, 5, 6, 7, 8]), sha1: sha1), chunkCRC: CRC32.checksum([7, 8])))]),
        Row(name: "a replayed chunk with other bytes is 701",
            start: .bput(claim(2, crc: 22), row(offset: 8, crc: 88, sha1: sha1)), first: .compare(offset: 2, limit: 6),
            steps: [(.replayed(.bytes(length: 2, chunkCRC: 5, matches: false)), stale())]),
        Row(name: "a replayed chunk past the block's end is 701",
            start: .bput(claim(2, crc: 22), row(offset: 8, crc: 88, sha1: sha1)), first: .compare(offset: 2, limit: 6),
            steps: [(.replayed(.tooLong), stale())]),
        Row(name: "an empty replay is 701",
            start: .bput(claim(2, crc: 22), row(offset: 8, crc: 88, sha1: sha1)), first: .compare(offset: 2, limit: 6),
            steps: [(.replayed(.bytes(length: 0, chunkCRC: 0, matches: true)), stale())]),
        Row(name: "a replay reaching the end whose CRC is not the block's (another history) is 701",
            start: .bput(claim(6, crc: 1), row(offset: 8, crc: 88, sha1: sha1)), first: .compare(offset: 6, limit: 2),
            steps: [(.replayed(.bytes(length: 2, chunkCRC: 5, matches: true)), stale())]),
        Row(name: "a replay that cannot read the stored bytes rethrows, nothing written",
            start: .bput(claim(2, crc: 22), row(offset: 8, crc: 88, sha1: sha1)), first: .compare(offset: 2, limit: 6),
            steps: [(.failed(superseded: false), .undo(.nothing, answer: nil))]),
    ]

    @Test(arguments: rows)
    func decides(_ row: Row) {
        var (machine, first): (BlockUpload, BlockUpload.Action)
        switch row.start {
        case .mkblk(let size): (machine, first) = BlockUpload.mkblk(blob: Self.blob, blockSize: size, now: 1, expiresAt: 500)
        case .bput(let claim, let record): (machine, first) = BlockUpload.bput(blob: Self.blob, claim: claim, row: record)
        }
        Self.expect(first, row.first, "first")
        for (index, (event, expected)) in row.steps.enumerated() {
            Self.expect(machine.handle(event), expected, "step \(index + 1)")
        }
    }

    /// Actions compare as values; errors compare by their code (`UpError` ignores its detail).
    static func expect(_ actual: BlockUpload.Action, _ expected: BlockUpload.Action, _ step: String,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(actual == expected, "\(step): \(actual)", sourceLocation: sourceLocation)
    }

    @Test func aDeclaredLengthThatCannotFitIsRefusedBeforeAnythingIsRead() {
        #expect(BlockUpload.refusal(declaredLength: 9, claim: Self.claim(0), isNew: true) == UpError(.badRequest))
        #expect(BlockUpload.refusal(declaredLength: 8, claim: Self.claim(0), isNew: true) == nil)
        #expect(BlockUpload.refusal(declaredLength: 5, claim: Self.claim(4), isNew: false) == UpError(.invalidContext))
        #expect(BlockUpload.refusal(declaredLength: 4, claim: Self.claim(4), isNew: false) == nil)
        #expect(BlockUpload.refusal(declaredLength: nil, claim: Self.claim(4), isNew: false) == nil)
    }

    @Test func eventsOutOfOrderAreAnInternalErrorNotAGuess() {
        var (machine, _) = BlockUpload.bput(blob: Self.blob, claim: Self.claim(4, crc: 44), row: Self.row(offset: 4, crc: 44))
        #expect(machine.handle(.recorded(true)) == .undo(.nothing, answer: UpError(.internalError)))
    }
}
