import NativeCrypto
import UpCore

/// One chunk request's decisions about a v1 block (qiniu-protocol.md §4.1 mkblk, §4.2 bput) as a
/// pure state machine (DESIGN.md habit 4: events in, actions out, no I/O): stale ctx, rewind of
/// an incomplete block, replay of an already-stored chunk of a complete block, overflow, an empty
/// chunk, completion, the index's compare-and-set losing, and being superseded by a newer request
/// (takeover). `MkblkHandler` and `BputHandler` only carry out its actions: read the row, stream,
/// compare, write the index, undo, answer.
///
/// ```
/// mkblk ─▶ write ─written─▶ create ─recorded─▶ reply
/// bput (row read under the block's write lock):
///   at the row's offset ─▶ write ─written─▶ advance ─recorded(true)─▶ reply
///                                                   └recorded(false)─▶ undo(cut back) + 701
///   behind, block incomplete ─▶ rewind ─rewound(true)─▶ write …
///   behind, block complete   ─▶ compare ─replayed(same bytes)─▶ reply (block untouched)
///   anything else            ─▶ refuse 701
/// any step failing ─failed─▶ undo: cut the block back to its acknowledged offset (bput) or
///   remove the new blob (mkblk), then the error — or 599 chunk superseded if a newer request for
///   the block took over.
/// ```
///
/// "Acknowledged means stored" (DESIGN.md): the only action that answers 200 is ``Action/reply``,
/// and it comes only after the bytes are written (and, for a completed block, fsynced and hashed)
/// and the index moved.
struct BlockUpload: Sendable, Equatable {
    /// Where a chunk claims to start: the block's size, the offset and the CRC-32 of the bytes
    /// before it — the verified ctx of a bput, `(0, blockSize, 0)` for an mkblk.
    struct Claim: Sendable, Equatable {
        var offset: Int64
        var blockSize: Int64
        var crc32: UInt32
    }

    /// What streaming one chunk into the blob came to (the write pipeline's answer).
    struct Written: Sendable, Equatable {
        /// Bytes in the request body.
        var count: Int64
        /// CRC-32 of the body alone: the reply's `crc32` (§4.2, §7.3).
        var chunkCRC: UInt32
        /// CRC-32 of the block up to the end of this chunk, for the next ctx.
        var blockCRC: UInt32
        /// The block's SHA-1 when this chunk completed it (§7.1); nil otherwise.
        var sha1: [UInt8]?
        /// What the block's first bytes were sniffed as, when this chunk starts the block and
        /// holds the whole sniffing window (`BlockRecord.sniffedType`); nil otherwise.
        var sniffedType: String?? = nil
    }

    /// What the bytes of a replayed chunk came to.
    enum Replayed: Sendable, Equatable {
        /// The body was longer than what is left of the block.
        case tooLong
        /// The body had `length` bytes with CRC-32 `chunkCRC`; `matches` when they equal the stored
        /// bytes at the claimed offset.
        case bytes(length: Int64, chunkCRC: UInt32, matches: Bool)
    }

    /// What happened.
    enum Event: Sendable, Equatable {
        /// The index answered the rewind (compare-and-set).
        case rewound(Bool)
        /// The body was streamed into the blob.
        case written(Written)
        /// The body was compared with the stored bytes.
        case replayed(Replayed)
        /// The index recorded the block (`false`: its compare-and-set found the offset moved).
        case recorded(Bool)
        /// The step in progress threw; `superseded` when a newer request for the block took over
        /// (the request was cancelled).
        case failed(superseded: Bool)
    }

    /// How a failed request is cleaned up, so the blob stays what the index says.
    enum Undo: Sendable, Equatable {
        /// Nothing was written.
        case nothing
        /// Cut the blob back to the acknowledged offset (what this request appended is no one's).
        case cutBack(to: Int64)
        /// Remove the new blob: no row names it (mkblk).
        case discard
    }

