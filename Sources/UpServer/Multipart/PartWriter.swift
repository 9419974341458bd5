import NativeCrypto
import Synchronization
import UpCore

/// Writes one v2 part into a fresh blob while hashing it (qiniu-protocol.md §5, §7.2).
///
/// The handler collects body pieces into batches of ``batchSize`` on the async side and hands
/// each batch to ``write(_:)`` inside `BlockingWork`, so the disk write *and* the hashing (MD5
/// for `Content-MD5`/`md5`, SHA-1 per 4 MiB sub-block for the part digest) run off the
/// cooperative pool and the store opens the blob once per MiB, not once per socket read.
/// `Digest` and `EtagHasher` are `~Copyable` and not thread-safe; the `Mutex` owns them so the
/// writer can cross into GCD work items.
final class PartWriter: Sendable {
    /// Bytes gathered before one `append` (and one trip off the cooperative pool).
    static let batchSize = 1 << 20

    /// What a finished part is.
    struct Summary: Sendable, Equatable {
        /// Bytes written.
        var size: Int64
        /// Lower-case hex MD5 of the part (the reply's `md5`, §5).
        var md5: String
        /// Raw MD5, to compare with `Content-MD5`.
        var md5Bytes: [UInt8]
        /// The part's own v1 etag (§7.1), given to the client as the part `etag`.
        var etag: String
        /// The part digest of §7.2, kept so complete never re-reads a part.
        var digest: [UInt8]
    }

    private struct State: ~Copyable {
        var md5 = Digest(.md5)
        var etag = EtagHasher()
        var offset: Int64 = 0
    }

    /// The blob the part is written to.
    let blob: BlobID
    private let store: any BlockStore
    private let state = Mutex(State())

    private init(blob: BlobID, store: any BlockStore) {
        self.blob = blob
        self.store = store
    }

    /// Creates the blob. Blocking: call inside `BlockingWork.run`.
    static func create(in store: any BlockStore) throws -> PartWriter {
        PartWriter(blob: try store.create(), store: store)
    }

    /// Appends and hashes `bytes`. Blocking: call inside `BlockingWork.run`, one call at a time.
    func write(_ bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { return }
        try state.withLock { state in
            state.offset = try store.append(bytes, to: blob, at: state.offset)
            state.md5.update(bytes)
            state.etag.update(bytes)
        }
    }

    /// Syncs the blob ("acknowledged means stored", DESIGN.md: the part reply is an
    /// acknowledgement) and returns the digests. Blocking; call once, after the last `write`.
    func finish() throws -> Summary {
        try store.sync(blob)
        return state.withLock { state in
            var running = State()
            swap(&running, &state)
            let size = running.offset
            let md5 = running.md5.finalize()
            let result = running.etag.finalize()
            return Summary(
                size: size, md5: Hex.encode(md5), md5Bytes: md5, etag: result.etag,
                digest: result.partDigest)
        }
    }

    /// Removes the blob (the part was refused). Best effort: the orphan sweep finds leftovers.
    func discard() {
        try? store.remove(blob)
    }
}
