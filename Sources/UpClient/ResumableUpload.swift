import NativeCrypto
import UpCore

/// The v1 resumable upload (qiniu-protocol.md §4) as a pure state machine (DESIGN.md habit 4):
/// no I/O, no clock. The executor asks ``nextAction()`` what to send, carries it out, and
/// reports the outcome with ``handle(_:)``.
///
/// Scheduling: the file is cut into 4 MiB blocks and each block into chunks of `chunkSize`
/// (any size; the last chunk of a block is whatever remains, so 1.5 MiB chunks make a block of
/// 1.5 + 1.5 + 1 MiB). Chunks of one block go strictly in order, one at a time (each bput needs
/// the previous ctx); up to `concurrency` blocks have a request in flight. A block already started
/// is continued before a new one is begun, so few blocks are half done at any time.
struct ResumableUpload: Sendable {
    /// The v1 block size, 4 MiB (§4).
    static let blockSize: Int64 = 4 << 20

    /// What to send next.
    enum Action: Sendable, Equatable {
        /// `POST /mkblk/<blockSize>` with the file bytes in `range` (the block's first chunk).
        case makeBlock(index: Int, blockSize: Int, range: Range<Int64>)
        /// `POST /bput/<context>/<offset>` with the file bytes in `range`.
        case putChunk(index: Int, context: String, offset: Int, range: Range<Int64>)
        /// `POST /mkfile/<fsize>` with these contexts, one per block in order.
        case makeFile(contexts: [String])
        /// Nothing to start: wait for a request in flight to finish.
        case wait
        /// The file is made.
        case finished
        /// Block `index` failed too often (crc mismatches or expired contexts); give up.
        case failed(index: Int, reason: String)
    }

    /// What happened to a request.
    enum Event: Sendable, Equatable {
        /// mkblk/bput of block `index` succeeded and its reply's crc32 matched: the block now
        /// holds `offset` bytes and continues with `context` (valid until `expiresAt`). `hash`
        /// carries the CRC-32 of the block's bytes so far and, once the block is complete, its
        /// SHA-1 (both of the bytes sent, from ``BlockHashes``).
        case chunkAccepted(index: Int, context: String, offset: Int, crc32: UInt32, expiresAt: Int64, hash: BlockHash)
        /// The chunk of block `index` was not stored; `retryable` (a crc mismatch, a request
        /// retried out) sends the same chunk again, otherwise the upload fails.
        case chunkFailed(index: Int, retryable: Bool)
        /// 701: the block's context is unknown or expired; upload the whole block again.
        case contextExpired(index: Int)
        /// mkfile succeeded.
        case fileMade
    }

    /// What the client hashed of a block's acknowledged bytes as it sent them.
    struct BlockHash: Sendable, Equatable {
        /// CRC-32 of the block's acknowledged bytes (a resume checks them against it).
        var crc32: UInt32
        /// SHA-1 of the whole block, once it is complete (the etag is made of these, §7.1).
        var sha1: [UInt8]?
    }

    /// One block's progress.
    struct Block: Sendable, Equatable, Codable {
        /// The ctx of the last acknowledged chunk; nil when nothing is acknowledged.
        var context: String?
        /// Bytes of the block acknowledged.
        var offset: Int
        /// crc32 of the last acknowledged chunk.
        var crc32: UInt32
        /// When ``context`` expires (unix seconds).
        var expiresAt: Int64
        /// CRC-32 of the block's acknowledged bytes (nil while there are none).
        var blockCRC32: UInt32?
        /// Hex SHA-1 of the bytes sent for the block, once it is complete.
        var sha1: String?
        /// Whether a request for this block is in flight (not persisted).
        var inFlight: Bool = false
        /// Resends of a chunk after a crc mismatch, and block redos after a 701.
        var failures: Int = 0

        /// A block with nothing uploaded.
        static let empty = Block(context: nil, offset: 0, crc32: 0, expiresAt: 0)

        private enum CodingKeys: String, CodingKey { case context, offset, crc32, expiresAt, blockCRC32, sha1 }
    }