    /// What the handler must do.
    enum Action: Sendable, Equatable {
        /// Move the incomplete block back from `from` to `to` (`BlockIndex.rewindBlock`, a
        /// compare-and-set); report ``Event/rewound(_:)``.
        case rewind(from: Int64, to: Int64, crc32: UInt32)
        /// Stream the body into the blob at `offset`; at most `capacity` bytes, else `overflow`;
        /// seal (fsync, SHA-1) if it reaches `blockSize`. Report ``Event/written(_:)``.
        case write(offset: Int64, blockSize: Int64, resumingCRC: UInt32, overflow: UpError)
        /// Read the body (at most `limit` bytes) and compare it with the stored bytes from
        /// `offset`; report ``Event/replayed(_:)``.
        case compare(offset: Int64, limit: Int64)
        /// Create the block's row holding its first chunk (mkblk); report ``Event/recorded(_:)``.
        case create(BlockRecord)
        /// Advance the row from `from` (compare-and-set) to `record`'s offset; report ``Event/recorded(_:)``.
        case advance(from: Int64, to: BlockRecord)
        /// Answer 200 with the ctx of `record` and this chunk's CRC.
        case reply(BlockRecord, chunkCRC: UInt32)
        /// Clean up, then fail: with `answer`, or with the error the failed step threw when nil.
        case undo(Undo, answer: UpError?)
    }

    private enum Phase: Sendable, Equatable {
        case rewinding(BlockRecord)
        case writing(BlockRecord)
        case recording(before: BlockRecord, after: BlockRecord, chunkCRC: UInt32)
        case replaying(BlockRecord, claim: Claim)
        case done
    }

    /// The block's blob.
    let blob: BlobID
    /// mkblk creates the row (in a blob no one else knows yet); bput advances it.
    let isNew: Bool
    private var phase: Phase

    private init(blob: BlobID, isNew: Bool, phase: Phase) {
        self.blob = blob
        self.isNew = isNew
        self.phase = phase
    }
}

extension BlockUpload {
    /// A chunk whose declared `Content-Length` already cannot fit: refused before anything is
    /// read or locked (400 for mkblk's first chunk, §4.1; 701 for bput, §4.2).
    static func refusal(declaredLength: Int64?, claim: Claim, isNew: Bool) -> UpError? {
        guard let declaredLength, declaredLength > claim.blockSize - claim.offset else { return nil }
        return isNew
            ? UpError(.badRequest, detail: "first chunk of \(declaredLength) bytes > blockSize \(claim.blockSize)")
            : UpError(.invalidContext, detail: "chunk of \(declaredLength) bytes overflows the block")
    }

    /// mkblk: a new block in the fresh `blob`, expiring at `expiresAt`.
    static func mkblk(blob: BlobID, blockSize: Int64, now: Int64, expiresAt: Int64) -> (BlockUpload, Action) {
        let record = BlockRecord(blob: blob, blockSize: blockSize, expiresAt: expiresAt, createdAt: now)
        let overflow = UpError(.badRequest, detail: "first chunk longer than blockSize \(blockSize)")
        return (
            BlockUpload(blob: blob, isNew: true, phase: .writing(record)),
            .write(offset: 0, blockSize: blockSize, resumingCRC: 0, overflow: overflow)
        )
    }

    /// bput: the chunk `claim`s, for `blob` whose row (read while this request holds the block's
    /// write lock) is `row`.
    static func bput(blob: BlobID, claim: Claim, row: BlockRecord?) -> (BlockUpload, Action) {
        var machine = BlockUpload(blob: blob, isNew: false, phase: .done)
        guard let row else { return (machine, refuse("block \(blob) unknown (never created or swept)")) }
        let stale = "stale ctx: block at \(row.offset)/\(row.blockSize), ctx at \(claim.offset)/\(claim.blockSize)"
        guard row.blockSize == claim.blockSize, row.offset >= claim.offset else { return (machine, refuse(stale)) }
        if row.offset == claim.offset {
            // Same offset, other bytes: this ctx belongs to a history the block was rewound away
            // from (a later ctx than the one the client resumed with). Its chunk would not follow.
            guard row.crc32 == claim.crc32 else { return (machine, refuse(stale + " (crc differs: rewound)")) }
            guard !row.isComplete else { return (machine, refuse("block \(blob) is already complete")) }
            machine.phase = .writing(row)
            return (machine, write(row))
        }
        if row.isComplete {
            // A complete block is never rewound — an mkfile may be assembling it — so its chunk is
            // compared with what is stored instead (replay).
            machine.phase = .replaying(row, claim: claim)
            return (machine, .compare(offset: claim.offset, limit: row.blockSize - claim.offset))
        }
        // The client resumes from an older, authentic ctx: it never got the reply for what came
        // after (killed mid-chunk). Carry on from its offset rather than make it resend the block.
        var rewound = row
        rewound.offset = claim.offset
        rewound.crc32 = claim.crc32
        machine.phase = .rewinding(rewound)
        return (machine, .rewind(from: row.offset, to: claim.offset, crc32: claim.crc32))
    }

