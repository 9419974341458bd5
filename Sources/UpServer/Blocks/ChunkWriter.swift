import Basics
import HTTPKit
import NativeCrypto
import UpCore

/// Streams one v1 chunk (an mkblk or bput body, qiniu-protocol.md §4.1–4.2) into its block's
/// blob while computing the chunk's CRC-32, the block's running CRC-32 and (through
/// `BlockHashCache`) the block's SHA-1.
///
/// Memory: pieces from HTTPKit are gathered into a buffer of at most ``bufferLimit`` bytes and
/// appended when it fills, so a 4 MiB chunk is never held whole. MHD pieces are a few KiB; one
/// write (and one hop to the I/O queue) per piece would cost more than the copy.
///
/// Overlap: two buffers per chunk. While one is written, CRC'd and SHA-1'd on the I/O queue
/// (`BlockingWork`), the next fills from the socket; at most one flush is in flight, so writes
/// and hash updates stay in order. Every byte is CRC'd once, in the flush, while the buffer is
/// being hashed anyway; the block's CRC is combined from the chunk's.
///
/// Nothing here is acknowledged: the caller advances the index only after ``write`` returns —
/// which is only after the last flush finished, also when it throws — so bytes appended by a
/// request that then fails are an unacknowledged tail, truncated by the next append at the
/// acknowledged offset (`BlockStore.append`), and the hash cache rebuilds itself from the
/// acknowledged bytes when the next offset does not match its own.
struct ChunkWriter {
    /// Most bytes buffered before an append.
    static let bufferLimit = 256 * 1024

    /// What one chunk came to.
    struct Written: Equatable {
        /// Bytes in the request body.
        var count: Int64
        /// CRC-32 of this request body alone: the `crc32` of the reply (§4.2, §7.3).
        var chunkCRC: UInt32
        /// CRC-32 of the block's bytes up to the end of this chunk, for the next ctx.
        var blockCRC: UInt32
    }

    /// What a finished flush hands back: the CRC so far, and its buffer for reuse (no new
    /// allocation, and no page faults on fresh memory, per flush).
    private struct Flushed: Sendable {
        var crc: UInt32
        var buffer: [UInt8]
    }

    let store: any BlockStore
    let hashes: BlockHashCache
    let metrics: UpMetrics

    /// Appends `body` to `blob` starting at `offset`.
    ///
    /// - Parameters:
    ///   - body: The request body.
    ///   - blob: The block's blob.
    ///   - offset: The acknowledged length of the block (where this chunk starts).
    ///   - capacity: Most bytes the chunk may have (the rest of the block).
    ///   - resumingCRC: CRC-32 of the block's first `offset` bytes (from the ctx).
    ///   - overflow: What to throw when the body is longer than `capacity` — 400 for mkblk's
    ///     first chunk, 701 for bput (§4.1, §4.2).
    /// - Returns: Sizes and CRCs (an empty body is `BlockUpload`'s to refuse).
    /// - Throws: `overflow`, HTTPKit's body errors (413, disconnect), store errors.
    func write(
        _ body: RequestBodyStream, to blob: BlobID, at offset: Int64, capacity: Int64, resumingCRC: UInt32,
        overflow: UpError
    ) async throws -> Written {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(Self.bufferLimit)
        var spare: [UInt8] = []
        var crc: UInt32 = 0
        var position = offset
        var count: Int64 = 0
        var inFlight: Task<Flushed, any Error>?
        do {
            for try await piece in body {
                count += Int64(piece.count)
                // Checked before the piece is written: an oversized chunk leaves at most the
                // earlier pieces behind, as an unacknowledged tail.
                guard count <= capacity else { throw overflow }
                buffer.append(contentsOf: piece)
                if buffer.count >= Self.bufferLimit {
                    if let previous = inFlight {
                        inFlight = nil
                        (crc, spare) = try await Self.settle(previous)
                    }
                    inFlight = start(buffer, to: blob, at: position, crc: crc)
                    position += Int64(buffer.count)
                    swap(&buffer, &spare)
                    buffer.removeAll(keepingCapacity: true)
                    if buffer.capacity < Self.bufferLimit { buffer.reserveCapacity(Self.bufferLimit) }
                }
            }
            if let previous = inFlight {
                inFlight = nil
                (crc, spare) = try await Self.settle(previous)
            }
            if !buffer.isEmpty { (crc, _) = try await Self.settle(start(buffer, to: blob, at: position, crc: crc)) }
        } catch {
            // Never return while a write is running: the caller may release the blob's write
            // lock, and a retry must not race a stale write.
            if let previous = inFlight { _ = try? await previous.value }
            throw error
        }
        if count > 0 {
            metrics.bytesReceived.increment(by: Double(count))
            metrics.chunks.increment()
        }
        // Each byte is CRC'd once: the block's CRC is the resumed one extended by this chunk's
        // (for mkblk, resuming from 0 = no bytes, that is the chunk's own).
        let blockCRC = CRC32.combine(resumingCRC, crc, length: count)
        return Written(count: count, chunkCRC: crc, blockCRC: blockCRC)
    }

    /// Starts appending, CRC'ing and SHA-1'ing `bytes` on the I/O queue.
    private func start(_ bytes: [UInt8], to blob: BlobID, at position: Int64, crc: UInt32) -> Task<Flushed, any Error> {
        let store = self.store
        let hashes = self.hashes
        return Task {
            try await BlockingWork.run {
                _ = try store.append(bytes, to: blob, at: position)
                try hashes.update(blob, at: position, with: bytes, store: store)
                var running = CRC32(resuming: crc)
                running.update(bytes)
                return Flushed(crc: running.value, buffer: bytes)
            }
        }
    }

    private static func settle(_ task: Task<Flushed, any Error>) async throws -> (UInt32, [UInt8]) {
        let done = try await task.value
        return (done.crc, done.buffer)
    }

    /// Finishes a block that just became complete: its SHA-1 (from the running hash, §7.1) and
    /// an fsync (DESIGN.md "Acknowledged means stored": blocks are synced when they complete).
    /// With `syncEveryChunk` an incomplete block is synced too; otherwise returns `nil`.
    func seal(_ blob: BlobID, length: Int64, complete: Bool, syncEveryChunk: Bool) async throws -> [UInt8]? {
        guard complete || syncEveryChunk else { return nil }
        let store = self.store
        let hashes = self.hashes
        return try await BlockingWork.run {
            try store.sync(blob)
            return complete ? try hashes.finalize(blob, length: length, store: store) : nil
        }
    }
}