    /// The file size.
    let fileSize: Int64
    /// Bytes per chunk, ≥ 1.
    let chunkSize: Int
    /// Blocks with a request in flight at most, ≥ 1.
    let concurrency: Int
    /// Failures tolerated per block before ``Action/failed(index:reason:)``.
    let maxFailures: Int
    /// Every block's progress, in file order.
    private(set) var blocks: [Block]
    private var made = false

    /// Creates the machine; `blocks` restores progress from a checkpoint (ignored unless it has
    /// one entry per block).
    init(fileSize: Int64, chunkSize: Int, concurrency: Int, maxFailures: Int = 3, blocks restored: [Block]? = nil) {
        self.fileSize = fileSize
        self.chunkSize = max(1, chunkSize)
        self.concurrency = max(1, concurrency)
        self.maxFailures = maxFailures
        let count = Int((fileSize + Self.blockSize - 1) / Self.blockSize)
        if let restored, restored.count == count {
            blocks = restored.map { var block = $0; block.inFlight = false; block.failures = 0; return block }
        } else {
            blocks = Array(repeating: .empty, count: count)
        }
    }

    /// Size of block `index` in bytes.
    func size(ofBlock index: Int) -> Int {
        Int(min(Self.blockSize, fileSize - Int64(index) * Self.blockSize))
    }

    /// Whether block `index` is fully acknowledged.
    func isDone(_ index: Int) -> Bool { blocks[index].offset == size(ofBlock: index) && blocks[index].context != nil }

    /// Bytes acknowledged over all blocks.
    var acknowledgedBytes: Int64 { blocks.reduce(0) { $0 + Int64($1.offset) } }

    /// The v1 etag of the bytes sent (§7.1), once every block is complete; nil before.
    var etag: String? {
        var digests: [[UInt8]] = []
        for block in blocks {
            guard let hex = block.sha1, let digest = Hex.decode(hex) else { return nil }
            digests.append(digest)
        }
        return Etag.fromBlockDigests(digests)
    }

    /// The next request to send; marks its block in flight.
    mutating func nextAction() -> Action {
        if made { return .finished }
        if let index = blocks.indices.first(where: { blocks[$0].failures > maxFailures }) {
            return .failed(index: index, reason: "block \(index) failed \(blocks[index].failures) times")
        }
        let inFlight = blocks.count { $0.inFlight }
        if inFlight == 0, blocks.indices.allSatisfy(isDone) {
            return .makeFile(contexts: blocks.map { $0.context ?? "" })
        }
        guard inFlight < concurrency else { return .wait }
        // A started block first, then the first untouched one.
        let started = blocks.indices.first { !blocks[$0].inFlight && blocks[$0].context != nil && !isDone($0) }
        let fresh = blocks.indices.first { !blocks[$0].inFlight && blocks[$0].context == nil }
        guard let index = started ?? fresh else { return .wait }
        blocks[index].inFlight = true
        let blockStart = Int64(index) * Self.blockSize
        let offset = blocks[index].offset
        let length = min(chunkSize, size(ofBlock: index) - offset)
        let range = (blockStart + Int64(offset))..<(blockStart + Int64(offset + length))
        if let context = blocks[index].context {
            return .putChunk(index: index, context: context, offset: offset, range: range)
        }
        return .makeBlock(index: index, blockSize: size(ofBlock: index), range: range)
    }

    /// Applies the outcome of a request.
    mutating func handle(_ event: Event) {
        switch event {
        case .chunkAccepted(let index, let context, let offset, let crc32, let expiresAt, let hash):
            blocks[index] = Block(
                context: context, offset: offset, crc32: crc32, expiresAt: expiresAt, blockCRC32: hash.crc32,
                sha1: hash.sha1.map(Hex.encode), inFlight: false, failures: blocks[index].failures)
        case .chunkFailed(let index, let retryable):
            blocks[index].inFlight = false
            blocks[index].failures += retryable ? 1 : maxFailures + 1
        case .contextExpired(let index):
            blocks[index] = Block(
                context: nil, offset: 0, crc32: 0, expiresAt: 0, inFlight: false, failures: blocks[index].failures + 1)
        case .fileMade:
            made = true
        }
    }
}