    /// Applies `event`.
    mutating func handle(_ event: Event) -> Action {
        switch (phase, event) {
        case (_, .failed(let superseded)):
            let undo = pendingUndo
            phase = .done
            return .undo(
                undo, answer: superseded
                    ? UpError(.chunkSuperseded, detail: "chunk for block \(blob) superseded by a newer request") : nil)
        case (.rewinding(let record), .rewound(let moved)):
            guard moved else {
                phase = .done
                return Self.refuse("block \(blob) moved during the rewind")
            }
            phase = .writing(record)
            return Self.write(record)
        case (.writing(let record), .written(let written)):
            guard written.count > 0 else {
                // A chunk that carries nothing would only re-issue the same ctx; no SDK sends one.
                phase = .done
                return .undo(undo(from: record), answer: UpError(.badRequest, detail: "empty chunk"))
            }
            var after = record
            after.offset = record.offset + written.count
            after.crc32 = written.blockCRC
            after.sha1 = written.sha1
            if isNew { after.sniffedType = written.sniffedType }
            phase = .recording(before: record, after: after, chunkCRC: written.chunkCRC)
            return isNew ? .create(after) : .advance(from: record.offset, to: after)
        case (.recording(let before, let after, let chunkCRC), .recorded(let moved)):
            phase = .done
            guard moved else {
                // Only another node sharing the index gets here (this one holds the write lock).
                return .undo(
                    undo(from: before), answer: UpError(.invalidContext, detail: "block \(blob) moved on during the chunk"))
            }
            return .reply(after, chunkCRC: chunkCRC)
        case (.replaying(let record, let claim), .replayed(let replayed)):
            phase = .done
            return Self.replay(record, claim: claim, replayed)
        default:
            phase = .done
            return .undo(.nothing, answer: UpError(.internalError, detail: "block upload: \(event) out of order"))
        }
    }
}

extension BlockUpload {
    /// What undoes the step in progress: bytes may have been appended past the acknowledged
    /// offset once writing began; before that, nothing was written.
    private var pendingUndo: Undo {
        switch phase {
        case .writing(let record), .recording(let record, _, _): undo(from: record)
        case .rewinding, .replaying, .done: isNew ? .discard : .nothing
        }
    }

    /// The undo of a chunk written on top of `record`: remove a new block's blob (no row names
    /// it), else cut the blob back to what the index acknowledges.
    private func undo(from record: BlockRecord) -> Undo {
        isNew ? .discard : .cutBack(to: record.offset)
    }

    private static func write(_ record: BlockRecord) -> Action {
        .write(
            offset: record.offset, blockSize: record.blockSize, resumingCRC: record.crc32,
            overflow: UpError(
                .invalidContext, detail: "chunk overflows block \(record.blob) (\(record.blockSize - record.offset) bytes left)"))
    }

    private static func refuse(_ detail: String) -> Action {
        .undo(.nothing, answer: UpError(.invalidContext, detail: detail))
    }

    /// A chunk sent with an older ctx of a COMPLETE block: the client lost the replies for the
    /// chunks after that ctx and resends from what it holds. If its bytes equal the stored bytes
    /// at the ctx's offset, the answer is the ctx the block had after them (offset and CRC-32
    /// advanced over the chunk; the final ctx once the chunk reaches the end), as if the chunk
    /// had been written again — the block itself is left exactly as it is. The client then
    /// carries on chunk by chunk to the final ctx instead of redoing the whole 4 MiB block after
    /// a 701. Anything else — other bytes, nothing, a chunk past the block's end — is 701.
    private static func replay(_ record: BlockRecord, claim: Claim, _ replayed: Replayed) -> Action {
        let stale = refuse("stale ctx of complete block \(record.blob): chunk differs from the stored bytes")
        guard case .bytes(let length, let chunkCRC, let matches) = replayed, length > 0, matches else { return stale }
        var after = record
        after.offset = claim.offset + length
        after.crc32 = CRC32.combine(claim.crc32, chunkCRC, length: length)
        if after.offset < record.blockSize {
            after.sha1 = nil
        } else if after.crc32 != record.crc32 {
            return stale
        }
        return .reply(after, chunkCRC: chunkCRC)
    }
}
