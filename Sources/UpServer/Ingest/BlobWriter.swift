import Basics
import HTTPKit
import NativeOS
import UpCore

/// The one streaming write pipeline from request body to blob (issue 9 §3), used by v1 chunks,
/// v2 parts, form files and `/put` bodies: buffering, the blob layout, hashing in the same pass
/// as the write, and the fsync policy live here and nowhere else.
///
/// Memory and overlap: pieces from HTTPKit (a few KiB each) are gathered into a buffer of at
/// most `store.appendSize` bytes (``bufferLimit`` on disk, 512 KiB on S3); a full buffer is handed
/// to the writer's own serial lane on the blocking pool, which appends it, then updates every
/// digest asked for (CRC-32, MD5, etag block SHA-1s, a v1 block's running SHA-1: each route asks
/// only for what its protocol needs, `BlobTarget`) — while the next buffer fills from the socket.
/// The lane runs the flushes one at a time in order, so writes and digest updates stay in order,
/// and every byte is copied once (piece → buffer). On disk two flushes may be queued or running
/// (``flushesInFlight``): the body keeps flowing while the device finishes the last write, and the
/// lane's thread goes from one flush to the next without sleeping in between. Buffers take turns
/// and each has one owner at a time (a flush's buffer is moved to the I/O thread and back,
/// ``Handoff``), so no flush allocates: a buffer still shared when refilled would be reallocated
/// (1,567 of 8,640 flushes were in one `scripts/bench/upload --targets rss` run).
///
/// fsync policy (DESIGN.md "Acknowledged means stored"): a blob is fsynced when it is sealed —
/// a v1 block when a chunk completes it, a v2 part at its end, a form or `/put` blob when it
/// reaches 4 MiB and the last one at the end — i.e. before the reply that acknowledges it. The
/// one exception is the still-open block of a v1 chunk, fsynced only with `syncEveryChunk`.
///
/// Nothing here is acknowledged: a body that fails half-way leaves an unacknowledged tail (cut
/// back by the caller, or by the next append at the acknowledged offset) or new blobs no row
/// names (``abandon()`` removes them).
///
/// Not Sendable: one request owns it. Call ``write(_:)`` for each piece, then ``finish()`` once —
/// or ``abandon()`` after any failure.
final class BlobWriter {
    /// Most bytes gathered before one append, unless the store asks for another size
    /// (`BlockStore.appendSize`).
    static let bufferLimit = 256 * 1024

    /// Flushes queued or running at once on disk. A second one keeps the body flowing while the
    /// device finishes the first write (docs/ARCHITECTURE.md, "One write pipeline": about 6 % off
    /// the wall time of a v1 upload, CPU unchanged; a third measured no better). It costs one more
    /// buffer per body (256 KiB at most, sized by the body's length).
    static let flushesInFlight = 2

    private let target: BlobTarget
    private let sink: BlobSink
    /// Bytes gathered before one append (the store's `appendSize`).
    private let limit: Int
    /// ``flushesInFlight``, or 1 on a store other instances share: there the check before each
    /// append (`BlobTarget.beforeAppend`) must run right before its write, not one append earlier.
    private let depth: Int
    /// Runs this body's flushes one at a time, in order, on the blocking pool.
    private lazy var lane = BlockingExecutor()
    private var buffer: [UInt8] = []
    private var spares: [[UInt8]] = []
    /// Oldest first.
    private var inFlight: [(job: BlockingJob<Void>, handoff: Handoff)] = []
    private var head: [UInt8] = []
    /// Bytes taken so far.
    private(set) var count: Int64 = 0
    /// Bytes handed to the sink (the buffer holds the rest), for cutting at block boundaries.
    private var flushed: Int64 = 0
    /// Bytes the writer holds for its buffers (all of them), whatever they contain.
    var reservedBytes: Int { buffer.capacity + spares.reduce(0) { $0 + $1.capacity } }

    /// A writer for one body.
    ///
    /// - Parameters:
    ///   - target: Layout, limit and digests.
    ///   - store: Where the blobs live.
    ///   - hashes: Running SHA-1s of v1 blocks (used by `.block` targets only).
    ///   - syncEveryChunk: `UpServerConfiguration.syncEveryChunk`.
    init(_ target: BlobTarget, store: any BlockStore, hashes: BlockHashCache, syncEveryChunk: Bool) {
        self.target = target
        sink = BlobSink(target: target, store: store, hashes: hashes, syncEveryChunk: syncEveryChunk)
        limit = max(1, store.appendSize)
        depth = store.isShared ? 1 : Self.flushesInFlight
        reserveBuffer()
    }

    /// Streams `body` through ``write(_:)`` and ``finish()``; on failure, waits for the writes in
    /// flight (never returns while one runs: a retry must not race a stale write) and rethrows.
    func writeAll(_ body: RequestBodyStream) async throws -> BlobWritten {
        do {
            for try await piece in body { try await write(piece) }
            return try await finish()
        } catch {
            await settle()
            throw error
        }
    }

