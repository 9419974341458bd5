import NativeCrypto
import UpCore

/// Streams the `file` part of a form upload (qiniu-protocol.md §6) into blobs while hashing it,
/// so no upload is ever held whole in memory (DESIGN.md: "hash and write them as they arrive").
///
/// The file is cut into 4 MiB blobs — the v1 block layout, one blob per etag block (§7.1) — so a
/// form object is the same kind of manifest as an mkfile object and a block's bytes are written
/// once. Incoming pieces are coalesced into writes of up to ``writeSize`` bytes: one hop to the
/// I/O queue per write rather than per (often tiny) network piece. Alongside, the v1 etag
/// (§7.1), the CRC-32 of the whole file (§7.3, for the `crc32` field) and the first
/// ``MimeSniffer/windowSize`` bytes (for `detectMime` / `mimeLimit`, §1.3) are computed.
///
/// Blobs are fsynced when they reach 4 MiB and when the file ends (DESIGN.md: blocks synced when
/// complete, objects when created). Every blob ever created is remembered, so ``discard()`` can
/// remove them all when the upload fails before it became an object.
///
/// Not Sendable: one request's handler owns it.
final class FormFileSink {
    /// Largest single append.
    static let writeSize = 256 * 1024

    /// What the finished file is.
    struct Result: Sendable {
        /// The blobs, in order (none for an empty file).
        var segments: [Segment]
        /// The v1 etag (§7.1).
        var etag: String
        /// CRC-32 of the whole file (§7.3).
        var crc32: UInt32
        /// Bytes.
        var size: Int64
        /// The first bytes, for ``MimeSniffer``.
        var head: [UInt8]
    }

    private let store: any BlockStore
    private let syncEveryWrite: Bool
    private var hasher = EtagHasher()
    private var crc = CRC32()
    private var head: [UInt8] = []
    private var finished: [Segment] = []
    private var current: (blob: BlobID, length: Int64)?
    private var pending: [UInt8] = []
    /// Bytes received so far.
    private(set) var size: Int64 = 0
    /// Every blob created, finished or not, for ``discard()``.
    private(set) var createdBlobs: [BlobID] = []

    /// - Parameters:
    ///   - store: Where the blobs go.
    ///   - syncEveryWrite: fsync after every write too (`UpServerConfiguration.syncEveryChunk`).
    init(store: any BlockStore, syncEveryWrite: Bool) {
        self.store = store
        self.syncEveryWrite = syncEveryWrite
    }

    /// Takes the next piece of the file.
    ///
    /// - Throws: `BlockStoreError` from the store.
    func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        hasher.update(bytes)
        crc.update(bytes)
        if head.count < MimeSniffer.windowSize { head += bytes.prefix(MimeSniffer.windowSize - head.count) }
        size += Int64(bytes.count)
        var rest = bytes[...]
        while !rest.isEmpty {
            let used = (current?.length ?? 0) + Int64(pending.count)
            let take = Int(min(Int64(QiniuBlock.size) - used, Int64(rest.count)))
            pending += rest.prefix(take)
            rest = rest.dropFirst(take)
            let blockFull = used + Int64(take) == Int64(QiniuBlock.size)
            if blockFull || pending.count >= Self.writeSize { try await flush(closingBlock: blockFull) }
        }
    }

    /// Writes what is pending, syncs the last blob and returns the file's description.
    ///
    /// Call once, after the last ``write(_:)``.
    /// - Throws: `BlockStoreError` from the store.
    func finish() async throws -> Result {
        if !pending.isEmpty || current != nil { try await flush(closingBlock: true) }
        var done = EtagHasher()
        swap(&done, &hasher)
        let etag = done.finalize().etag
        return Result(segments: finished, etag: etag, crc32: crc.value, size: size, head: head)
    }

    /// Removes every blob this sink created; best effort (the orphan sweep finds what is left).
    ///
    /// - Returns: The error, if removing failed, for the caller to log.
    @discardableResult
    func discard() async -> (any Error)? {
        let blobs = createdBlobs
        createdBlobs = []
        guard !blobs.isEmpty else { return nil }
        let store = self.store
        do {
            try await BlockingWork.run { for blob in blobs { try store.remove(blob) } }
            return nil
        } catch {
            return error
        }
    }

    /// Appends `pending` to the current blob (creating one first if needed); `closingBlock`
    /// syncs it and moves it to the finished segments.
    private func flush(closingBlock: Bool) async throws {
        let store = self.store
        if current == nil {
            let blob = try await BlockingWork.run { try store.create() }
            createdBlobs.append(blob)
            current = (blob, 0)
        }
        guard let (blob, offset) = current else { return }
        let bytes = pending
        pending = []
        let sync = closingBlock || syncEveryWrite
        let length = try await BlockingWork.run { () throws -> Int64 in
            let length = bytes.isEmpty ? offset : try store.append(bytes, to: blob, at: offset)
            if sync { try store.sync(blob) }
            return length
        }
        if closingBlock {
            finished.append(Segment(blob: blob, length: length))
            current = nil
        } else {
            current = (blob, length)
        }
    }
}
