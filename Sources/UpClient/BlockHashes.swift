import NativeCrypto
import Synchronization

/// The running SHA-1 (for the etag, qiniu-protocol.md §7.1) and CRC-32 of each v1 block's
/// acknowledged bytes, fed with the very bytes each chunk request carried, once its reply
/// accepted them — so the local etag is the etag of what was sent, and no second pass over the
/// file is needed. A block sent as one chunk brings its SHA-1 along (``acceptWhole(_:crc:sha1:)``).
///
/// Chunks of one block go strictly in order with one in flight (§4), so each block's hash sees
/// its chunks in order; blocks hash in parallel (each has a lock of its own, so one block's
/// SHA-1 never waits for another's).
final class BlockHashes: Sendable {
    /// One block's hashes so far.
    private final class Running: Sendable {
        private struct State: ~Copyable {
            var sha1 = Digest(.sha1)
            var crc: UInt32 = 0
        }

        private let state = Mutex(State())

        /// Adds `bytes`, whose CRC-32 is `crc` (computed once, for the request); returns the
        /// CRC-32 of everything added.
        func add(_ bytes: [UInt8], crc: UInt32) -> UInt32 {
            state.withLock { state in
                state.sha1.update(bytes)
                state.crc = CRC32.combine(state.crc, crc, length: Int64(bytes.count))
                return state.crc
            }
        }

        /// The SHA-1 of everything added; ends this hash.
        func finish() -> [UInt8] {
            state.withLock { state in
                var done = Digest(.sha1)
                swap(&done, &state.sha1)
                return done.finalize()
            }
        }
    }

    private let blocks = Mutex<[Int: Running]>([:])

    /// Starts block `index` over: nothing acknowledged (a new block, or after a 701).
    func reset(_ index: Int) {
        _ = blocks.withLock { $0.removeValue(forKey: index) }
    }

    /// Block `index` was accepted as one chunk whose CRC-32 is `crc` and SHA-1 `sha1` (computed
    /// while it was read for sending): it is complete, nothing runs on for it.
    func acceptWhole(_ index: Int, crc: UInt32, sha1: [UInt8]) -> ResumableUpload.BlockHash {
        reset(index)
        return ResumableUpload.BlockHash(crc32: crc, sha1: sha1)
    }

    /// Adds the bytes of an accepted chunk of block `index` (`crc` is their CRC-32). Returns the
    /// CRC-32 of the block's acknowledged bytes and, when `completesBlock`, the block's SHA-1.
    func accept(_ index: Int, bytes: [UInt8], crc: UInt32, completesBlock: Bool) -> ResumableUpload.BlockHash {
        let running = blocks.withLock { blocks in
            if let running = blocks[index] { return running }
            let running = Running()
            blocks[index] = running
            return running
        }
        let blockCRC = running.add(bytes, crc: crc)
        guard completesBlock else { return ResumableUpload.BlockHash(crc32: blockCRC) }
        reset(index)
        return ResumableUpload.BlockHash(crc32: blockCRC, sha1: running.finish())
    }
}