    /// Takes the next piece of the body.
    ///
    /// - Throws: `target.overflow` past the limit (checked before the piece is written); store errors.
    func write(_ piece: [UInt8]) async throws {
        guard !piece.isEmpty else { return }
        guard count + Int64(piece.count) <= target.limit else { throw target.overflow }
        count += Int64(piece.count)
        if head.count < MimeSniffer.windowSize { head += piece.prefix(MimeSniffer.windowSize - head.count) }
        var rest = piece[...]
        while !rest.isEmpty {
            // A `.blocks` buffer never straddles a 4 MiB boundary: each flush lands in one blob.
            let room = min(limit - buffer.count, Int(clamping: target.room(after: flushed + Int64(buffer.count))))
            let take = min(room, rest.count)
            buffer.append(contentsOf: rest.prefix(take))
            rest = rest.dropFirst(take)
            let closes = target.endsBlob(at: flushed + Int64(buffer.count))
            if buffer.count >= limit || closes { try await flush(closing: closes) }
        }
    }

    /// Writes what is buffered, seals per the policy and returns the body's description. The
    /// last append and the seal are one trip to the I/O executor: a small body (a form file, a
    /// chunk of a few KiB) makes just that one.
    func finish() async throws -> BlobWritten {
        try await settleThrowing()
        if !buffer.isEmpty { try await target.beforeAppend?() }
        let last = buffer
        buffer = []
        flushed += Int64(last.count)
        let sealed = try await BlockingWork.run { [sink, count] in
            if !last.isEmpty { try sink.append(last, closing: false) }
            return try sink.seal(count: count)
        }
        return BlobWritten(
            count: count, crc32: sealed.crc32, segments: sealed.segments, md5: sealed.md5, etag: sealed.etag,
            blockSHA1: sealed.blockSHA1, head: head)
    }

    /// After a failure: waits for the writes in flight, then removes every blob this writer
    /// created (none for a v1 chunk, whose caller cuts the block back). Best effort: the orphan
    /// sweep finds what is left.
    ///
    /// - Returns: The removal's error, for the caller to log.
    @discardableResult
    func abandon() async -> (any Error)? {
        await settle()
        let sink = self.sink
        do {
            try await BlockingWork.run { try sink.removeCreated() }
            return nil
        } catch {
            return error
        }
    }

    /// Hands the buffer to the sink's lane (once fewer than ``depth`` flushes are in flight); a
    /// spare becomes the buffer.
    private func flush(closing: Bool) async throws {
        while inFlight.count >= depth { try await settleOldest() }
        guard !buffer.isEmpty else { return }
        try await target.beforeAppend?()
        let handoff = Handoff(buffer)
        buffer = spares.popLast() ?? []
        let sink = self.sink
        flushed += Int64(handoff.bytes.count)
        inFlight.append((lane.start { try sink.append(handoff.bytes, closing: closing) }, handoff))
        buffer.removeAll(keepingCapacity: true)
        reserveBuffer()
    }

    /// Gives the empty buffer room for the next flush: ``limit`` bytes, or what is left of the
    /// body when the request said how long it is (`BlobTarget.expectedBytes`), so a small body
    /// allocates only what it brings. A body longer than it said just grows the buffer.
    private func reserveBuffer() {
        let left = target.bound - flushed
        let wanted = Int(clamping: min(Int64(limit), max(0, left)))
        if buffer.capacity < wanted { buffer.reserveCapacity(wanted) }
    }

    /// Waits for every flush in flight, oldest first; throws the first failure.
    private func settleThrowing() async throws {
        while !inFlight.isEmpty { try await settleOldest() }
    }

    /// Waits for the oldest flush; its buffer comes back as a spare, whether it failed or not.
    private func settleOldest() async throws {
        let (job, handoff) = inFlight.removeFirst()
        defer { spares.append(handoff.take()) }
        try await job.value()
    }

    /// Waits for every flush in flight, whatever their outcome.
    private func settle() async {
        while !inFlight.isEmpty { _ = try? await settleOldest() }
    }
}

/// A flush's buffer on its way to the I/O thread and back. The blocking job holds the box, not
/// the array, and the writer takes the array out once the flush is over: whenever the job's
/// closure is released (the pool thread may drop it after resuming the writer), the buffer has
/// one owner again and is refilled in place.
///
/// `@unchecked Sendable`: the I/O thread reads `bytes` only while its flush runs, and the writer
/// takes it only once that flush's job has ended (it fills other buffers meanwhile, never this one).
private final class Handoff: @unchecked Sendable {
    private(set) var bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The buffer, leaving the box empty.
    func take() -> [UInt8] {
        let taken = bytes
        bytes = []
        return taken
    }
}
